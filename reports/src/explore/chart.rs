//! The chart of what the search tried: one column per fault kind, the fault's size as a
//! multiple of the lease on a log scale (0.1× to 3×; faults without a size in a band below),
//! one dot per fault of each run, coloured by what that run found. Plain SVG, drawn here.

use lockpick_store::explore::{Found, Try};
use std::fmt::Write as _;

const W: f64 = 900.0;
const H: f64 = 340.0;
const LEFT: f64 = 60.0;
const TOP: f64 = 16.0;
/// The plot's bottom; the no-size band is below it.
const BOTTOM: f64 = 270.0;
const LO: f64 = 0.1;
const HI: f64 = 3.0;

/// The colour of what a run found.
pub fn colour(found: Found, error: bool) -> &'static str {
    if error {
        return "#9e9e9e";
    }
    match found {
        Found::LockBug => "#c62828",
        Found::Kleppmann => "#ef6c00",
        Found::Clock | Found::NodeRestart => "#8e24aa",
        Found::Nothing => "#2e7d32",
    }
}

fn y_of(factor: f64) -> f64 {
    let f = factor.clamp(LO * 0.5, HI * 1.5);
    let t = (f.ln() - LO.ln()) / (HI.ln() - LO.ln());
    BOTTOM - t * (BOTTOM - TOP)
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The chart of `tries` over the fault kinds `kinds` (others found in the tries are added).
pub fn svg(tries: &[&Try], kinds: &[String], lease_ms: u64) -> String {
    let mut kinds: Vec<String> = kinds.to_vec();
    for t in tries {
        for f in &t.schedule.faults {
            if !kinds.contains(&f.fault) {
                kinds.push(f.fault.clone());
            }
        }
    }
    let col = (W - LEFT - 10.0) / kinds.len().max(1) as f64;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="11">"#
    );
    for factor in [0.1, 0.3, 1.0, 3.0] {
        let y = y_of(factor);
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" x2="{}" y1="{y:.1}" y2="{y:.1}" stroke="#e0e0e0"/><text x="{}" y="{:.1}" text-anchor="end">{factor}× lease</text>"##,
            W - 10.0,
            LEFT - 4.0,
            y + 4.0
        );
    }
    let band = BOTTOM + 22.0;
    let _ = write!(
        s,
        r#"<text x="{}" y="{:.1}" text-anchor="end">no size</text>"#,
        LEFT - 4.0,
        band + 4.0
    );
    for (i, k) in kinds.iter().enumerate() {
        let x = LEFT + col * (i as f64 + 0.5);
        let _ = write!(
            s,
            r##"<line x1="{:.1}" x2="{:.1}" y1="{TOP}" y2="{band}" stroke="#f0f0f0"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"##,
            LEFT + col * i as f64,
            LEFT + col * i as f64,
            H - 12.0,
            esc(k)
        );
    }
    for t in tries {
        for f in &t.schedule.faults {
            let Some(i) = kinds.iter().position(|k| *k == f.fault) else {
                continue;
            };
            // Spread the dots of one column by run number, the same way every time.
            let jitter = ((t.n as f64 * 0.618_034) % 1.0 - 0.5) * col * 0.7;
            let x = LEFT + col * (i as f64 + 0.5) + jitter;
            let factor = f.size_ms as f64 / lease_ms.max(1) as f64;
            let y = if f.size_ms == 0 { band } else { y_of(factor) };
            let _ = write!(
                s,
                r#"<circle cx="{x:.1}" cy="{y:.1}" r="4" fill="{}" fill-opacity="0.8"><title>run {}: {} {} ms ({factor:.2}× lease) at {} ms: {}</title></circle>"#,
                colour(t.found, t.error.is_some()),
                t.n,
                esc(&f.fault),
                f.size_ms,
                f.at_ms,
                esc(t.found.name())
            );
        }
    }
    s.push_str("</svg>");
    s
}
