//! Fencing tokens the resource accepted, over time: a healthy run climbs; a stale write is a
//! red dot below the highest token accepted before it, joined to it by a red line. With many
//! locks every lock's tokens are drawn as one series (a stale write is still measured against
//! its own lock's resource), so the chart stays one chart whatever the number of locks.

use super::common::{drawn, fault_bands, responsive, secs, Thinner, CHART_WIDTH, HOLD, VIOLATION};
use crate::error::ReportError;
use crate::view::RunView;
use plotters::prelude::*;

/// The token chart of `view`; `None` when no write with a token was accepted.
pub fn tokens_svg(view: &RunView) -> Result<Option<String>, ReportError> {
    if view.accepted.is_empty() {
        return Ok(None);
    }
    let lo_t = view.accepted.iter().map(|w| w.token).min().unwrap_or(0) as f64;
    let hi_t = view.accepted.iter().map(|w| w.token).max().unwrap_or(0) as f64;
    let pad = ((hi_t - lo_t) * 0.05).max(1.0);
    let (y0, y1) = (lo_t - pad, hi_t + pad);
    let hi = secs(view.end_ns).max(0.001);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (CHART_WIDTH, 260)).into_drawing_area();
        drawn(root.fill(&WHITE))?;
        let mut chart = drawn(
            ChartBuilder::on(&root)
                .margin(8)
                .caption(
                    if view.locks > 1 {
                        format!(
                            "fencing tokens accepted by the resources of {} locks (one series)",
                            view.locks
                        )
                    } else {
                        "fencing tokens accepted by the resource".to_owned()
                    },
                    ("sans-serif", 14).into_font(),
                )
                .x_label_area_size(30)
                .y_label_area_size(70)
                .build_cartesian_2d(0f64..hi, y0..y1),
        )?;
        drawn(
            chart
                .configure_mesh()
                .x_desc("time (s)")
                .y_desc("token")
                .y_label_formatter(&|t| format!("{t:.0}"))
                .light_line_style(RGBColor(238, 238, 238))
                .draw(),
        )?;
        fault_bands(&mut chart, &view.faults, y0, y1, (0.0, hi))?;
        let mut thin = Thinner::new(3);
        let mut points = Vec::new();
        let mut stale = Vec::new();
        for w in &view.accepted {
            let p = (secs(w.at_ns), w.token as f64);
            if w.stale {
                stale.push((p, w.max_before.unwrap_or(w.token) as f64));
            } else if view.accepted.len() < 1500 || thin.keep((), chart.backend_coord(&p)) {
                points.push(p);
            }
        }
        drawn(
            chart.draw_series(
                points
                    .into_iter()
                    .map(|p| Circle::new(p, 2, HOLD.mix(0.8).filled())),
            ),
        )?;
        for ((x, t), max) in stale {
            drawn(chart.draw_series(std::iter::once(PathElement::new(
                vec![(x, max), (x, t)],
                ShapeStyle::from(&VIOLATION).stroke_width(2),
            ))))?;
            drawn(chart.draw_series(std::iter::once(Circle::new((x, t), 5, VIOLATION.filled()))))?;
        }
        drawn(root.present())?;
    }
    Ok(Some(responsive(svg)))
}
