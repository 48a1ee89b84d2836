//! The matrix's runs, seed by seed across the whole matrix (so that a matrix cut short has
//! about as many runs in every cell), each recorded as it ends; up to `jobs` runs at once,
//! each on a pool of servers of its own that keeps them between its runs of one setup. A free
//! pool takes a run of the setup it keeps from its seed or the next, so that pools stay on
//! one setup and servers are started as seldom as the seeds allow.

use super::book::Book;
use super::cells::{reuse_order, Cell, Ownership};
use super::{MatrixCommands, MatrixEvent, MatrixRequest, MatrixRunError, RunKey, Say};
use crate::client::process::read_hello;
use crate::run::{relative_run, run_scenario_in, RunOptions, ServerPool, Setup};
use crate::scenario::Scenario;
use lockpick_checker::history::read_history;
use lockpick_reports::matrix::{failed_run, summarize_run, RunPlace, RunSummary};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::Instant;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// Makes every run of `cells` not made yet (all of them with `redo`), of this shard only;
/// `Ok(true)` when interrupted (a run cut short is not recorded, so resuming makes it again).
pub(super) async fn run_seeds(
    req: &MatrixRequest,
    commands: &dyn MatrixCommands,
    cells: &[Cell<'_>],
    book: &mut Book,
    interrupt: CancellationToken,
    say: &mut Say,
) -> Result<bool, MatrixRunError> {
    let mut slots = Slots::new(req.jobs, !req.fresh_servers);
    let made = make_runs(req, commands, cells, book, &mut slots, interrupt, say).await;
    // Also when a record could not be written: the servers must not outlive the matrix.
    slots.close().await;
    made
}

/// The loop of [`run_seeds`], on `slots`' servers. The first `seeds` seeds run every cell,
/// so they are queued at once (a seed's last runs overlap the next seed's first); past them
/// (with `until`), every run of one seed ends before the next seed's begin, since which cells
/// it runs depends on them.
async fn make_runs(
    req: &MatrixRequest,
    commands: &dyn MatrixCommands,
    cells: &[Cell<'_>],
    book: &mut Book,
    slots: &mut Slots,
    interrupt: CancellationToken,
    say: &mut Say,
) -> Result<bool, MatrixRunError> {
    let mine = Ownership::of(book, cells);
    let order = reuse_order(cells);
    let (first_seed, seeds, window) = (
        book.matrix.first_seed,
        book.matrix.seeds,
        book.seed_window(),
    );
    let mut k = 0;
    while k < window {
        // The first seeds together; past them one seed at a time.
        let batch = if k < seeds {
            k..seeds.min(window)
        } else {
            k..k + 1
        };
        k = batch.end;
        let mut queue: VecDeque<OneRun> = VecDeque::new();
        let mut any_open = false;
        for round in batch {
            let seed = first_seed.wrapping_add(round);
            // Past the first seeds (with `until`), only the cells whose answer is not sure yet.
            let open: Vec<&Cell<'_>> = (order.iter().map(|&i| &cells[i]))
                .filter(|c| round < seeds || book.unsure(&c.plan.row, &c.plan.column))
                .collect();
            any_open |= !open.is_empty();
            for cell in open {
                let key: RunKey = (cell.plan.row.clone(), cell.plan.column.clone(), seed);
                if !mine.owns(&key) {
                    continue;
                }
                let finished = book.done.get(&key).is_some_and(|r| r.error.is_none());
                if finished && !req.redo {
                    continue;
                }
                queue.push_back(OneRun {
                    req: req.clone(),
                    setup: Setup::of(&cell.scenario),
                    scenario: cell.scenario.clone(),
                    key,
                    round,
                    reproduce: commands.reproduce(&cell.file, seed),
                });
            }
        }
        if !any_open {
            break;
        }
        let mut stopped = false;
        loop {
            while !stopped && slots.free() && !queue.is_empty() {
                if interrupt.is_cancelled() {
                    stopped = true;
                    break;
                }
                let run = slots.pick(&mut queue);
                slots.launch(run, &queue, interrupt.clone());
            }
            let Some(made) = slots.next().await else {
                break;
            };
            if let Some(report) = made.report {
                say(MatrixEvent::Report(report));
            }
            match made.summary {
                Some(summary) => {
                    say(MatrixEvent::Run(&summary));
                    // Rewrites the matrix's record and page (megabytes late in a matrix).
                    crate::blocking::off_runtime(|| book.add_run(made.key, summary))?;
                }
                // Interrupted: what is in flight ends, then the matrix stops.
                None => stopped = true,
            }
        }
        if stopped {
            return Ok(true);
        }
    }
    Ok(false)
}

/// What one run made: its key, its report page written (or why not), and its summary;
/// `None` when it was interrupted (not recorded).
struct Made {
    key: RunKey,
    report: Option<Result<PathBuf, String>>,
    summary: Option<RunSummary>,
}

/// The pools runs go to: up to `jobs` runs at once, each on a pool of its own.
struct Slots {
    idle: Vec<ServerPool>,
    running: JoinSet<(ServerPool, Made)>,
    /// The setup of each run in flight: what its pool will keep.
    in_flight: Vec<(RunKey, Setup)>,
}

impl Slots {
    fn new(jobs: usize, reuse: bool) -> Slots {
        Slots {
            idle: (0..jobs.max(1)).map(|_| ServerPool::new(reuse)).collect(),
            running: JoinSet::new(),
            in_flight: Vec::new(),
        }
    }

    fn free(&self) -> bool {
        !self.idle.is_empty()
    }

    /// The next run to launch, among the queued runs of the first queued run's seed and the
    /// next (so that no cell gets more than a seed ahead of another): the first whose setup an
    /// idle pool keeps (its servers reset rather than started), else the first of a setup no
    /// pool keeps or is running (a fresh start that spreads the pools over the setups), else
    /// the first queued. Taking a later run first changes no run's plan or seed, only where
    /// and when it runs.
    fn pick(&self, queue: &mut VecDeque<OneRun>) -> OneRun {
        let horizon = queue.front().map_or(0, |r| r.round + 1);
        let near = |r: &&OneRun| r.round <= horizon;
        let kept = |r: &OneRun| self.idle.iter().any(|p| p.keeps(&r.setup));
        let taken = |r: &OneRun| kept(r) || self.in_flight.iter().any(|(_, s)| *s == r.setup);
        let at = (queue.iter().take_while(near).position(kept))
            .or_else(|| queue.iter().take_while(near).position(|r| !taken(r)))
            .unwrap_or(0);
        queue.remove(at).expect("a queued run")
    }

    /// Starts `run` on the idle pool that keeps its setup, else on one that keeps nothing,
    /// else on one whose setup no queued run of `queue` needs, else on any (whose servers are
    /// then stopped for fresh ones).
    fn launch(&mut self, run: OneRun, queue: &VecDeque<OneRun>, interrupt: CancellationToken) {
        let at = (self.idle.iter())
            .position(|p| p.keeps(&run.setup))
            .or_else(|| self.idle.iter().position(|p| !p.keeps_any()))
            .or_else(|| (self.idle.iter()).position(|p| !queue.iter().any(|r| p.keeps(&r.setup))))
            .unwrap_or(0);
        let mut pool = self.idle.swap_remove(at);
        self.in_flight.push((run.key.clone(), run.setup.clone()));
        self.running.spawn(async move {
            let made = run.make(&mut pool, interrupt).await;
            (pool, made)
        });
    }

    /// The next run to end; `None` with none in flight.
    async fn next(&mut self) -> Option<Made> {
        let joined = self.running.join_next().await?;
        // A run that panicked is a bug of lockpick's: it stops the matrix as it would have
        // stopped one that ran it on its own task.
        let (pool, made) = joined.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
        self.in_flight.retain(|(key, _)| *key != made.key);
        self.idle.push(pool);
        Some(made)
    }

    /// Waits for the runs in flight, then stops the servers the pools kept.
    async fn close(&mut self) {
        while self.next().await.is_some() {}
        for pool in &mut self.idle {
            pool.close().await;
        }
    }
}

/// One run of a cell, owned so that it can run on a task of its own.
struct OneRun {
    req: MatrixRequest,
    scenario: Scenario,
    key: RunKey,
    /// Which seed of the matrix (0 for its first): how far ahead of the queue's first it is.
    round: u64,
    /// The servers it needs, worked out once.
    setup: Setup,
    reproduce: String,
}

impl OneRun {
    /// Makes the run on `pool`'s servers and sums it up; a run that could not be made is a
    /// failed run, said so.
    async fn make(self, pool: &mut ServerPool, interrupt: CancellationToken) -> Made {
        let req = &self.req;
        let opts = RunOptions {
            seed: Some(self.key.2),
            store: req.store.clone(),
            reproduce: self.reproduce.clone(),
            toxiproxy: req.toxiproxy,
            external: req.external.clone(),
            resource: req.resource,
            ..RunOptions::default()
        };
        let mut at = RunPlace {
            row: self.key.0.clone(),
            column: self.key.1.clone(),
            seed: self.key.2,
            run: None,
            reproduce: self.reproduce,
            secs: 0.0,
        };
        let started = Instant::now();
        let outcome = run_scenario_in(&self.scenario, &opts, interrupt, pool).await;
        at.secs = started.elapsed().as_secs_f64();
        let mut made = Made {
            key: self.key,
            report: None,
            summary: None,
        };
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(e) => {
                made.summary = Some(failed_run(at, e.to_string()));
                return made;
            }
        };
        // The report and the summary read the whole history: off the runtime, which the runs
        // still going share.
        crate::blocking::off_runtime(|| {
            let report =
                lockpick_reports::write_run_report_streaming(&outcome.dir, &outcome.results);
            made.report = Some(report.map_err(|e| e.to_string()));
            if outcome.results.interrupted {
                return made;
            }
            at.run = relative_run(&req.store, &outcome.dir);
            let plan = self.scenario.exposure_plan();
            let mut summary = match read_history(&outcome.dir.join(&outcome.results.history)) {
                Ok(events) => summarize_run(at, &outcome.results, &events, plan),
                Err(e) => failed_run(at, format!("read the history: {e}")),
            };
            summary.library =
                read_hello(&outcome.dir).map(|h| format!("{} {}", h.library, h.version));
            summary.runtime_stall_ms = lockpick_store::RunState::read(&outcome.dir)
                .ok()
                .flatten()
                .and_then(|s| s.runtime_stall)
                .map(|s| s.longest_ms);
            made.summary = Some(summary);
            made
        })
    }
}
