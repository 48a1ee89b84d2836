//! `lockpick suite`: every shipped scenario with an expected verdict, over several seeds, as a
//! safety regression that fails when any run does not reach its verdict. Each suite run is
//! recorded in `store/suite/<time>/suite.json` with a trend page over every stored run beside
//! it, and optionally as a JUnit file for CI.

use crate::cli::SuiteArgs;
use crate::outcome::{Exit, Failure, Outcome};
use crate::reproduce::Reproduce;
use crate::run_args::{runtime, write_report};
use lockpick_checker::results::RunResults;
use lockpick_checker::verdict::Verdict;
use lockpick_harness::matrix::{assign, RunCost, Shard};
use lockpick_harness::run::{relative_run, run_scenario_in, utc_stamp, RunOptions, ServerPool};
use lockpick_harness::scenario::{list_scenarios, load_scenario, Scenario};
use lockpick_reports::{CaseStatus, SuiteCase, SuiteRecord, SUITE_DIR, SUITE_VERSION};
use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

/// The most runs per scenario (`--seeds`): a nightly suite, not an endless loop.
const MAX_SEEDS: u64 = 10_000;

/// Runs the suite `args` asks for, prints its table and writes its record: each seed of each
/// scenario with an expected verdict (of this shard), until Ctrl-C or the time budget.
pub(super) fn suite(args: SuiteArgs) -> Outcome {
    check_seeds(&args)?;
    let budget = time_budget(&args)?;
    let scenarios = scenarios(&args.filter)?;
    for scenario in &scenarios {
        if !args.external.is_empty() {
            scenario.check_external(&args.external).map_err(|e| {
                Failure::Usage(format!("{e}; use --filter to pick the scenarios that can"))
            })?;
        }
    }
    let started_at = SystemTime::now();
    let started = Instant::now();
    let mut run = SuiteRun {
        args: &args,
        budget,
        started,
        record: SuiteRecord {
            v: SUITE_VERSION,
            started: utc_stamp(started_at),
            secs: 0.0,
            lockpick_version: lockpick_harness::LOCKPICK_BUILD.to_owned(),
            command: suite_command(&args),
            seeds: args.seeds,
            interrupted: false,
            shard: args.shard.map(|s| s.to_string()),
            missing_shards: Vec::new(),
            cases: Vec::new(),
        },
        mine: args
            .shard
            .map(|shard| shard_runs(&scenarios, args.seeds, shard)),
    };
    let rt = runtime();
    let result = rt.block_on(run.run(&scenarios));
    drop(rt);
    // Only the signal handler's installation can fail here: runs report their own errors.
    result?;
    let mut record = run.record;
    record.secs = started.elapsed().as_secs_f64();
    print_table(&record);
    let ended = ending(&record);
    // A record that cannot be written fails a suite that passed; a worse ending stays.
    match write_outputs(
        &args.store,
        args.junit.as_deref(),
        args.markdown.as_deref(),
        &record,
    ) {
        Err(e) if matches!(ended, Ok(Exit::Done)) => Err(e),
        Err(e) => {
            eprintln!("lockpick: failed to {e}");
            ended
        }
        Ok(()) => ended,
    }
}

/// Refuses `--seeds` outside 1 to [`MAX_SEEDS`].
fn check_seeds(args: &SuiteArgs) -> Result<(), Failure> {
    if !(1..=MAX_SEEDS).contains(&args.seeds) {
        return Err(Failure::Usage(format!(
            "read --seeds: {} is out of range; allowed: 1 to {MAX_SEEDS} (0 runs would test nothing)",
            args.seeds
        )));
    }
    Ok(())
}

/// `--time-budget`, in seconds above 0 and at most a week.
fn time_budget(args: &SuiteArgs) -> Result<Option<Duration>, Failure> {
    match args.time_budget {
        Some(t) if !(t > 0.0 && t.is_finite() && t <= 7.0 * 86_400.0) => {
            Err(Failure::Usage(format!(
                "read --time-budget: {t:?} is not a number of seconds from above 0 to 604800 (a week)"
            )))
        }
        t => Ok(t.map(Duration::from_secs_f64)),
    }
}

/// A suite while it runs: what it was asked, its time budget from when it started, the runs
/// of its shard, and the record of the runs so far.
struct SuiteRun<'a> {
    args: &'a SuiteArgs,
    budget: Option<Duration>,
    started: Instant,
    /// The (scenario, seed) runs of `--shard`; `None` runs them all.
    mine: Option<BTreeSet<(String, u64)>>,
    record: SuiteRecord,
}

impl SuiteRun<'_> {
    /// Runs every scenario's seeds in turn on one pool of servers, until Ctrl-C: the runs
    /// left are then recorded as not run. `Err` only when the signal handler cannot be
    /// installed.
    async fn run(&mut self, scenarios: &[Scenario]) -> Result<(), Failure> {
        let interrupt = crate::signals::install()?;
        let mut pool = ServerPool::new(!self.args.fresh_servers);
        for scenario in scenarios {
            self.run_scenario(scenario, &interrupt, &mut pool).await;
        }
        pool.close().await;
        Ok(())
    }

    /// Runs `scenario`'s seeds of this shard, each recorded as a case, and says how many
    /// reached the expected verdict.
    async fn run_scenario(
        &mut self,
        scenario: &Scenario,
        interrupt: &tokio_util::sync::CancellationToken,
        pool: &mut ServerPool,
    ) {
        let expected = scenario.expected.expect("filtered on expected");
        let mut matched = 0;
        let mut planned = 0;
        for k in 0..self.args.seeds {
            let seed = scenario.seed.wrapping_add(k);
            if self
                .mine
                .as_ref()
                .is_some_and(|m| !m.contains(&(scenario.name.clone(), seed)))
            {
                continue;
            }
            planned += 1;
            let mut case = self.case(scenario, seed, expected);
            if let Some(why) = self.not_run(interrupt) {
                case.message = why;
                self.record.cases.push(case);
                continue;
            }
            if self
                .run_case(scenario, expected, &mut case, interrupt, pool)
                .await
            {
                matched += 1;
            }
            self.record.cases.push(case);
        }
        if planned > 0 {
            eprintln!("{}: {matched}/{planned} as expected", scenario.name);
        }
    }

    /// The case of `scenario` with `seed`, not run yet (skipped until it is), with the
    /// command that reproduces it.
    fn case(&self, scenario: &Scenario, seed: u64, expected: Verdict) -> SuiteCase {
        let args = self.args;
        let reproduce = Reproduce::on_servers(
            scenario.name.clone(),
            seed,
            args.toxiproxy,
            &args.external,
            args.resource,
            &args.store,
        );
        SuiteCase {
            scenario: scenario.name.clone(),
            seed,
            expected: expected.name().to_owned(),
            status: CaseStatus::Skipped,
            verdict: None,
            message: String::new(),
            reproduce,
            run: None,
            secs: 0.0,
            ops: 0,
        }
    }

    /// Why the next run is not made, if it is not: the suite was interrupted (which the
    /// record notes), or its time budget is spent.
    fn not_run(&mut self, interrupt: &tokio_util::sync::CancellationToken) -> Option<String> {
        if interrupt.is_cancelled() {
            self.record.interrupted = true;
            return Some("not run: the suite was interrupted".to_owned());
        }
        let spent = self.budget.filter(|b| self.started.elapsed() >= *b)?;
        Some(format!(
            "not run: the time budget of {} s was spent",
            spent.as_secs_f64()
        ))
    }

    /// Runs `case`, recording its time and how it ended; true when it reached `expected`.
    async fn run_case(
        &mut self,
        scenario: &Scenario,
        expected: Verdict,
        case: &mut SuiteCase,
        interrupt: &tokio_util::sync::CancellationToken,
        pool: &mut ServerPool,
    ) -> bool {
        let args = self.args;
        let opts = RunOptions {
            seed: Some(case.seed),
            store: args.store.clone(),
            reproduce: case.reproduce.clone(),
            toxiproxy: args.toxiproxy,
            external: args.external.clone(),
            resource: args.resource,
            ..RunOptions::default()
        };
        let run_started = Instant::now();
        let outcome = run_scenario_in(scenario, &opts, interrupt.clone(), pool).await;
        case.secs = run_started.elapsed().as_secs_f64();
        match outcome {
            Ok(outcome) => self.judge(scenario, expected, case, &outcome),
            Err(e) => {
                case.status = CaseStatus::Error;
                case.message = format!("failed to {e}");
                eprintln!(
                    "ERROR {} seed {}: failed to {e}; reproduce: {}",
                    scenario.name, case.seed, case.reproduce
                );
                false
            }
        }
    }

    /// Writes the report of a run that was carried out and records it in `case`: passed when
    /// it reached `expected`, skipped when it was cut short (which proves nothing either way),
    /// else a mismatch, said on standard error. True when it passed.
    fn judge(
        &mut self,
        scenario: &Scenario,
        expected: Verdict,
        case: &mut SuiteCase,
        outcome: &lockpick_harness::run::RunOutcome,
    ) -> bool {
        let r = &outcome.results;
        write_report(&outcome.dir, r);
        case.verdict = Some(r.verdict.name().to_owned());
        case.ops = r.ops;
        case.run = relative_run(&self.args.store, &outcome.dir);
        if r.interrupted {
            self.record.interrupted = true;
        }
        if r.verdict == expected {
            case.status = CaseStatus::Passed;
            return true;
        }
        if r.interrupted {
            // A run cut short proves nothing either way.
            case.status = CaseStatus::Skipped;
            case.message = format!("interrupted: the partial history was {}", r.verdict);
        } else {
            case.status = CaseStatus::Mismatch;
            case.message = mismatch_message(r, expected);
            eprintln!(
                "MISMATCH {} seed {}: {} (expected {expected}); store {}; reproduce: {}",
                scenario.name,
                case.seed,
                r.verdict,
                outcome.dir.display(),
                r.reproduce
            );
        }
        false
    }
}

/// How a suite with `record` ends: interrupted, nothing ran, a mismatch (5), an error (4), or
/// all as expected.
pub(super) fn ending(record: &SuiteRecord) -> Outcome {
    let ran = record.cases.len() - record.count(CaseStatus::Skipped);
    if record.interrupted {
        Ok(Exit::Interrupted)
    } else if ran == 0 {
        // A nightly that ran nothing has not shown that anything is still safe.
        eprintln!("lockpick: no run was made (the time budget was spent before the first)");
        Ok(Exit::Verdict(Verdict::Unknown))
    } else if record.count(CaseStatus::Mismatch) > 0 {
        Ok(Exit::SuiteMismatch)
    } else if record.count(CaseStatus::Error) > 0 {
        Err(Failure::harness(format!(
            "run {} of the suite's runs (each ERROR above names why and how to reproduce it)",
            record.count(CaseStatus::Error)
        )))
    } else {
        Ok(Exit::Done)
    }
}

/// The (scenario, seed) runs of `shard`: every run of the suite is placed, the same on every
/// machine, by its expected cost (workload plus the server's start and stop).
fn shard_runs(scenarios: &[Scenario], seeds: u64, shard: Shard) -> BTreeSet<(String, u64)> {
    let runs: Vec<RunCost> = scenarios
        .iter()
        .flat_map(|s| {
            (0..seeds).map(move |k| RunCost {
                row: s.name.clone(),
                column: String::new(),
                seed: s.seed.wrapping_add(k),
                cost_ms: s.expected_run_ms(),
            })
        })
        .collect();
    let owner = assign(&runs, shard.n);
    runs.into_iter()
        .zip(owner)
        .filter(|(_, k)| *k == shard.k)
        .map(|(r, _)| (r.row, r.seed))
        .collect()
}

/// The shipped scenarios with an expected verdict whose name contains one of `filter` (all of
/// them when it is empty), a scenario in a group folder (`scenarios/known-bugs/`) named
/// `group/name` for this: `--filter known-bugs` runs that folder.
fn scenarios(filter: &[String]) -> Result<Vec<Scenario>, Failure> {
    let mut scenarios = Vec::new();
    for entry in list_scenarios() {
        let name = entry.qualified_name();
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        match load_scenario(&entry.path.to_string_lossy()) {
            Ok(s) if s.expected.is_some() => scenarios.push(s),
            Ok(_) => {}
            Err(e) => return Err(e.into()),
        }
    }
    if scenarios.is_empty() {
        return Err(Failure::usage(
            "find scenarios: no scenario with an expected verdict matches",
        ));
    }
    Ok(scenarios)
}

/// Why a run did not reach its verdict, in sentences a CI page can show.
fn mismatch_message(r: &RunResults, expected: Verdict) -> String {
    let mut lines = vec![format!(
        "{} seed {}: {} (expected {expected})",
        r.scenario,
        r.seed,
        r.verdict.headline()
    )];
    if let (Verdict::NotExposed, Some(why)) = (r.verdict, &r.not_exposed) {
        lines.push(format!("not exposed: {why}"));
    }
    for v in &r.lock.violations {
        // A deadlock is liveness (the run is stuck), not a safety violation.
        let what = if v.kind.is_safety() {
            "violation"
        } else {
            "stuck"
        };
        lines.push(format!("{what} {}: {}", v.kind, v.summary));
    }
    for u in &r.lock.unknowns {
        lines.push(format!("unknown: {u}"));
    }
    if let Some(lin) = &r.linearizability {
        if lin.verdict != Verdict::Valid {
            lines.push(format!("linearizability ({}): {}", lin.model, lin.verdict));
            if let Some(reason) = &lin.unknown_reason {
                lines.push(format!("  undecided: {reason}"));
            }
        }
    }
    if r.lock.violations.is_empty() && expected == Verdict::Invalid {
        lines.push(
            "no violation was found: the faults did not break the lock in this run".to_owned(),
        );
    }
    lines.join("\n")
}

/// The command line that runs this suite again.
fn suite_command(args: &SuiteArgs) -> String {
    let mut cmd = format!(
        "{} suite --seeds {}",
        crate::reproduce::program(),
        args.seeds
    );
    if !args.filter.is_empty() {
        cmd.push_str(&format!(" --filter {}", args.filter.join(",")));
    }
    if let Some(t) = args.time_budget {
        cmd.push_str(&format!(" --time-budget {t}"));
    }
    if let Some(shard) = args.shard {
        cmd.push_str(&format!(" --shard {shard}"));
    }
    cmd.push_str(&crate::reproduce::server_flags(
        args.toxiproxy,
        &args.external,
        args.resource,
    ));
    cmd.push_str(&crate::reproduce::store_flag(&args.store));
    cmd
}

/// The per-scenario table on standard output.
pub(super) fn print_table(record: &SuiteRecord) {
    outln!(
        "{:<34} {:<9} {:>7} {:>9} {:>8}  verdicts",
        "scenario",
        "expected",
        "matched",
        "s/run",
        "ops"
    );
    let mut names: Vec<&str> = Vec::new();
    for c in &record.cases {
        if !names.contains(&c.scenario.as_str()) {
            names.push(&c.scenario);
        }
    }
    for name in names {
        let cases: Vec<&SuiteCase> = record.cases.iter().filter(|c| c.scenario == name).collect();
        let ran: Vec<&&SuiteCase> = cases
            .iter()
            .filter(|c| c.status != CaseStatus::Skipped)
            .collect();
        let matched = cases
            .iter()
            .filter(|c| c.status == CaseStatus::Passed)
            .count();
        let secs: f64 = ran.iter().map(|c| c.secs).sum::<f64>() / ran.len().max(1) as f64;
        let ops: f64 = ran.iter().map(|c| c.ops as f64).sum::<f64>() / ran.len().max(1) as f64;
        let verdicts: Vec<&str> = cases
            .iter()
            .map(|c| c.verdict.as_deref().unwrap_or(c.status.name()))
            .collect();
        outln!(
            "{:<34} {:<9} {:>3}/{:<3} {:>9.1} {:>8.0}  {}",
            name,
            cases[0].expected,
            matched,
            cases.len(),
            secs,
            ops,
            verdicts.join(" ")
        );
    }
}

/// Writes `suite.json` and the trend page under `store/suite/<time>/`, the JUnit file and the
/// markdown page.
pub(super) fn write_outputs(
    store: &Path,
    junit: Option<&Path>,
    markdown: Option<&Path>,
    record: &SuiteRecord,
) -> Result<(), Failure> {
    let dir = store.join(SUITE_DIR).join(&record.started);
    std::fs::create_dir_all(&dir).map_err(|source| Failure::CreateDir {
        path: dir.clone(),
        source,
    })?;
    lockpick_reports::write_suite_record(&dir, record).map_err(Failure::WriteOutput)?;
    let page = lockpick_reports::write_suite_page(store, &dir).map_err(Failure::WriteOutput)?;
    outln!("suite: {}", page.display());
    if let Some(path) = junit {
        lockpick_reports::write_atomic(path, lockpick_reports::junit_xml(record).as_bytes())
            .map_err(Failure::WriteOutput)?;
        outln!("junit: {}", path.display());
    }
    if let Some(path) = markdown {
        let text = lockpick_reports::suite_markdown(&dir).map_err(Failure::WriteOutput)?;
        lockpick_reports::write_atomic(path, text.as_bytes()).map_err(Failure::WriteOutput)?;
        outln!("markdown: {}", path.display());
    }
    Ok(())
}
