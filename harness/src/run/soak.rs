//! A soak's two companions: the check that reads the history while it is written (so an
//! hour's history is checked when the hour ends, in the memory of what is open), and the
//! sampler of this process's memory (`soak.json`, see [`lockpick_store::soak`]).

use super::error::RunError;
use super::store::write_store_file;
use lockpick_checker::exposure;
use lockpick_checker::history::{HistoryReader, ReadError};
use lockpick_checker::lock::LockCheckParams;
use lockpick_checker::run_checks::{check_growing_run_file, FileChecks};
use lockpick_store::soak::{SoakRecord, SoakSample, SOAK_FILE, SOAK_VERSION};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long the live check waits at the history's end before reading again.
const POLL: Duration = Duration::from_millis(100);
/// Samples of memory, in workload time.
const SAMPLE_EVERY: Duration = Duration::from_secs(10);
/// How often `soak.json` is rewritten while the soak runs.
const WRITE_EVERY: Duration = Duration::from_secs(60);

/// A history file read as it grows: at its end, the reader waits for more until the run is
/// over, then reads what is left once and ends. The recorder writes whole lines in one
/// `write(2)`, but a line the reader finds cut is only read on when more comes, so no line is
/// ever seen half.
struct Tail {
    file: File,
    over: Arc<AtomicBool>,
}

impl Read for Tail {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            // Read `over` before the file: what the recorder wrote before it said so is in.
            let over = self.over.load(Ordering::Acquire);
            let n = self.file.read(buf)?;
            if n > 0 || over {
                return Ok(n);
            }
            std::thread::sleep(POLL);
        }
    }
}

/// The check of a soak's history, running on a thread of its own as the history is written.
pub(super) struct LiveCheck {
    over: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<FileChecks, ReadError>>>,
}

impl LiveCheck {
    /// Starts checking `history`, which the recorder has just created.
    pub fn start(
        history: &Path,
        params: LockCheckParams,
        plan: exposure::Plan,
    ) -> Result<LiveCheck, RunError> {
        let file = File::open(history).map_err(|e| RunError::store(history, e))?;
        let over = Arc::new(AtomicBool::new(false));
        let tail = Tail {
            file,
            over: over.clone(),
        };
        let path = history.to_owned();
        let thread = std::thread::Builder::new()
            .name("lockpick-live-check".into())
            .spawn(move || {
                let reader = HistoryReader::new(&path, BufReader::with_capacity(1 << 16, tail));
                check_growing_run_file(reader, &path, &params, plan)
            })
            .map_err(|e| RunError::store(history, e))?;
        Ok(LiveCheck {
            over,
            thread: Some(thread),
        })
    }

    /// The history is whole (the recorder finished, or the run failed): the check reads the
    /// rest and ends. Returns its result.
    pub fn finish(mut self) -> Result<FileChecks, ReadError> {
        self.over.store(true, Ordering::Release);
        let thread = self.thread.take().expect("finished once");
        thread
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e))
    }
}

impl Drop for LiveCheck {
    /// A run that failed lets the check end too rather than leave it waiting.
    fn drop(&mut self) {
        self.over.store(true, Ordering::Release);
    }
}

/// This process's resident memory and its peak, MiB, from `/proc/self/status`.
fn memory_mib() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
            .map_or(f64::NAN, |kib| kib / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Samples memory as the soak runs and keeps `soak.json` current.
pub(super) struct Sampler {
    path: PathBuf,
    record: SoakRecord,
    next_sample: Duration,
    last_write: Instant,
}

impl Sampler {
    pub fn new(dir: &Path, soak_ms: u64, cycle_ms: u64, clients: usize) -> Sampler {
        Sampler {
            path: dir.join(SOAK_FILE),
            record: SoakRecord {
                v: SOAK_VERSION,
                soak_ms,
                cycle_ms,
                clients,
                checked_live: true,
                complete: false,
                every_s: SAMPLE_EVERY.as_secs_f64(),
                samples: Vec::new(),
            },
            next_sample: SAMPLE_EVERY,
            last_write: Instant::now(),
        }
    }

    /// The workload has run for `elapsed` and completed `ops` operations.
    pub fn tick(&mut self, elapsed: Duration, ops: u64) {
        if elapsed < self.next_sample {
            return;
        }
        self.next_sample = elapsed + SAMPLE_EVERY;
        let (rss_mib, peak_mib) = memory_mib();
        self.record.samples.push(SoakSample {
            at_s: elapsed.as_secs_f64(),
            rss_mib,
            peak_mib,
            ops,
        });
        if self.last_write.elapsed() >= WRITE_EVERY {
            self.last_write = Instant::now();
            // A sample lost to a full disk is no reason to stop the soak; the end writes again.
            let _ = self.write();
        }
    }

    /// The workload ended (`complete`: it ran its whole length).
    pub fn finish(mut self, elapsed: Duration, ops: u64, complete: bool) -> Result<(), RunError> {
        let (rss_mib, peak_mib) = memory_mib();
        self.record.samples.push(SoakSample {
            at_s: elapsed.as_secs_f64(),
            rss_mib,
            peak_mib,
            ops,
        });
        self.record.complete = complete;
        self.write()
    }

    fn write(&self) -> Result<(), RunError> {
        write_store_file(
            &self.path,
            &serde_json::to_vec_pretty(&self.record).expect("soak record serializes"),
        )
    }
}
