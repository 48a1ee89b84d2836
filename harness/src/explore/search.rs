//! The search: draw a schedule, run it as an ordinary stored run, classify what it found,
//! until a bug of the lock or the budget (finds of the other classes are re-run only after
//! the budget, when no bug of the lock was found); then shrink what broke it, measuring each
//! candidate by re-runs, and confirm the result over a fixed number of runs. The drawing and the
//! reductions are [`super::draw`]'s and [`super::shrink`]'s; this module only runs them.
//!
//! Everything it writes is under `store/explore/<id>/`: each run's scenario file (the run
//! itself is stored like any other, under `store/<name>/`), the shrunk scenario, and
//! `explore.json` (rewritten after every run, so a killed search leaves what it did).

use super::base::Base;
use super::choose::{better, later_order, lengthen_again, offer, Best, Confirmed};
use super::classify::Found;
use super::draw::{draw, Schedule, ScheduleExt, Space, LONGEST_RUN};
use super::repeat::repeat_command;
use super::runs::{Launch, Ran, Slots};
use super::shrink::{lengthened, Need, Shrinker};
use crate::run::RunError;
use lockpick_store::explore::{
    ExploreRecord, Phase, ShrinkStep, Shrunk, Try, EXPLORE_DIR, EXPLORE_RECORD_VERSION,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// What the search is asked to do.
#[derive(Debug, Clone)]
pub struct Config {
    pub base: Base,
    /// Seed of the draw; run `i` of the search runs with seed `seed + i`.
    pub seed: u64,
    /// How long to search for a violation.
    pub budget: Duration,
    /// How long to shrink what was found.
    pub shrink_budget: Duration,
    /// `--faults`: draw only these.
    pub only: Option<Vec<String>>,
    /// `--fixed-workload`: keep the scenario's hold, think, clients and watchdog; draw faults
    /// only.
    pub fixed_workload: bool,
    /// A reduction is kept when it reproduces in `k` of `n` re-runs.
    pub need: Need,
    /// Re-runs of the shrunk schedule, all of them, for the rate reported.
    pub confirm: u32,
    pub store: PathBuf,
    pub toxiproxy: Option<SocketAddr>,
    /// The command that runs lockpick (`cargo run --`, `lockpick`), for printed commands.
    pub program: String,
    /// Runs at once (at least 1): the search's draws, a candidate's re-runs and the
    /// confirming runs go this many at a time.
    pub jobs: usize,
    /// Keep each job's servers between its runs of the same setup (reset between them);
    /// `false` starts and stops servers for every run (`--fresh-servers`).
    pub reuse_servers: bool,
}

/// Everything the search did: the store's record, written as `explore.json`.
pub type Exploration = ExploreRecord;

/// Progress for the terminal: one line per event.
pub type Say<'a> = &'a mut (dyn FnMut(&str) + Send);

/// The search's state while it runs.
struct Search<'a> {
    cfg: &'a Config,
    ex: Exploration,
    started: Instant,
    interrupt: CancellationToken,
    say: Say<'a>,
    errors_in_a_row: u32,
    slots: Slots,
    /// The runs in flight, with the key [`Search::run_many`] launched them under.
    launched: Vec<(usize, Try)>,
    /// Faults in the schedules the search drew and ran, for the progress line.
    faults_tried: usize,
}

/// A run the search asks for: what for, its schedule and its seed.
type Ask = (Phase, Schedule, u64);

/// Three runs in a row that could not be carried out stop the search: the setup is broken.
const MAX_ERRORS_IN_A_ROW: u32 = 3;

impl Search<'_> {
    /// The longest run a find is lengthened to ([`lengthened`]): twice the longest drawn;
    /// `--fixed-workload` (a matrix cell's search) keeps the scenario's length.
    fn longest_ms(&self) -> u64 {
        let base = self.cfg.base.scenario.workload.duration_ms;
        if self.cfg.fixed_workload {
            base
        } else {
            base * LONGEST_RUN * 2
        }
    }

    fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Writes the record and its page, after every run: the page shows the find and the
    /// command that repeats it as soon as there is one, not only once shrinking ends.
    /// Off the runtime, which the runs still going share.
    fn save(&mut self) {
        let failed = crate::blocking::off_runtime(|| {
            if let Err(e) = self.ex.write() {
                let path = self.ex.dir.join(lockpick_store::explore::EXPLORE_FILE);
                return Some(format!("warning: write {}: {e}", path.display()));
            }
            (lockpick_reports::write_explore_page(&self.ex.dir).err())
                .map(|e| format!("warning: failed to {e}"))
        });
        if let Some(warning) = failed {
            (self.say)(&warning);
        }
    }

    /// Makes the runs `next` asks for (its argument counts them from 0) until it asks for no
    /// more or `enough` says the runs so far are enough, `cfg.jobs` at a time. `enough` sees
    /// the runs in the order asked for, without a gap: what it decides does not depend on
    /// which run ended first. The runs in flight when it decides are waited for and recorded,
    /// like every run, but not among those it saw. Returns every run made, in the order asked
    /// for, and how many of them `enough` saw when it decided (all, if it never did). `Err`
    /// when too many runs in a row could not be carried out.
    async fn run_many(
        &mut self,
        mut next: impl FnMut(usize) -> Option<Ask>,
        enough: impl Fn(&[Try]) -> bool,
    ) -> Result<(Vec<Try>, usize), RunError> {
        let mut done: Vec<Option<Try>> = Vec::new();
        let mut seen = 0;
        let mut decided = enough(&[]);
        let mut failed: Option<RunError> = None;
        let mut asked = 0;
        loop {
            while !decided
                && failed.is_none()
                && self.slots.free()
                && !self.interrupt.is_cancelled()
            {
                let Some(ask) = next(asked) else { break };
                let (t, launch) = self.prepare(ask);
                self.slots.launch(asked, launch);
                done.push(None);
                self.pending_try(asked, t);
                asked += 1;
            }
            let Some((key, result)) = self.slots.next().await else {
                break;
            };
            let t = self.record(key, result, &mut failed);
            done[key] = Some(t);
            if !decided {
                while done.get(seen).is_some_and(|t| t.is_some()) {
                    seen += 1;
                }
                let so_far: Vec<Try> = done[..seen].iter().flatten().cloned().collect();
                decided = enough(&so_far);
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
        Ok((done.into_iter().flatten().collect(), seen))
    }

    /// The try and the launch of `ask`, numbered as the next run of the search.
    fn prepare(&mut self, (phase, schedule, seed): Ask) -> (Try, Launch) {
        let cfg = self.cfg;
        let n = self.ex.tries.len() + self.launched.len() + 1;
        let folder = phase.name();
        let file = self.ex.dir.join(folder).join(format!("{n:04}.toml"));
        let name = format!("{}-explore", cfg.base.name);
        let comment = vec![format!(
            "Run {n} of `lockpick explore` {} ({folder}): {}",
            self.ex.id,
            schedule.describe()
        )];
        let text = cfg.base.render(&schedule, &name, &comment, None, seed);
        if phase == Phase::Search {
            self.faults_tried += schedule.faults.len();
        }
        let launch = Launch {
            file: file.clone(),
            text,
            seed,
            store: cfg.store.clone(),
            toxiproxy: cfg.toxiproxy,
            program: cfg.program.clone(),
            lease_ms: cfg.base.lease_ms(),
            lease_from: cfg.base.scenario.client.kind.lease_counted_from(),
            interrupt: self.interrupt.clone(),
        };
        let t = Try {
            n,
            phase,
            seed,
            schedule,
            file,
            run: None,
            verdict: None,
            found: Found::Nothing,
            finding: None,
            error: None,
            at_s: 0.0,
        };
        (t, launch)
    }

    /// Keeps `t` (asked for as `key`) until its run ends.
    fn pending_try(&mut self, key: usize, t: Try) {
        self.launched.push((key, t));
    }

    /// Records the end of the run asked for as `key`: its try goes to `explore.json` (in the
    /// order of the runs' numbers) and, for a search run, to the terminal. A run that could
    /// not be carried out counts towards [`MAX_ERRORS_IN_A_ROW`]; the error that reaches it
    /// goes to `failed`.
    fn record(
        &mut self,
        key: usize,
        result: Result<Ran, RunError>,
        failed: &mut Option<RunError>,
    ) -> Try {
        let at = self
            .launched
            .iter()
            .position(|(k, _)| *k == key)
            .expect("a launched run");
        let (_, mut t) = self.launched.swap_remove(at);
        match result {
            Ok(ran) => {
                self.errors_in_a_row = 0;
                t.run = Some(ran.dir);
                t.verdict = Some(ran.verdict);
                t.found = ran.found;
                t.finding = ran.finding;
            }
            Err(e) => {
                self.errors_in_a_row += 1;
                t.error = Some(e.to_string());
                (self.say)(&format!("run {} could not be carried out: {e}", t.n));
                if self.errors_in_a_row >= MAX_ERRORS_IN_A_ROW && failed.is_none() {
                    *failed = Some(e);
                }
            }
        }
        t.at_s = self.elapsed().as_secs_f64();
        if t.phase == Phase::Search && t.error.is_none() {
            let left = self.cfg.budget.saturating_sub(self.elapsed());
            (self.say)(&format!(
                "run {:>3} | {} faults tried | {:>4.0} s left | {} → {}{}",
                t.n,
                self.faults_tried,
                left.as_secs_f64(),
                t.schedule.describe(),
                t.verdict.map_or("error", |v| v.name()),
                match t.found {
                    Found::Nothing => String::new(),
                    f => format!(" ({})", f.name()),
                }
            ));
        }
        let at = self.ex.tries.partition_point(|x| x.n < t.n);
        self.ex.tries.insert(at, t.clone());
        self.save();
        t
    }

    /// Whether `schedule` reproduces `class` (or worse) in `need.k` of `need.n` runs, stopping
    /// as soon as that is certain.
    async fn measure(
        &mut self,
        phase: Phase,
        schedule: &Schedule,
        class: Found,
        need: Need,
        seed: u64,
    ) -> Result<(u32, u32, Option<u64>), RunError> {
        self.rerun(phase, schedule, class, seed, need.n, |hits, runs| {
            need.decided(hits, runs).is_some()
        })
        .await
    }

    /// Runs `schedule` with `seed`, `seed + 1`, … (at most `most` runs) until `done(hits,
    /// runs)`, counting the runs that found `class` or worse, in the order of their seeds;
    /// returns the hits, the runs and the first seed that hit. Runs still in flight when it
    /// was done are made but not counted (see [`Search::run_many`]).
    async fn rerun(
        &mut self,
        phase: Phase,
        schedule: &Schedule,
        class: Found,
        seed: u64,
        most: u32,
        done: impl Fn(u32, u32) -> bool,
    ) -> Result<(u32, u32, Option<u64>), RunError> {
        let count = |tries: &[Try]| {
            let hits = tries.iter().filter(|t| t.found <= class);
            let first = tries.iter().find(|t| t.found <= class).map(|t| t.seed);
            (hits.count() as u32, tries.len() as u32, first)
        };
        let (tries, seen) = self
            .run_many(
                |i| {
                    (i < most as usize)
                        .then(|| (phase, schedule.clone(), seed.wrapping_add(i as u64)))
                },
                |tries| {
                    let (hits, runs, _) = count(tries);
                    done(hits, runs)
                },
            )
            .await?;
        Ok(count(&tries[..seen]))
    }
}

/// The id of an exploration: its scenario, when it began, and its seed.
fn exploration_id(base: &str, seed: u64) -> String {
    format!(
        "{base}-{}-seed{seed}",
        lockpick_store::utc_stamp(std::time::SystemTime::now())
    )
}

/// Explores `cfg.base`: search, shrink, confirm. `say` gets one line per event for the
/// terminal. `Err` only when runs cannot be carried out at all; what was done until then is
/// in `explore.json`.
pub async fn explore(
    cfg: &Config,
    interrupt: CancellationToken,
    say: Say<'_>,
) -> Result<Exploration, ExploreError> {
    let (space, left_out) = cfg
        .base
        .space(cfg.only.as_deref(), cfg.fixed_workload)
        .map_err(ExploreError::Input)?;
    let id = exploration_id(&cfg.base.name, cfg.seed);
    let dir = cfg.store.join(EXPLORE_DIR).join(&id);
    std::fs::create_dir_all(&dir).map_err(|e| ExploreError::Run(RunError::store(&dir, e)))?;
    let ex = Exploration {
        version: EXPLORE_RECORD_VERSION,
        id,
        dir,
        base: cfg.base.name.clone(),
        base_file: cfg.base.path.clone(),
        seed: cfg.seed,
        budget_s: cfg.budget.as_secs_f64(),
        shrink_budget_s: cfg.shrink_budget.as_secs_f64(),
        need: cfg.need,
        lease_ms: cfg.base.lease_ms(),
        faults: space.faults.iter().map(|f| f.to_string()).collect(),
        left_out,
        workload_drawn: space.shape.drawn,
        tries: Vec::new(),
        found: None,
        found_class: Found::Nothing,
        found_about: Found::Nothing.about().to_owned(),
        shrink: Vec::new(),
        shrunk: None,
        stopped: String::new(),
        elapsed_s: 0.0,
        done: false,
    };
    let mut s = Search {
        cfg,
        ex,
        started: Instant::now(),
        interrupt,
        say,
        errors_in_a_row: 0,
        slots: Slots::new(cfg.jobs, cfg.reuse_servers),
        launched: Vec::new(),
        faults_tried: 0,
    };
    (s.say)(&format!(
        "exploring {} (lease {} ms) with seed {} for {:.0} s: drawing from {}{}",
        cfg.base.name,
        cfg.base.lease_ms(),
        cfg.seed,
        cfg.budget.as_secs_f64(),
        s.ex.faults.join(", "),
        if space.shape.drawn {
            ", and the workload's shape (hold, think, clients, watchdog, length)"
        } else {
            ", with the scenario's own workload"
        }
    ));
    s.save();
    let result = run_all(&mut s, &space).await;
    let slots = std::mem::replace(&mut s.slots, Slots::new(1, false));
    slots.close().await;
    s.ex.elapsed_s = s.elapsed().as_secs_f64();
    s.ex.done = true;
    if let Err(e) = &result {
        s.ex.stopped = format!("runs could not be carried out: {e}");
    }
    s.save();
    result.map_err(ExploreError::Run)?;
    Ok(s.ex)
}

/// Re-runs run `n`'s schedule until its find reproduces in `need` or cannot, and records it
/// as a step: a find is believed when it reproduces like any shrinking step (runs are real
/// processes, and one violation may be a one-off). A find that came back, but too seldom, is
/// tried on a run twice as long when a fault of it recurs ([`lengthened`]) and the workload is
/// drawn, and again while its rate rises ([`lengthen_again`]). Returns the schedule that
/// reproduced.
async fn reproduce(s: &mut Search<'_>, n: usize) -> Result<Option<Schedule>, RunError> {
    let t = s.ex.tries[n - 1].clone();
    let need = s.cfg.need;
    let longest = s.longest_ms();
    let mut next = Some((
        format!("the schedule of run {n} as found ({})", t.found.name()),
        t.schedule.clone(),
    ));
    let mut before = None;
    while let Some((change, schedule)) = next.take() {
        let (hits, runs, _) = s
            .measure(Phase::Reproduce, &schedule, t.found, need, t.seed)
            .await?;
        let ok = need.decided(hits, runs) == Some(true);
        let longer = (!ok && lengthen_again(before, hits, runs))
            .then(|| lengthened(&schedule, longest))
            .flatten();
        before = Some((hits, runs));
        (s.say)(&format!(
            "  {change}: reproduced {hits}/{runs}: {}",
            match (ok, &longer, t.found.stops_search()) {
                (true, _, _) => "kept",
                (false, Some(_), _) => "too seldom, trying a longer run",
                (false, None, true) => "not reliable, searching on",
                (false, None, false) => "not reliable",
            }
        ));
        s.ex.shrink.push(ShrinkStep {
            change,
            schedule: schedule.clone(),
            hits,
            runs,
            kept: ok,
        });
        if ok {
            return Ok(Some(schedule));
        }
        next = longer.map(|c| (format!("run {n}'s schedule, {}", c.change), c.schedule));
    }
    Ok(None)
}

/// The find the search settled on, as recorded in `explore.json`: what shrinking, confirming
/// and the shrunk scenario's comment start from.
struct Find {
    class: Found,
    /// Its run's number.
    n: usize,
    /// Its run: the schedule and seed as found, and what it found.
    found: Try,
    /// Whether it reproduced in `need` re-runs, and so is shrunk.
    reproduced: bool,
    /// The length of the run it reproduced on, when longer than the run it was found on.
    longer: Option<u64>,
}

/// Where shrinking got to: the schedule (in the shrinker), the changes kept and those undone
/// when confirming.
struct Shrinking {
    shrinker: Shrinker,
    /// The changes kept, in order, without those undone since.
    removed: Vec<String>,
    /// The changes undone when the schedule with them did not confirm.
    undone: Vec<String>,
    /// Candidates were left untried when the budget ran out (the comment and the page say so:
    /// a longer `--shrink-budget` may remove more).
    budget_ran_out: bool,
}

/// Searches, then shrinks and confirms what was found and writes it as a scenario; each
/// phase ends the search quietly (with `stopped` saying why) when interrupted.
async fn run_all(s: &mut Search<'_>, space: &Space) -> Result<(), RunError> {
    let mut best: Best = None;
    let Some(later) = s.search(space, &mut best).await? else {
        return Ok(());
    };
    // A bug of the lock that came back too seldom to shrink is still what the search found:
    // one history shows it. The other finds are re-run only when there was none.
    if best.is_none() && !later.is_empty() && !s.re_run_later(&later, &mut best).await? {
        return Ok(());
    }
    let Some((class, n, start)) = best else {
        s.ex.stopped.push_str("; no safety violation found");
        return Ok(());
    };
    let (find, start) = s.record_find(class, n, start);
    let mut shrinking = s.shrink(&find, start).await?;
    if s.interrupt.is_cancelled() {
        s.ex.stopped.push_str("; interrupted while shrinking");
        return Ok(());
    }
    let confirmed = s.confirm(&find, &mut shrinking).await?;
    s.write_shrunk(&find, &shrinking, confirmed)
}

impl Search<'_> {
    /// Draws and runs schedules until the budget is spent or a bug of the lock reproduces
    /// (offered to `best`). Returns the finds of the classes that do not stop the search (the
    /// environment's, Kleppmann's) in the order found; `None` when interrupted. They are
    /// re-run only once the budget is spent with no bug of the lock: re-running each as it
    /// came took a fifth to a third of a 10-minute search.
    async fn search(
        &mut self,
        space: &Space,
        best: &mut Best,
    ) -> Result<Option<Vec<(Found, usize)>>, RunError> {
        let cfg = self.cfg;
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
        let mut later: Vec<(Found, usize)> = Vec::new();
        let mut drawn = 0u64;
        let started = self.started;
        loop {
            if self.interrupt.is_cancelled() {
                self.ex.stopped = "interrupted".into();
                return Ok(None);
            }
            if self.elapsed() >= cfg.budget {
                self.ex.stopped =
                    format!("the budget of {:.0} s ran out", cfg.budget.as_secs_f64());
                break;
            }
            // Draws go on, `jobs` runs at a time, until one finds what stops the search; the
            // runs then in flight end, and every find is looked at in the order drawn.
            let (tries, _) = self
                .run_many(
                    |_| {
                        (started.elapsed() < cfg.budget).then(|| {
                            let schedule = draw(&mut rng, space);
                            drawn += 1;
                            (Phase::Search, schedule, cfg.seed.wrapping_add(drawn - 1))
                        })
                    },
                    |tries| tries.iter().any(|t| t.found.stops_search()),
                )
                .await?;
            for t in tries {
                if t.found == Found::Nothing {
                    continue;
                }
                if !t.found.stops_search() {
                    later.push((t.found, t.n));
                    continue;
                }
                if offer(best, t.found, t.n, reproduce(self, t.n).await?) {
                    self.ex.stopped = format!("run {} found a bug of the lock", t.n);
                    return Ok(Some(later));
                }
            }
        }
        Ok(Some(later))
    }

    /// Re-runs the finds of `later`, in [`later_order`], until one reproduces (offered to
    /// `best`); false when interrupted.
    async fn re_run_later(
        &mut self,
        later: &[(Found, usize)],
        best: &mut Best,
    ) -> Result<bool, RunError> {
        (self.say)("no bug of the lock found; re-running the other finds, worst class first");
        for (class, n) in later_order(later) {
            if self.interrupt.is_cancelled() {
                self.ex.stopped.push_str("; interrupted");
                return Ok(false);
            }
            if offer(best, class, n, reproduce(self, n).await?) {
                break;
            }
        }
        Ok(true)
    }

    /// Records run `n`'s find of `class` as the exploration's and says it. Returns it, and the
    /// schedule shrinking starts from: what reproduced (`start`: the schedule as found, or on
    /// a longer run), else the schedule as found.
    fn record_find(&mut self, class: Found, n: usize, start: Option<Schedule>) -> (Find, Schedule) {
        self.ex.found = Some(n);
        self.ex.found_class = class;
        self.ex.found_about = class.about().to_owned();
        let found = self.ex.tries[n - 1].clone();
        let longer = start
            .as_ref()
            .filter(|r| r.duration_ms != found.schedule.duration_ms)
            .map(|r| r.duration_ms);
        (self.say)(&format!(
            "found ({}) in run {n}: {}\n  {}",
            class.name(),
            found.schedule.describe(),
            found.finding.as_deref().unwrap_or(""),
        ));
        let find = Find {
            class,
            n,
            reproduced: start.is_some(),
            longer,
            found,
        };
        let start = start.unwrap_or_else(|| find.found.schedule.clone());
        (find, start)
    }

    /// Shrinks `start`, a find that reproduced, within the shrink budget: each candidate is
    /// measured by re-runs and kept when it reproduces in `need`. A find that did not
    /// reproduce is not shrunk. Stops early when interrupted.
    async fn shrink(&mut self, find: &Find, start: Schedule) -> Result<Shrinking, RunError> {
        let cfg = self.cfg;
        if find.reproduced {
            (self.say)(&format!(
                "shrinking for at most {:.0} s, keeping a change when it reproduces in {}/{} re-runs",
                cfg.shrink_budget.as_secs_f64(),
                cfg.need.k,
                cfg.need.n
            ));
        }
        let shrink_started = self.elapsed();
        let mut sh = Shrinking {
            shrinker: Shrinker::new(start, cfg.base.lease_ms(), cfg.base.shape()),
            removed: Vec::new(),
            undone: Vec::new(),
            budget_ran_out: false,
        };
        while let Some(c) = find
            .reproduced
            .then(|| sh.shrinker.next_candidate())
            .flatten()
        {
            if self.interrupt.is_cancelled() {
                break;
            }
            if self.elapsed() - shrink_started >= cfg.shrink_budget {
                sh.budget_ran_out = true;
                break;
            }
            let (hits, runs, _) = self
                .measure(
                    Phase::Shrink,
                    &c.schedule,
                    find.class,
                    cfg.need,
                    find.found.seed,
                )
                .await?;
            let kept = cfg.need.decided(hits, runs) == Some(true);
            (self.say)(&format!(
                "  {} {}: reproduced {hits}/{runs}",
                if kept { "kept:    " } else { "refused: " },
                c.change
            ));
            self.ex.shrink.push(ShrinkStep {
                change: c.change.clone(),
                schedule: c.schedule.clone(),
                hits,
                runs,
                kept,
            });
            if kept {
                sh.removed.push(c.change.clone());
                sh.shrinker.accept(c);
            }
        }
        Ok(sh)
    }

    /// Confirms the shrunk schedule over `confirm` runs from the find's seed.
    ///
    /// The confirming runs must hold the rate each step was kept at (8 of 10 for 4/5). A step
    /// kept on a lucky few re-runs can lower it (a size halved to the edge of what breaks):
    /// then the last kept change is undone and the schedule before it confirmed, until one
    /// holds the rate or nothing is left to undo.
    ///
    /// With nothing left to undo, a schedule whose fault recurs is confirmed on a run twice as
    /// long, while its rate rises ([`lengthen_again`]): the same race, more tries per run.
    async fn confirm(&mut self, find: &Find, sh: &mut Shrinking) -> Result<Confirmed, RunError> {
        let cfg = self.cfg;
        let want = cfg.need.hits_in(cfg.confirm);
        // The longer schedule being confirmed, and the confirmation before it.
        let mut lengthening: Option<(Schedule, Confirmed)> = None;
        loop {
            let schedule = match &lengthening {
                Some((longer, _)) => longer.clone(),
                None => sh.shrinker.current().clone(),
            };
            let can_undo = find.reproduced && lengthening.is_none() && sh.shrinker.can_undo();
            // Every confirming run is made, so the rate is over all of them, unless a change
            // can be undone and the rate is already out of reach.
            let (hits, runs, first_hit) = self
                .rerun(
                    Phase::Confirm,
                    &schedule,
                    find.class,
                    find.found.seed,
                    cfg.confirm,
                    |hits, runs| {
                        runs >= cfg.confirm || (can_undo && runs - hits > cfg.confirm - want)
                    },
                )
                .await?;
            if hits >= want || self.interrupt.is_cancelled() {
                return Ok((schedule, hits, runs, first_hit));
            }
            if can_undo {
                self.undo_last(sh, schedule, hits, runs);
                continue;
            }
            let before = lengthening.as_ref().map(|(_, c)| (c.1, c.2));
            let longer = (find.reproduced && lengthen_again(before, hits, runs))
                .then(|| lengthened(&schedule, self.longest_ms()))
                .flatten();
            let this = (schedule, hits, runs, first_hit);
            let Some(longer) = longer else {
                // The better of this length and the one before (a rate that fell keeps the
                // shorter run).
                return Ok(match lengthening {
                    Some((_, prev)) => better(prev, this),
                    None => this,
                });
            };
            let step = format!(
                "confirming: {} (the schedule reproduced {hits}/{runs}; {want}/{} wanted)",
                longer.change, cfg.confirm
            );
            self.confirm_step(step, this.0.clone(), hits, runs);
            lengthening = Some((longer.schedule, this));
        }
    }

    /// Undoes the last change shrinking kept, after `schedule` (with it) confirmed `hits` of
    /// `runs`, too seldom; the change goes from `removed` to `undone`.
    fn undo_last(&mut self, sh: &mut Shrinking, schedule: Schedule, hits: u32, runs: u32) {
        let change = sh.shrinker.undo().expect("a change to undo");
        let step = format!(
            "undone: {change} (the schedule with it reproduced {hits}/{runs} when confirming; \
             {want}/{} wanted)",
            self.cfg.confirm,
            want = self.cfg.need.hits_in(self.cfg.confirm),
        );
        self.confirm_step(step, schedule, hits, runs);
        if let Some(i) = sh.removed.iter().rposition(|r| r == &change) {
            sh.removed.remove(i);
        }
        sh.undone.push(change);
    }

    /// Says and records a step of confirming that was not kept: a change undone, or a longer
    /// run tried.
    fn confirm_step(&mut self, step: String, schedule: Schedule, hits: u32, runs: u32) {
        (self.say)(&format!("  {step}"));
        self.ex.shrink.push(ShrinkStep {
            change: step,
            schedule,
            hits,
            runs,
            kept: false,
        });
    }

    /// Writes the confirmed schedule as `<base>-shrunk.toml` (expected invalid, run with the
    /// seed of its first confirming hit), says where, and records it as the exploration's
    /// result.
    fn write_shrunk(
        &mut self,
        find: &Find,
        sh: &Shrinking,
        confirmed: Confirmed,
    ) -> Result<(), RunError> {
        let cfg = self.cfg;
        let (schedule, hits, runs, first_hit) = confirmed;
        let seed = first_hit.unwrap_or(find.found.seed);
        let file = self.ex.dir.join(format!("{}-shrunk.toml", cfg.base.name));
        let command = repeat_command(&cfg.program, &file, seed, &cfg.store, cfg.toxiproxy);
        let comment = self.shrunk_comment(find, sh, &schedule, (hits, runs), &command);
        let name = format!("{}-shrunk", cfg.base.name);
        let text = cfg
            .base
            .render(&schedule, &name, &comment, Some("invalid"), seed);
        lockpick_store::write_atomic(&file, text.as_bytes())
            .map_err(|e| RunError::store(&file, e))?;
        (self.say)(&format!(
            "{}; reproduced {hits}/{runs}\n  scenario: {}\n  repeat:   {command}",
            schedule.shrunk_headline(find.reproduced),
            file.display()
        ));
        self.ex.shrunk = Some(Shrunk {
            file,
            schedule,
            hits,
            runs,
            seed,
            command,
            removed: sh.removed.clone(),
            shrunk: find.reproduced,
            budget_ran_out: sh.budget_ran_out,
        });
        Ok(())
    }

    /// The comment on top of the shrunk scenario: where it was found, how often `schedule`
    /// reproduced (`hits` of `runs`) and the command that repeats it, then how it was
    /// lengthened, shrunk or not, and what was removed or kept.
    fn shrunk_comment(
        &self,
        find: &Find,
        sh: &Shrinking,
        schedule: &Schedule,
        (hits, runs): (u32, u32),
        command: &str,
    ) -> Vec<String> {
        let cfg = self.cfg;
        let found = &find.found;
        let confirm_seed = found.seed;
        let mut comment = vec![
            format!(
                "Shrunk by `lockpick explore` {} from run {} ({}), which found: {}",
                self.ex.id,
                find.n,
                found.schedule.describe(),
                find.class.about()
            ),
            format!(
                "Reproduced in {hits} of {runs} runs (seeds {confirm_seed} to {}); repeat with: {command}",
                confirm_seed.wrapping_add(runs.saturating_sub(1) as u64)
            ),
        ];
        if let Some(ms) = find.longer {
            comment.push(format!(
                "It reproduced too seldom on the {} ms run it was found on, and was shrunk from a {ms} ms run.",
                found.schedule.duration_ms
            ));
        }
        if schedule.duration_ms > sh.shrinker.current().duration_ms {
            comment.push(format!(
                "It confirmed too seldom on the {} ms run it was shrunk to, and is confirmed on a {} ms run.",
                sh.shrinker.current().duration_ms,
                schedule.duration_ms
            ));
        }
        if !find.reproduced {
            comment.push(format!(
                "Not shrunk: the schedule as found did not reproduce in {} of {} re-runs.",
                cfg.need.k, cfg.need.n
            ));
        } else if sh.removed.is_empty() && !sh.budget_ran_out {
            comment.push("Nothing could be removed.".into());
        }
        if sh.budget_ran_out {
            comment.push(format!(
                "Shrinking stopped when its budget ({:.0} s) ran out, with changes left to try; a longer --shrink-budget may remove more.",
                cfg.shrink_budget.as_secs_f64()
            ));
        }
        if !sh.removed.is_empty() {
            comment.push("Removed:".into());
            comment.extend(sh.removed.iter().map(|r| format!("  - {r}")));
        }
        if !sh.undone.is_empty() {
            comment.push(format!(
                "Kept although shrinking had removed them (without them it reproduced below {} of {}):",
                cfg.need.hits_in(cfg.confirm),
                cfg.confirm
            ));
            comment.extend(sh.undone.iter().map(|r| format!("  - {r}")));
        }
        comment
    }
}

/// Why an exploration could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum ExploreError {
    /// The scenario, `--faults` or another argument cannot be explored.
    #[error("{0}")]
    Input(String),
    /// Runs could not be carried out.
    #[error(transparent)]
    Run(#[from] RunError),
}
