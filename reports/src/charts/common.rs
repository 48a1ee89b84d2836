//! What every chart shares: size, colours, fault bands, and thinning of dense point clouds.

use crate::error::ReportError;
use lockpick_checker::fault_verbs::{role, Role};
use lockpick_checker::faults::FaultWindow;
use lockpick_checker::history::F;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::collections::HashSet;
use std::fmt::Display;

/// Width of every chart in pixels; the page is laid out for it.
pub const CHART_WIDTH: u32 = 1100;

pub const OK: RGBColor = RGBColor(46, 125, 50);
pub const FAIL: RGBColor = RGBColor(239, 108, 0);
pub const INFO: RGBColor = RGBColor(198, 40, 40);
pub const HOLD: RGBColor = RGBColor(66, 133, 244);
pub const HOLD_LOST: RGBColor = RGBColor(255, 167, 38);
pub const VIOLATION: RGBColor = RGBColor(229, 57, 53);
pub const GREY: RGBColor = RGBColor(158, 158, 158);

/// The chart type every time-based chart uses: seconds on x, f64 on y.
pub type Chart<'a, 'b, Y> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, Y>>;

/// The timeline's chart: seconds on x, lanes on y (the processes' and the servers').
pub type Tl<'a, 'b> = Chart<'a, 'b, RangedCoordf64>;

/// `svg` as wide as its container: the fixed width and height plotters writes give way to
/// its viewBox, so a chart shrinks on a laptop instead of scrolling sideways.
pub fn responsive(svg: String) -> String {
    let Some(start) = svg.find("<svg ") else {
        return svg;
    };
    let Some(open_end) = svg[start..].find('>').map(|e| start + e) else {
        return svg;
    };
    let tag = &svg[start..open_end];
    let mut out = String::with_capacity(svg.len() + 32);
    out.push_str(&svg[..start]);
    let kept: Vec<&str> = tag
        .split(' ')
        .filter(|a| !a.starts_with("width=") && !a.starts_with("height="))
        .collect();
    out.push_str(&kept.join(" "));
    out.push_str(r#" width="100%""#);
    out.push_str(&svg[open_end..]);
    out
}

/// Converts a plotters error (generic over the backend's error) into ours.
pub fn drawn<T, E: Display>(r: Result<T, E>) -> Result<T, ReportError> {
    r.map_err(|e| ReportError::Chart(e.to_string()))
}

pub fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// Colour of a fault band, by the verb that opened it: the band the checker's fault table
/// gives it.
pub fn fault_color(f: F) -> RGBAColor {
    match role(f) {
        Role::Opens(o) => RGBColor(o.band.r, o.band.g, o.band.b).mix(o.band.alpha),
        // No window opens at these (windows come from the table's openers): a neutral grey.
        Role::Client | Role::Closes => RGBColor(120, 144, 156).mix(0.20),
    }
}

/// Shades each fault window over the whole height `[y0, y1]` of a chart. A client crash, an
/// instant, is a thin dark line.
pub fn fault_bands<Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<RangedCoordf64, Y>>,
    faults: &[FaultWindow],
    y0: Y::ValueType,
    y1: Y::ValueType,
    x_range: (f64, f64),
) -> Result<(), ReportError>
where
    Y: Ranged,
    Y::ValueType: Clone + 'static,
{
    let (lo, hi) = x_range;
    let min_width = (hi - lo) / CHART_WIDTH as f64;
    let bands = faults.iter().filter_map(|w| {
        let (a, b) = (secs(w.start_ns), secs(w.end_ns));
        if b < lo || a > hi {
            return None;
        }
        let (a, b) = (a.max(lo), b.min(hi).max(a.max(lo) + min_width));
        let style = if w.is_instant() {
            RGBColor(33, 33, 33).mix(0.7).filled()
        } else {
            fault_color(w.f).filled()
        };
        Some(Rectangle::new([(a, y0.clone()), (b, y1.clone())], style))
    });
    drawn(chart.draw_series(bands))?;
    Ok(())
}

/// Keeps one point per `cell`×`cell`-pixel square per series key: a dense cloud of 100k
/// latencies draws the same picture with a few thousand circles.
pub struct Thinner<K> {
    seen: HashSet<(K, i32, i32)>,
    cell: i32,
}

impl<K: std::hash::Hash + Eq> Thinner<K> {
    pub fn new(cell: i32) -> Thinner<K> {
        Thinner {
            seen: HashSet::new(),
            cell: cell.max(1),
        }
    }

    /// True the first time a point of `key` lands in its pixel cell.
    pub fn keep(&mut self, key: K, (x, y): (i32, i32)) -> bool {
        self.seen
            .insert((key, x.div_euclid(self.cell), y.div_euclid(self.cell)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_fault_band_keeps_its_colour_and_opacity() {
        // The charts' SVG carries these numbers: a change here changes every report.
        let bands = [
            (F::Partition, (142, 36, 170), 0.16),
            (F::Slow, (253, 216, 53), 0.30),
            (F::Pause, (255, 152, 0), 0.20),
            (F::Crash, (97, 97, 97), 0.20),
            (F::Clock, (120, 144, 156), 0.20),
            (F::Failover, (198, 40, 40), 0.14),
        ];
        for (f, (r, g, b), alpha) in bands {
            assert_eq!(fault_color(f), RGBAColor(r, g, b, alpha), "{f}");
        }
        let openers = F::ALL
            .iter()
            .filter(|f| matches!(role(**f), Role::Opens(_)));
        assert_eq!(
            openers.count(),
            bands.len(),
            "an opener without its colour here"
        );
    }
}
