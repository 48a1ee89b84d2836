//! A progress bar for the terminal while the workload runs; silent when not on a terminal.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::Duration;

pub(super) struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    pub fn new(enabled: bool, duration_ms: u64) -> Progress {
        let bar = enabled.then(|| {
            let bar =
                ProgressBar::with_draw_target(Some(duration_ms), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner} [{bar:30}] {elapsed}/{msg}")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            bar
        });
        Progress { bar }
    }

    pub fn update(&self, elapsed: Duration, ops: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(elapsed.as_millis() as u64);
            let secs = elapsed.as_secs_f64().max(0.001);
            bar.set_message(format!(
                "{:.0}s  {ops} ops  {:.0} ops/s",
                bar.length().unwrap_or(0) as f64 / 1000.0,
                ops as f64 / secs
            ));
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
