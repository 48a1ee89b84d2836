//! Latency over time: one small chart per operation type, each op a dot coloured by its
//! outcome, on a log scale, with fault bands.

use super::common::{drawn, fault_bands, responsive, secs, Thinner, CHART_WIDTH, FAIL, INFO, OK};
use crate::error::ReportError;
use crate::view::{Outcome, RunView};
use lockpick_checker::history::F;
use plotters::prelude::*;

/// Below this many ops every one is drawn; above, one dot per cell of 4×4 pixels per outcome
/// (8×8, 16×16 if that still leaves more than [`MAX_DOTS`]), which draws the same picture with
/// a bounded number of circles.
const DRAW_ALL_BELOW: usize = 1500;
const MAX_DOTS: usize = 2500;

/// The latency chart of the operations `f` of `view`; `None` when there are none.
pub fn latency_svg(view: &RunView, f: F) -> Result<Option<String>, ReportError> {
    let ops: Vec<_> = view.ops.iter().filter(|o| o.f == f).collect();
    if ops.is_empty() {
        return Ok(None);
    }
    let max = ops.iter().map(|o| o.latency_ms()).fold(1.0f64, f64::max) * 1.5;
    let lo_ms = floor_ms(&ops.iter().map(|o| o.latency_ms()).collect::<Vec<_>>());
    let hi = secs(view.end_ns).max(0.001);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (CHART_WIDTH, 230)).into_drawing_area();
        drawn(root.fill(&WHITE))?;
        let mut chart = drawn(
            ChartBuilder::on(&root)
                .margin(8)
                .caption(
                    format!("{f} latency (ms, log scale)"),
                    ("sans-serif", 14).into_font(),
                )
                .x_label_area_size(30)
                .y_label_area_size(70)
                .build_cartesian_2d(0f64..hi, (lo_ms..max).log_scale()),
        )?;
        drawn(
            chart
                .configure_mesh()
                .x_desc("time (s)")
                .y_labels(6)
                .light_line_style(RGBColor(238, 238, 238))
                .draw(),
        )?;
        fault_bands(&mut chart, &view.faults, lo_ms, max, (0.0, hi))?;
        let draw_all = ops.len() < DRAW_ALL_BELOW;
        let mut series = Vec::new();
        for cell in [4, 8, 16, 32] {
            let mut thin = Thinner::new(cell);
            series.clear();
            // Ok first so the rarer fail and info dots are drawn over them.
            for outcome in [Outcome::Ok, Outcome::Fail, Outcome::Info] {
                let mut points = Vec::new();
                for o in ops.iter().filter(|o| o.outcome == outcome) {
                    let p = (secs(o.invoke_ns), o.latency_ms().max(lo_ms));
                    if draw_all || thin.keep(outcome, chart.backend_coord(&p)) {
                        points.push(p);
                    }
                }
                series.push((outcome, points));
            }
            if draw_all || series.iter().map(|(_, p)| p.len()).sum::<usize>() <= MAX_DOTS {
                break;
            }
        }
        for (outcome, points) in series {
            let color = match outcome {
                Outcome::Ok => OK.mix(0.6),
                Outcome::Fail => FAIL.mix(0.9),
                Outcome::Info => INFO.mix(0.9),
            };
            let r = if outcome == Outcome::Ok { 2 } else { 3 };
            drawn(
                chart.draw_series(
                    points
                        .into_iter()
                        .map(|p| Circle::new(p, r, color.filled())),
                ),
            )?;
        }
        drawn(root.present())?;
    }
    Ok(Some(responsive(svg)))
}

/// The bottom of the log axis: a power of ten at or below the first percentile of
/// `latencies` (and at most 0.05 ms), so that fast operations (a loopback write takes
/// 0.02 ms) are drawn where they are, not piled on the floor. Never below 0.1 µs.
fn floor_ms(latencies: &[f64]) -> f64 {
    let mut positive: Vec<f64> = latencies.iter().copied().filter(|l| *l > 0.0).collect();
    positive.sort_by(f64::total_cmp);
    let p1 = positive.get(positive.len() / 100).copied().unwrap_or(0.05);
    10f64.powf(p1.min(0.05).log10().floor()).max(1e-4)
}

#[cfg(test)]
mod tests {
    use super::floor_ms;

    #[test]
    fn the_floor_is_below_the_first_percentile_of_fast_operations() {
        assert_eq!(
            floor_ms(&[1.0, 2.0, 3.0]),
            0.01,
            "at most 0.05 ms, a power of ten"
        );
        let fast: Vec<f64> = (0..1000).map(|i| 0.02 + f64::from(i) * 1e-4).collect();
        assert!(floor_ms(&fast) <= 0.02);
        assert!((floor_ms(&[0.0, 0.003]) - 0.001).abs() < 1e-12);
        assert_eq!(floor_ms(&[]), 0.01);
        assert!((floor_ms(&[1e-9]) - 1e-4).abs() < 1e-12);
    }
}
