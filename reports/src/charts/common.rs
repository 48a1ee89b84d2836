//! What every chart shares: size, colours, fault bands, and thinning of dense point clouds.

use crate::error::ReportError;
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

/// Converts a plotters error (generic over the backend's error) into ours.
pub fn drawn<T, E: Display>(r: Result<T, E>) -> Result<T, ReportError> {
    r.map_err(|e| ReportError::Chart(e.to_string()))
}

pub fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// Colour of a fault band, by the verb that opened it.
pub fn fault_color(f: F) -> RGBAColor {
    match f {
        F::Pause => RGBColor(255, 152, 0).mix(0.20),
        F::Partition => RGBColor(142, 36, 170).mix(0.16),
        F::Slow => RGBColor(253, 216, 53).mix(0.30),
        F::Crash => RGBColor(97, 97, 97).mix(0.20),
        F::Failover => RGBColor(198, 40, 40).mix(0.14),
        _ => RGBColor(120, 144, 156).mix(0.20),
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
