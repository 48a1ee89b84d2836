//! A soak's part of its run report: the whole soak summed up from `soak.json` (its length and
//! cycles, operations and this process's memory, every few minutes) and which events the
//! page draws: only those in the windows around the violations, so that an hour's report is
//! drawn in the memory of those windows (with the nemesis's events, few by comparison).

use lockpick_checker::history::{Event, Process};
use lockpick_store::soak::SoakRecord;
use serde::Serialize;

/// Rows of the soak table: about this many, whatever the soak's length.
const ROWS: usize = 12;

/// The soak's section of the page.
#[derive(Debug, Serialize)]
pub(crate) struct SoakSection {
    pub length: String,
    pub cycle: String,
    pub cycles: u64,
    pub clients: usize,
    pub checked_live: bool,
    pub complete: bool,
    pub rows: Vec<SoakRow>,
    /// "Resident memory after the first 5 minutes: 84.1 to 88.0 MiB (within 4.6%)…"
    pub flat: String,
    /// What the charts of the page draw.
    pub drawn: String,
}

#[derive(Debug, Serialize)]
pub(crate) struct SoakRow {
    pub at: String,
    pub ops: u64,
    pub ops_per_min: String,
    pub rss_mib: String,
    pub peak_mib: String,
}

/// Which events a soak's page draws: the nemesis's, and the clients' inside `windows`.
pub(crate) struct Drawn {
    windows: Vec<(u64, u64)>,
    pub kept: usize,
}

impl Drawn {
    pub fn new(windows: Vec<(u64, u64)>) -> Drawn {
        Drawn { windows, kept: 0 }
    }

    pub fn keeps(&mut self, e: &Event) -> bool {
        let keep = matches!(e.process, Process::Nemesis)
            || self
                .windows
                .iter()
                .any(|&(a, b)| (a..=b).contains(&e.time_ns));
        self.kept += usize::from(keep);
        keep
    }
}

fn minutes(s: f64) -> String {
    if s >= 3600.0 {
        format!("{:.2} h", s / 3600.0)
    } else if s >= 60.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{s:.1} s")
    }
}

/// The section for `record`; `drawn` and `events` say how much of the history the charts
/// draw.
pub(crate) fn soak_section(record: &SoakRecord, drawn: usize, events: usize) -> SoakSection {
    let samples = &record.samples;
    let step = samples.len().div_ceil(ROWS).max(1);
    let mut rows = Vec::new();
    let mut before: Option<(f64, u64)> = None;
    for (i, s) in samples.iter().enumerate() {
        if i % step != 0 && i + 1 != samples.len() {
            continue;
        }
        let rate = match before {
            Some((t, ops)) if s.at_s > t => {
                format!(
                    "{:.0}",
                    (s.ops - ops.min(s.ops)) as f64 / (s.at_s - t) * 60.0
                )
            }
            _ => "-".to_owned(),
        };
        before = Some((s.at_s, s.ops));
        rows.push(SoakRow {
            at: minutes(s.at_s),
            ops: s.ops,
            ops_per_min: rate,
            rss_mib: format!("{:.1}", s.rss_mib),
            peak_mib: format!("{:.1}", s.peak_mib),
        });
    }
    let flat = match record.flatness() {
        Some(f) => format!(
            "Resident memory from {} to {} of the soak ({} samples): {:.1} to {:.1} MiB, within {:.1}% of the lowest.",
            minutes(f.from_s),
            minutes(f.to_s),
            f.samples,
            f.min_mib,
            f.max_mib,
            f.spread() * 100.0
        ),
        None => format!(
            "Too short to judge memory flat: fewer than two samples after the first {}.",
            minutes(lockpick_store::soak::WARM_UP_S)
        ),
    };
    SoakSection {
        length: minutes(record.soak_ms as f64 / 1000.0),
        cycle: minutes(record.cycle_ms as f64 / 1000.0),
        cycles: record.soak_ms.div_ceil(record.cycle_ms.max(1)),
        clients: record.clients,
        checked_live: record.checked_live,
        complete: record.complete,
        rows,
        flat,
        drawn: format!(
            "The timelines below draw {drawn} of the soak's {events} events: the faults, and the clients' operations in the windows around the first violations. Counts and verdicts are the whole soak's; latency, throughput and token charts are left out of a soak's page."
        ),
    }
}
