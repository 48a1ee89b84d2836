//! The benchmark's two charts: grants per second and acquire latency, by client count, one
//! line per lock, both on log scales (the locks differ by orders of magnitude).

use super::{BenchPoint, BenchRecord};
use crate::charts::{drawn, CHART_WIDTH};
use crate::error::ReportError;
use plotters::prelude::*;

/// Grants per second against clients.
pub fn handoff_svg(record: &BenchRecord) -> Result<String, ReportError> {
    lines_svg(
        record,
        "lock grants per second (no hold, no think time)",
        "grants/s",
        |p| Some(p.grants_per_sec()).filter(|v| *v > 0.0),
    )
}

/// Acquire latency p50 (solid) against clients; p99 is in the table.
pub fn latency_svg(record: &BenchRecord) -> Result<String, ReportError> {
    lines_svg(record, "acquire latency p50 (ms)", "ms", |p| {
        p.acquire_p50_ms
    })
}

/// A colour per lock, stable by its position.
fn color(i: usize) -> RGBColor {
    const PALETTE: [RGBColor; 10] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
    ];
    PALETTE[i % PALETTE.len()]
}

fn lines_svg(
    record: &BenchRecord,
    caption: &str,
    y_desc: &str,
    value: impl Fn(&BenchPoint) -> Option<f64>,
) -> Result<String, ReportError> {
    let mut rows: Vec<&str> = Vec::new();
    for p in &record.points {
        if !rows.contains(&p.row.as_str()) {
            rows.push(&p.row);
        }
    }
    let values: Vec<f64> = record.points.iter().filter_map(&value).collect();
    let lo = values
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .max(1e-3);
    let hi = values.iter().copied().fold(0.0, f64::max).max(lo * 10.0);
    let max_clients = record.clients.iter().copied().max().unwrap_or(1).max(2) as f64;
    let mut svg = String::new();
    {
        let height = 320 + 18 * rows.len() as u32 / 2;
        let root = SVGBackend::with_string(&mut svg, (CHART_WIDTH, height)).into_drawing_area();
        drawn(root.fill(&WHITE))?;
        let mut chart = drawn(
            ChartBuilder::on(&root)
                .margin(10)
                .caption(caption, ("sans-serif", 14).into_font())
                .x_label_area_size(30)
                .y_label_area_size(70)
                .build_cartesian_2d(
                    (1f64..max_clients * 1.2).log_scale(),
                    (lo / 1.5..hi * 1.5).log_scale(),
                ),
        )?;
        drawn(
            chart
                .configure_mesh()
                .x_desc("contending clients")
                .y_desc(y_desc)
                .light_line_style(RGBColor(238, 238, 238))
                .draw(),
        )?;
        for (i, row) in rows.iter().enumerate() {
            let points: Vec<(f64, f64)> = record
                .points
                .iter()
                .filter(|p| p.row == *row && p.error.is_none())
                .filter_map(|p| Some((p.clients as f64, value(p)?)))
                .collect();
            if points.is_empty() {
                continue;
            }
            let c = color(i);
            drawn(chart.draw_series(LineSeries::new(points.clone(), c.stroke_width(2))))?
                .label(*row)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2))
                });
            drawn(chart.draw_series(points.iter().map(|&xy| Circle::new(xy, 3, c.filled()))))?;
        }
        drawn(
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(RGBColor(200, 200, 200))
                .position(SeriesLabelPosition::UpperRight)
                .draw(),
        )?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(row: &str, clients: usize, grants: u64) -> BenchPoint {
        BenchPoint {
            row: row.into(),
            lock: row.into(),
            library: None,
            clients,
            workload_ms: 1000,
            grants,
            failed: 0,
            unknown: 0,
            acquire_p50_ms: Some(1.5),
            acquire_p99_ms: Some(4.0),
            server_cpu_ms: Some(100),
            verdict: "valid".into(),
            run: "x".into(),
            error: None,
        }
    }

    #[test]
    fn draws_one_line_per_lock_and_the_markdown_lists_every_point() {
        let record = BenchRecord {
            v: super::super::BENCH_VERSION,
            started: "20261125T000000Z".into(),
            lockpick_version: "0.1.0".into(),
            matrix: "m.toml".into(),
            seed: 1,
            duration_ms: 1000,
            clients: vec![1, 4],
            machine: "2 cores".into(),
            points: vec![
                point("redis", 1, 900),
                point("redis", 4, 800),
                point("etcd", 1, 300),
                point("etcd", 4, 0),
            ],
            command: "lockpick bench".into(),
        };
        let svg = handoff_svg(&record).unwrap();
        assert!(svg.contains("redis") && svg.contains("etcd"));
        let md = super::super::bench_markdown(&record, "");
        assert!(md.contains("| redis | 4 | 800 |"), "{md}");
        assert!(
            md.contains("| etcd | 1 | 300 | 1.50 | 4.00 | 0.333 |"),
            "{md}"
        );
        // No grant: no CPU per grant.
        assert!(md.contains("| etcd | 4 | 0 | 1.50 | 4.00 | — |"), "{md}");
    }
}
