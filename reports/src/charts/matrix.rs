//! The safety matrix's charts, one set per fault column: a strip plot of each row's times to
//! first violation (one dot per run), and bars of availability and acquire latency per row.

use super::common::{drawn, GREY, HOLD, OK, VIOLATION};
use crate::error::ReportError;
use plotters::prelude::*;

/// Width of a matrix chart: three sit side by side under a column's heading.
const WIDTH: u32 = 360;

fn height(rows: usize) -> u32 {
    60 + 18 * rows.max(1) as u32
}

/// A horizontal chart with one band per row (row 0 on top) and `x` from 0 to `max`.
fn frame(
    svg: &mut String,
    rows: &[String],
    caption: &str,
    max: f64,
    draw: impl FnOnce(
        &mut ChartContext<
            '_,
            SVGBackend<'_>,
            Cartesian2d<
                plotters::coord::types::RangedCoordf64,
                plotters::coord::types::RangedCoordf64,
            >,
        >,
    ) -> Result<(), ReportError>,
) -> Result<(), ReportError> {
    let n = rows.len().max(1) as f64;
    let root = SVGBackend::with_string(svg, (WIDTH, height(rows.len()))).into_drawing_area();
    drawn(root.fill(&WHITE))?;
    let mut chart = drawn(
        ChartBuilder::on(&root)
            .margin(6)
            .margin_right(18)
            .caption(caption, ("sans-serif", 12).into_font())
            .x_label_area_size(22)
            .y_label_area_size(110)
            .build_cartesian_2d(0f64..max, 0f64..n),
    )?;
    let label = |y: &f64| {
        // Band i spans [n-1-i, n-i]: its label sits at the middle.
        let i = (n - y - 0.5).round();
        if (y.fract() - 0.5).abs() < 1e-6 && i >= 0.0 && (i as usize) < rows.len() {
            rows[i as usize].clone()
        } else {
            String::new()
        }
    };
    drawn(
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(rows.len() * 2 + 1)
            .y_label_formatter(&label)
            .light_line_style(RGBColor(238, 238, 238))
            .x_labels(5)
            .draw(),
    )?;
    draw(&mut chart)?;
    drawn(root.present())?;
    Ok(())
}

/// Row `i`'s band centre.
fn band(rows: usize, i: usize) -> f64 {
    rows as f64 - i as f64 - 0.5
}

/// Times to first violation, in seconds from the workload's start, per row (one dot per run
/// that had a violation).
pub fn first_violation_strip_svg(
    rows: &[String],
    times_s: &[Vec<f64>],
) -> Result<String, ReportError> {
    let max = times_s.iter().flatten().copied().fold(1.0f64, f64::max) * 1.1;
    let mut svg = String::new();
    frame(
        &mut svg,
        rows,
        "time to first violation (s), one dot per run",
        max,
        |chart| {
            for (i, ts) in times_s.iter().enumerate() {
                let y = band(rows.len(), i);
                // Dots of one row are spread a little up and down so equal times stay visible.
                let dots = ts.iter().enumerate().map(|(k, &t)| {
                    let dy = ((k % 5) as f64 - 2.0) * 0.08;
                    Circle::new((t, y + dy), 4, VIOLATION.mix(0.8).filled())
                });
                drawn(chart.draw_series(dots))?;
            }
            Ok(())
        },
    )?;
    Ok(svg)
}

/// Share of acquires that succeeded, per row, 0 to 100 %; `None` draws no bar.
pub fn availability_svg(rows: &[String], percent: &[Option<f64>]) -> Result<String, ReportError> {
    let mut svg = String::new();
    frame(
        &mut svg,
        rows,
        "availability: acquires ok / tried (%)",
        100.0,
        |chart| {
            let bars = percent.iter().enumerate().filter_map(|(i, p)| {
                let y = band(rows.len(), i);
                p.map(|p| Rectangle::new([(0.0, y - 0.35), (p, y + 0.35)], OK.mix(0.8).filled()))
            });
            drawn(chart.draw_series(bars))?;
            Ok(())
        },
    )?;
    Ok(svg)
}

/// Acquire latency per row: p50 as a solid bar, p99 as a thin grey one behind it (ms).
pub fn latency_bars_svg(
    rows: &[String],
    p50_p99: &[Option<(f64, f64)>],
) -> Result<String, ReportError> {
    let max = p50_p99
        .iter()
        .flatten()
        .map(|(_, p99)| *p99)
        .fold(1.0f64, f64::max)
        * 1.1;
    let mut svg = String::new();
    frame(
        &mut svg,
        rows,
        "acquire latency (ms): p50 bar, p99 line",
        max,
        |chart| {
            for (i, v) in p50_p99.iter().enumerate() {
                let Some((p50, p99)) = v else { continue };
                let y = band(rows.len(), i);
                drawn(chart.draw_series(std::iter::once(Rectangle::new(
                    [(0.0, y - 0.08), (*p99, y + 0.08)],
                    GREY.filled(),
                ))))?;
                drawn(chart.draw_series(std::iter::once(Rectangle::new(
                    [(0.0, y - 0.3), (*p50, y + 0.3)],
                    HOLD.mix(0.85).filled(),
                ))))?;
            }
            Ok(())
        },
    )?;
    Ok(svg)
}
