//! A search's runs in flight: up to `jobs` at once, each on a slot that keeps its servers up
//! between its runs (reset, as a matrix row's are) when the next run has the same setup, so
//! the search spends its time running schedules rather than starting servers and waiting on
//! one run's check before the next begins.
//!
//! A run is carried out whole on a task of its own (scenario file written, run stored and
//! checked, what it found classified); the search decides what to run and reads the results
//! in its own order.

use super::classify::{explain, Found};
use super::repeat::repeat_command;
use crate::client::kind::LeaseFrom;
use crate::run::{run_plan_in, RunError, RunOptions, RunPlan, ServerPool};
use crate::scenario::parse_scenario;
use lockpick_checker::history::read_history;
use lockpick_checker::verdict::Verdict;
use std::net::SocketAddr;
use std::path::PathBuf;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// What one run needs, owned so that it can run on a task of its own.
pub(super) struct Launch {
    /// The scenario file to write and run.
    pub file: PathBuf,
    pub text: String,
    pub seed: u64,
    pub store: PathBuf,
    pub toxiproxy: Option<SocketAddr>,
    /// The command that runs lockpick, for the run's reproduce line.
    pub program: String,
    /// The base scenario's lease and where its client counts it from, to classify a find.
    pub lease_ms: u64,
    pub lease_from: LeaseFrom,
    pub interrupt: CancellationToken,
}

/// What a run found: its stored run, verdict, class and first safety violation's sentence.
pub(super) struct Ran {
    pub dir: PathBuf,
    pub verdict: Verdict,
    pub found: Found,
    pub finding: Option<String>,
}

type Finished = (usize, ServerPool, Result<Ran, RunError>);

/// The slots runs go to, each with the servers its last run left (see the module's text).
pub(super) struct Slots {
    idle: Vec<ServerPool>,
    running: JoinSet<Finished>,
}

impl Slots {
    /// `jobs` slots (at least one); `reuse`: keep servers between a slot's runs.
    pub fn new(jobs: usize, reuse: bool) -> Slots {
        Slots {
            idle: (0..jobs.max(1)).map(|_| ServerPool::new(reuse)).collect(),
            running: JoinSet::new(),
        }
    }

    /// Whether a slot is free for another run.
    pub fn free(&self) -> bool {
        !self.idle.is_empty()
    }

    /// Starts `launch` on a free slot; `key` comes back with its result.
    ///
    /// Panics without a free slot: callers ask [`Slots::free`] first.
    pub fn launch(&mut self, key: usize, launch: Launch) {
        let mut pool = self.idle.pop().expect("a free slot");
        self.running.spawn(async move {
            let result = carry_out(launch, &mut pool).await;
            (key, pool, result)
        });
    }

    /// The next run to end, in the order they end; `None` with none in flight.
    pub async fn next(&mut self) -> Option<(usize, Result<Ran, RunError>)> {
        let joined = self.running.join_next().await?;
        // A run that panicked is a bug of lockpick's: it stops the search as it would
        // have stopped a search that ran it on its own task.
        let (key, pool, result) =
            joined.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
        self.idle.push(pool);
        Some((key, result))
    }

    /// Stops the servers the slots kept. Runs still in flight are waited for first.
    pub async fn close(mut self) {
        while self.next().await.is_some() {}
        for mut pool in self.idle {
            pool.close().await;
        }
    }
}

/// Writes `l`'s scenario file, runs it on `pool`'s servers and classifies what it found.
async fn carry_out(l: Launch, pool: &mut ServerPool) -> Result<Ran, RunError> {
    let store_err = |e| RunError::Store {
        path: l.file.clone(),
        source: e,
    };
    if let Some(dir) = l.file.parent() {
        std::fs::create_dir_all(dir).map_err(store_err)?;
    }
    crate::blocking::off_runtime(|| lockpick_store::write_atomic(&l.file, l.text.as_bytes()))
        .map_err(store_err)?;
    let scenario =
        parse_scenario(&l.file, &l.text).map_err(|e| RunError::Options(e.to_string()))?;
    let options = RunOptions {
        seed: Some(l.seed),
        store: l.store.clone(),
        toxiproxy: l.toxiproxy,
        ..RunOptions::default()
    };
    let command = repeat_command(&l.program, &l.file, l.seed, &l.store, l.toxiproxy);
    let plan = RunPlan::new(&scenario, &options)?.reproducing(command);
    let outcome = run_plan_in(&plan, l.interrupt.clone(), pool).await?;
    let history = outcome.dir.join(&outcome.results.history);
    // A history that cannot be read again was checked already; classify what is known. Off
    // the runtime, which the runs still going share.
    let (found, violation) = crate::blocking::off_runtime(|| {
        let events = read_history(&history).unwrap_or_default();
        explain(&outcome.results, &events, l.lease_ms, l.lease_from)
    });
    let finding = violation.map(|f| f.summary.clone());
    Ok(Ran {
        dir: outcome.dir,
        verdict: outcome.results.verdict,
        found,
        finding,
    })
}
