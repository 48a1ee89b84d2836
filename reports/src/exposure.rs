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

/// The rows of `exposures`, in history order, and one for the instances counted but not kept
/// (a long soak's).
pub(crate) fn exposure_rows(exposures: &Exposures) -> Vec<ExposureRow> {
    let mut rows = kept_rows(exposures);
    if let Some(why) = omitted(exposures) {
        rows.push(ExposureRow {
            what: format!("{} more fault instance(s)", exposures.omitted()),
            rule: String::new(),
            exposed: exposures.omitted_exposed > 0,
            window: String::new(),
            why,
        });
    }
    rows
}

/// What the instances counted but not kept showed, in a sentence; `None` when all were kept.
fn omitted(exposures: &Exposures) -> Option<String> {
    (exposures.omitted() > 0).then(|| {
        format!(
            "judged and counted, not kept (a run keeps its first {} whole): {} opened a window, {} did not",
            lockpick_checker::exposure::KEPT_INSTANCES,
            exposures.omitted_exposed,
            exposures.omitted_not_exposed
        )
    })
}

/// The rows of the instances kept whole.
fn kept_rows(exposures: &Exposures) -> Vec<ExposureRow> {
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
    for row in kept_rows(exposures) {
        let mark = if row.exposed {
            "exposed"
        } else {
            "not exposed"
        };
        let _ = writeln!(out, "  {} [{}]: {mark}: {}", row.what, row.rule, row.why);
    }
    if let Some(why) = omitted(exposures) {
        let _ = writeln!(
            out,
            "  {} more fault instance(s): {why}",
            exposures.omitted()
        );
    }
    for never in &exposures.never_started {
        let _ = writeln!(out, "  {never}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_counted_and_not_kept_are_said_in_one_line_and_one_row() {
        let exposures = Exposures {
            planned: true,
            omitted_exposed: 7,
            omitted_not_exposed: 3,
            ..Exposures::default()
        };
        let text = exposure_text(&exposures);
        assert!(
            text.starts_with("exposure: 7 of 10 fault instance(s) opened a window"),
            "{text}"
        );
        assert!(
            text.contains("  10 more fault instance(s): judged and counted, not kept (a run keeps its first 500 whole): 7 opened a window, 3 did not"),
            "{text}"
        );
        let rows = exposure_rows(&exposures);
        assert_eq!(rows.len(), 1);
        assert!(rows[0].exposed && rows[0].what == "10 more fault instance(s)");
    }
}
