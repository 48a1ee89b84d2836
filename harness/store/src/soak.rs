//! `soak.json`: what a soak (`lockpick scenario NAME --soak 1h`) records beside its history:
//! its length and cycle, and this process's memory sampled as it ran, so that "memory stays
//! flat" is a figure read from the run, not a claim. Rewritten as the soak goes (a killed soak
//! keeps what it sampled) and once at its end.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// The file's name in a run folder.
pub const SOAK_FILE: &str = "soak.json";
/// Format version of `soak.json` written by this build.
pub const SOAK_VERSION: u32 = 1;
/// Samples before this time are the soak warming up (servers' caches, the check catching up),
/// left out of [`SoakRecord::flatness`].
pub const WARM_UP_S: f64 = 300.0;

/// The content of `soak.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SoakRecord {
    /// [`SOAK_VERSION`] when written.
    pub v: u32,
    /// The soak's workload length.
    pub soak_ms: u64,
    /// Its fault schedule's cycle: the scenario's own length, drawn afresh each cycle.
    pub cycle_ms: u64,
    pub clients: usize,
    /// Whether the history was checked as it was written (the check ended with the run).
    pub checked_live: bool,
    /// Whether the soak ran its whole length (false while it runs, or when interrupted).
    pub complete: bool,
    /// Samples, every [`SoakRecord::every_s`] seconds of workload.
    pub every_s: f64,
    pub samples: Vec<SoakSample>,
}

/// One sample of lockpick's own process while the soak ran.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SoakSample {
    /// Seconds of workload.
    pub at_s: f64,
    /// Resident memory (VmRSS) and its peak so far (VmHWM), MiB.
    pub rss_mib: f64,
    pub peak_mib: f64,
    /// Operations completed so far.
    pub ops: u64,
}

/// How flat memory stayed after the warm-up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Flatness {
    /// The samples it is over, and the time they span.
    pub samples: usize,
    pub from_s: f64,
    pub to_s: f64,
    pub min_mib: f64,
    pub max_mib: f64,
}

impl Flatness {
    /// The spread as a share of the smallest sample: 0.07 is "within 7%".
    pub fn spread(&self) -> f64 {
        if self.min_mib > 0.0 {
            (self.max_mib - self.min_mib) / self.min_mib
        } else {
            0.0
        }
    }
}

impl SoakRecord {
    /// Resident memory over the samples after [`WARM_UP_S`]; `None` before there are two.
    pub fn flatness(&self) -> Option<Flatness> {
        let after: Vec<&SoakSample> = self
            .samples
            .iter()
            .filter(|s| s.at_s >= WARM_UP_S)
            .collect();
        if after.len() < 2 {
            return None;
        }
        let rss = after.iter().map(|s| s.rss_mib);
        Some(Flatness {
            samples: after.len(),
            from_s: after[0].at_s,
            to_s: after[after.len() - 1].at_s,
            min_mib: rss.clone().fold(f64::INFINITY, f64::min),
            max_mib: rss.fold(0.0, f64::max),
        })
    }

    /// Reads `soak.json` in `dir`: `Ok(None)` when the run was no soak.
    pub fn read(dir: &Path) -> Result<Option<SoakRecord>, String> {
        let path = dir.join(SOAK_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("read {}: {e}", path.display())),
        };
        let record: SoakRecord =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        if record.v > SOAK_VERSION {
            return Err(format!(
                "{}: format version {} is newer than this lockpick reads ({SOAK_VERSION}); update lockpick",
                path.display(),
                record.v
            ));
        }
        Ok(Some(record))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at_s: f64, rss_mib: f64) -> SoakSample {
        SoakSample {
            at_s,
            rss_mib,
            peak_mib: rss_mib,
            ops: 0,
        }
    }

    #[test]
    fn flatness_leaves_the_warm_up_out() {
        let mut r = SoakRecord {
            v: SOAK_VERSION,
            soak_ms: 3_600_000,
            cycle_ms: 5_000,
            clients: 64,
            checked_live: true,
            complete: true,
            every_s: 10.0,
            samples: vec![sample(10.0, 20.0), sample(200.0, 50.0)],
        };
        assert_eq!(r.flatness(), None, "nothing after the warm-up yet");
        r.samples.extend([
            sample(300.0, 100.0),
            sample(1800.0, 104.0),
            sample(3600.0, 102.0),
        ]);
        let f = r.flatness().unwrap();
        assert_eq!((f.samples, f.min_mib, f.max_mib), (3, 100.0, 104.0));
        assert_eq!((f.from_s, f.to_s), (300.0, 3600.0));
        assert!((f.spread() - 0.04).abs() < 1e-9);
    }
}
