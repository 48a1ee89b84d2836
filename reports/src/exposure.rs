//! A run's exposure for people: each fault instance, whether it opened a window for a
//! violation and why, as terminal lines and as the report's rows.

use lockpick_checker::exposure::Exposures;
use lockpick_checker::faults::secs;
use serde::Serialize;
use std::fmt::Write;

/// One fault instance as the report's exposure table shows it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ExposureRow {
    /// "pause of client 3 at 1.200 s–3.400 s".
    pub what: String,
    /// The rule's name (docs/exposure.md).
    pub rule: String,
    pub exposed: bool,
    /// The window, "1.600 s–2.100 s, client 3 held, clients 1, 2 asked"; empty when not
    /// exposed.
    pub window: String,
    pub why: String,
}

/// The rows of `exposures`, in history order.
pub(crate) fn exposure_rows(exposures: &Exposures) -> Vec<ExposureRow> {
    (exposures.faults.iter())
        .map(|e| ExposureRow {
            what: e.describe(),
            rule: e.rule.name().to_owned(),
            exposed: e.exposed(),
            window: e.window.as_ref().map_or(String::new(), |w| {
                let askers: Vec<String> = w.askers.iter().map(u64::to_string).collect();
                format!(
                    "{}–{}, client {} held, client(s) {} asked",
                    secs(w.from_ns),
                    secs(w.to_ns),
                    w.holder,
                    askers.join(", ")
                )
            }),
            why: e.why.clone(),
        })
        .collect()
}

/// `exposure: 1 of 2 fault instances opened a window` and a line per instance, for `check`
/// and the terminal summary; nothing for a run without faults.
pub fn exposure_text(exposures: &Exposures) -> String {
    let mut out = String::new();
    if !exposures.planned {
        return out;
    }
    let (exposed, all) = exposures.count();
    let _ = writeln!(
        out,
        "exposure: {exposed} of {all} fault instance(s) opened a window for a violation (docs/exposure.md)"
    );
    for row in exposure_rows(exposures) {
        let mark = if row.exposed {
            "exposed"
        } else {
            "not exposed"
        };
        let _ = writeln!(out, "  {} [{}]: {mark}: {}", row.what, row.rule, row.why);
    }
    for never in &exposures.never_started {
        let _ = writeln!(out, "  {never}");
    }
    out
}
