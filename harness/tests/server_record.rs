//! The server's own record of the lock (`server.jsonl`) as a real run on one redis-server
//! writes it: the watcher's lines read with the checker's reader, set beside the history, and
//! what the run's check makes of them. Judged on what the history and the record show (which
//! process was paused, which value it holds, what the server did with that value), never on
//! how long anything took on this loaded machine.

mod scenario_support;

use lockpick_checker::history::{Event, EventKind, Process, F};
use lockpick_checker::lock::FindingKind;
use lockpick_checker::server_record::{read_server_record, RecordChange, ServerEvent};
use lockpick_checker::verdict::Verdict;
use scenario_support::{expecting, history, run, run_min_ops};
use std::collections::BTreeSet;
use std::path::Path;

const KEY: &str = "lockpick:lock:lock";

fn record(dir: &Path) -> Vec<ServerEvent> {
    let path = dir.join("server.jsonl");
    assert!(path.is_file(), "no server.jsonl in {}", dir.display());
    let read = read_server_record(&path).expect("the checker reads the watcher's record");
    assert!(read.torn.is_none(), "a finished run leaves no torn line");
    read.events
}

/// The holder values process `p`'s granted acquires name, with the acquire's history index.
fn holder_values(events: &[Event], p: u64) -> Vec<(u64, String)> {
    events
        .iter()
        .filter(|e| e.process == Process::Client(p) && e.f == F::Acquire)
        .filter(|e| e.kind == EventKind::Ok)
        .filter_map(|e| Some((e.index, e.value.holder.clone()?)))
        .collect()
}

/// Every granted acquire of the history that names a holder value, process by process, in
/// order: (process, its `acquire ok`'s index, the value, whether it is the process's last).
fn granted(events: &[Event]) -> Vec<(u64, u64, String, bool)> {
    let processes: BTreeSet<u64> = events
        .iter()
        .filter_map(|e| match e.process {
            Process::Client(p) => Some(p),
            _ => None,
        })
        .collect();
    let mut out = Vec::new();
    for p in processes {
        let values = holder_values(events, p);
        let n = values.len();
        for (i, (acquired, value)) in values.into_iter().enumerate() {
            out.push((p, acquired, value, i + 1 == n));
        }
    }
    out
}

/// The run's silent losses, at least one, each naming one process, a client the nemesis
/// paused (no client of these scenarios crashes, so client i is process i throughout).
fn losses_of_paused<'a>(
    report: &'a lockpick_checker::lock::LockReport,
    events: &[Event],
) -> Vec<(&'a lockpick_checker::lock::Finding, u64)> {
    let paused: BTreeSet<u64> = events
        .iter()
        .filter(|e| e.process == Process::Nemesis && e.f == F::Pause)
        .filter_map(|e| e.value.client)
        .collect();
    assert!(!paused.is_empty(), "the schedule pauses a client");
    let losses: Vec<_> = (report.observations.iter())
        .filter(|f| f.kind == FindingKind::SilentLoss)
        .map(|loss| {
            let [p] = loss.processes[..] else {
                panic!("a silent loss names one process: {loss:?}");
            };
            assert!(
                paused.contains(&p),
                "process {p} was never paused: {loss:?}"
            );
            (loss, p)
        })
        .collect();
    assert!(!losses.is_empty(), "no silent loss: {report}");
    losses
}

/// The change of the key that follows the `set` of `value` in the record (renewals skipped),
/// if the record has that set: of the Redis lock's one key, or of whichever key an etcd lock's
/// holder set (a key per waiter).
fn after_set<'a>(
    server: &'a [ServerEvent],
    value: &str,
) -> Option<(&'a ServerEvent, Option<&'a ServerEvent>)> {
    let at = server.iter().position(|e| {
        (e.key == KEY || e.node == "etcd")
            && e.event == RecordChange::Set
            && e.value.as_deref() == Some(value)
    })?;
    let key = &server[at].key;
    let next = server[at + 1..]
        .iter()
        .find(|e| &e.key == key && e.event != RecordChange::Renewed);
    Some((&server[at], next))
}

#[test]
fn a_paused_holder_s_key_expires_under_it_and_the_run_reports_a_silent_loss() {
    let (report, dir) = expecting(run("redis-gc-pause"), Verdict::Invalid);
    let events = history(&dir);
    let server = record(&dir);
    assert!(server.iter().all(|e| e.node == "n1"), "one lock node");
    let view = report
        .server
        .as_ref()
        .expect("results carry the server view");
    assert_eq!(view.events, server.len() as u64);
    for (loss, p) in losses_of_paused(&report, &events) {
        assert!(
            loss.summary.starts_with(&format!("process {p} held")),
            "{}",
            loss.summary
        );
        // The record shows it, in the lines the finding cites: one of p's holder values set,
        // and then expired under it (the next change of the key).
        let cited: Vec<&ServerEvent> = (loss.server_indices.iter())
            .map(|&i| &server[i as usize])
            .collect();
        let set = cited
            .iter()
            .find(|e| e.event == RecordChange::Set)
            .unwrap_or_else(|| panic!("no set among the lines cited: {cited:?}"));
        let value = set.value.as_deref().expect("a set names its value");
        assert!(
            holder_values(&events, p).iter().any(|(_, v)| v == value),
            "{value} is not a holder value of process {p}"
        );
        let (_, next) = after_set(&server, value).expect("the set is in the record");
        let next = next.expect("the value went");
        assert_eq!(next.event, RecordChange::Expired, "{next:?}");
        assert!(loss.server_indices.contains(&next.index), "{cited:?}");
    }
}

#[test]
fn without_faults_every_recorded_value_is_deleted_by_its_own_release() {
    let (report, dir) = expecting(run("redis-baseline"), Verdict::Valid);
    let events = history(&dir);
    let server = record(&dir);
    let view = report
        .server
        .as_ref()
        .expect("results carry the server view");
    let lock = &view.locks[0];
    assert_eq!(
        (lock.silent_losses, lock.silent_retakes),
        (0, 0),
        "{report}"
    );
    assert!(
        report
            .observations
            .iter()
            .all(|f| !matches!(f.kind, FindingKind::SilentLoss | FindingKind::SilentRetake)),
        "{report}"
    );
    let all = granted(&events);
    let (holdings, mut recorded) = (all.len() as u64, 0);
    for (p, acquired, value, _) in all {
        // The watcher leaves out a set whose value a later write may have replaced before it
        // read it: such a holding is not in the record, never misattributed.
        let Some((_, next)) = after_set(&server, &value) else {
            continue;
        };
        recorded += 1;
        let next = next.unwrap_or_else(|| panic!("{value} never went"));
        assert_eq!(next.event, RecordChange::Deleted, "{value}: {next:?}");
        // Its own release: p's first release after this acquire was invoked before the
        // server's deletion was seen.
        let (released, _) = holding_end(&events, p, acquired)
            .unwrap_or_else(|| panic!("process {p} never released {value}"));
        assert!(
            released <= next.time_ns,
            "{value} deleted at {} before its release at {released}",
            next.time_ns,
        );
    }
    assert_mostly_recorded(holdings, recorded, lock.holdings_judged, &report);
}

#[test]
fn on_servers_kept_between_runs_each_run_records_only_its_own_values() {
    use lockpick_harness::run::{run_scenario_in, RunOptions, ServerPool};
    use lockpick_harness::scenario::load_scenario;
    let rt = tokio::runtime::Runtime::new().unwrap();
    let store = tempfile::tempdir().unwrap();
    let mut pool = ServerPool::reusing();
    let scenario = load_scenario("redis-baseline").unwrap();
    let mut dirs = Vec::new();
    for seed in [1, 2] {
        let opts = RunOptions {
            seed: Some(seed),
            store: store.path().to_owned(),
            reproduce: format!("cargo run -- scenario redis-baseline --seed {seed}"),
            ..RunOptions::default()
        };
        let outcome = rt
            .block_on(run_scenario_in(
                &scenario,
                &opts,
                tokio_util::sync::CancellationToken::new(),
                &mut pool,
            ))
            .unwrap_or_else(|e| panic!("seed {seed}: harness error: {e}"));
        dirs.push(outcome.dir);
    }
    rt.block_on(pool.close());
    for dir in &dirs {
        let events = history(dir);
        let ours: BTreeSet<String> = events
            .iter()
            // Invocations too: an acquire whose reply was lost (info) may have set its value.
            .filter(|e| e.f == F::Acquire)
            .filter_map(|e| e.value.holder.clone())
            .collect();
        let server = record(dir);
        assert!(!server.is_empty(), "{}", dir.display());
        // The watcher started after the reset and stopped at its run's end: every value it
        // saw set is one this run's history names.
        for e in server.iter().filter(|e| e.event == RecordChange::Set) {
            let value = e.value.as_deref().unwrap();
            assert!(
                ours.contains(value),
                "{value} is no holder value of {}",
                dir.display()
            );
        }
    }
    let run = |dir: &Path| -> lockpick_store::RunState {
        serde_json::from_slice(&std::fs::read(dir.join("run.json")).unwrap()).unwrap()
    };
    let (a, b) = (run(&dirs[0]), run(&dirs[1]));
    let (a, b) = (a.server_instance.unwrap(), b.server_instance.unwrap());
    assert_eq!(
        (a.id, b.run),
        (b.id, 2),
        "the second run did not reuse the servers"
    );
}

/// Each node the nemesis crashed, with when the crash was invoked, in history order.
fn crashes(events: &[Event]) -> Vec<(String, u64)> {
    events
        .iter()
        .filter(|e| e.process == Process::Nemesis && e.f == F::Crash && e.kind == EventKind::Invoke)
        .flat_map(|e| e.value.nodes.iter().map(move |n| (n.clone(), e.time_ns)))
        .collect()
}

#[test]
fn redlock_masters_that_crash_without_persistence_are_reset_in_the_record() {
    let (_, dir) = expecting(run("redlock-crash-no-persistence"), Verdict::Invalid);
    let events = history(&dir);
    let server = record(&dir);
    let nodes: BTreeSet<&str> = server.iter().map(|e| e.node.as_str()).collect();
    assert_eq!(
        nodes,
        BTreeSet::from(["n1", "n2", "n3", "n4", "n5"]),
        "every master"
    );
    let crashes = crashes(&events);
    assert!(!crashes.is_empty());
    for (i, (node, at)) in crashes.iter().enumerate() {
        // The node's next crash, if any: its reset for this one comes before.
        let next = crashes[i + 1..]
            .iter()
            .find(|(n, _)| n == node)
            .map_or(u64::MAX, |(_, t)| *t);
        assert!(
            server.iter().any(|e| e.node == *node
                && e.event == RecordChange::Reset
                && e.time_ns >= *at
                && e.time_ns < next),
            "no reset of {node} after its crash at {at}"
        );
    }
    let resets = server
        .iter()
        .filter(|e| e.event == RecordChange::Reset)
        .count();
    assert_eq!(resets, crashes.len(), "one reset per crash");
}

#[test]
fn redlock_masters_that_crash_with_aof_always_keep_their_records() {
    let (_, dir) = expecting(run("redlock-crash-aof-always"), Verdict::Valid);
    let events = history(&dir);
    let server = record(&dir);
    assert!(!crashes(&events).is_empty());
    assert!(server.iter().all(|e| e.event != RecordChange::Reset));
}

// etcd: one record for the cluster (node `etcd`), a key per waiter whose value is the holder's.

/// The holder values of every acquire in the history (invocations too: an acquire whose
/// reply was lost may have put its key).
/// A redis-sentinel master cut off from its replica and the sentinels (still reached by its
/// clients): the record is the master's, as one node, `master`; the failover is its reset,
/// saying which node the sentinels made the master; a holder granted on the old master before
/// it is silently lost there (its value is not on the new master), and every grant after it
/// is a value set on the new master.
#[test]
fn the_sentinel_record_follows_the_master_through_a_failover() {
    // Holds of 11 s: a handful of operations is the whole run.
    let (report, dir) = expecting(
        run_min_ops("redis-sentinel-split-brain", 2),
        Verdict::Invalid,
    );
    let events = history(&dir);
    let server = record(&dir);
    assert!(server.iter().all(|e| e.node == "master"), "{server:?}");
    let resets: Vec<&ServerEvent> = (server.iter())
        .filter(|e| e.event == RecordChange::Reset)
        .collect();
    // One failover: n1 (cut off) to n2, the only replica.
    let [switch] = resets[..] else {
        panic!("one failover, one reset: {server:?}");
    };
    assert_eq!(
        switch.value.as_deref(),
        Some("the sentinels made n2 the master (it was n1), and the lock's records are what n2 holds")
    );
    let granted = granted(&events);
    let at = |i: u64| events[i as usize].time_ns;
    // The grants after the switch are the new master's: each value set there.
    let after: Vec<_> = (granted.iter())
        .filter(|(_, acquired, ..)| at(*acquired) > switch.time_ns)
        .collect();
    assert!(!after.is_empty(), "no grant after the failover: {report}");
    for (p, _, value, _) in &after {
        assert!(
            (server.iter()).any(|e| e.event == RecordChange::Set
                && e.value.as_deref() == Some(value)
                && e.index > switch.index),
            "process {p}'s {value} is not on the new master"
        );
    }
    // The grants before it were on the old master, whose records the switch replaced; n2 never
    // had them (n1 was cut off from it from the start), so each holder that believed past the
    // switch is a silent loss citing it.
    let before: Vec<_> = (granted.iter())
        .filter(|(_, acquired, ..)| at(*acquired) < switch.time_ns)
        .collect();
    assert!(!before.is_empty(), "no grant before the failover: {report}");
    for (p, acquired, value, _) in before {
        let Some((released, _)) = holding_end(&events, *p, *acquired) else {
            continue;
        };
        if released <= switch.time_ns {
            continue;
        }
        let loss = (report.observations.iter())
            .find(|f| f.kind == FindingKind::SilentLoss && f.processes == [*p])
            .unwrap_or_else(|| panic!("process {p} ({value}) believed past the failover, and no silent loss: {report}"));
        assert!(loss.server_indices.contains(&switch.index), "{loss:?}");
        assert!(
            loss.summary.contains("the sentinels made n2 the master"),
            "{}",
            loss.summary
        );
    }
}

fn every_holder_value(events: &[Event]) -> BTreeSet<String> {
    events
        .iter()
        .filter(|e| e.f == F::Acquire)
        .filter_map(|e| e.value.holder.clone())
        .collect()
}

#[test]
fn an_etcd_holder_paused_past_its_lease_is_silently_lost_when_the_cluster_expires_its_key() {
    let (report, dir) = expecting(run("etcd-gc-pause"), Verdict::Invalid);
    let events = history(&dir);
    let server = record(&dir);
    assert!(
        server.iter().all(|e| e.node == "etcd"),
        "one record for the cluster"
    );
    // Every key the record saw put is a waiter's, its value the holder value the history names.
    let ours = every_holder_value(&events);
    for e in server.iter().filter(|e| e.event == RecordChange::Set) {
        let value = e.value.as_deref().unwrap();
        assert!(ours.contains(value), "{value} is no holder value");
        assert!(e.key.ends_with(value), "{e:?}");
    }
    for (loss, p) in losses_of_paused(&report, &events) {
        // Its key went with its lease: the cluster expired it (the lease is gone), no client
        // deleted it.
        let (_, next) = holder_values(&events, p)
            .iter()
            .filter_map(|(_, v)| after_set(&server, v))
            .find(|(_, next)| next.is_some_and(|n| loss.server_indices.contains(&n.index)))
            .unwrap_or_else(|| panic!("the lines cited are none of {p}'s keys: {loss:?}"));
        assert_eq!(next.unwrap().event, RecordChange::Expired, "{loss:?}");
    }
    // Released holdings are deleted by their own release, not expired.
    let view = report
        .server
        .as_ref()
        .expect("results carry the server view");
    assert!(view.locks[0].holdings_judged > 0, "{report}");
    assert!(
        server.iter().any(|e| e.event == RecordChange::Deleted),
        "no release deleted its key"
    );
}

#[test]
fn the_etcd_record_goes_on_through_the_leader_s_crash_and_restart() {
    let (report, dir) = expecting(run("etcd-kill-leader"), Verdict::Valid);
    let events = history(&dir);
    let server = record(&dir);
    let crash = crashes(&events);
    let (_, at) = crash.first().expect("the leader was killed");
    // Each change once (the members' reports of it folded into one line), and changes after
    // the crash are recorded (the watches of the members left carry on).
    let mut seen = BTreeSet::new();
    for e in &server {
        assert!(
            seen.insert((
                e.key.clone(),
                format!("{:?}", e.event),
                e.value.clone(),
                e.time_ns
            )),
            "written twice: {e:?}"
        );
    }
    assert!(
        server
            .iter()
            .any(|e| e.event == RecordChange::Set && e.time_ns > *at),
        "nothing recorded after the crash at {at}"
    );
    let view = report
        .server
        .as_ref()
        .expect("results carry the server view");
    let lock = &view.locks[0];
    assert_eq!(
        (lock.silent_losses, lock.silent_retakes),
        (0, 0),
        "{report}"
    );
    let holdings = granted(&events).len();
    assert!(
        lock.holdings_judged as usize * 10 >= holdings * 9,
        "{} of {holdings} judged: {report}",
        lock.holdings_judged
    );
}

// ZooKeeper: one record for the ensemble (node `zookeeper`), an ephemeral znode per waiter
// (`/locks/lock/<holder>-lock-<seq>`) whose data, the value, is the holder value of its acquire.

/// Runs the shipped scenario `name` with a workload of `duration_ms` (shorter than its own,
/// for CI time).
fn run_for(
    name: &str,
    duration_ms: u64,
) -> (
    lockpick_checker::lock::LockReport,
    Verdict,
    Option<Verdict>,
    scenario_support::RunDir,
) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    scenario_support::run_in(&rt, name, 20, |opts| opts.duration_ms = Some(duration_ms))
}

/// The change that follows the `set` of `value` on the znode it was set on, if the record has
/// that set.
fn znode_after_set<'a>(
    server: &'a [ServerEvent],
    value: &str,
) -> Option<(&'a ServerEvent, Option<&'a ServerEvent>)> {
    let at = server
        .iter()
        .position(|e| e.event == RecordChange::Set && e.value.as_deref() == Some(value))?;
    let key = &server[at].key;
    Some((&server[at], server[at + 1..].iter().find(|e| &e.key == key)))
}

/// Asserts the record is the ensemble's one record, every znode in it a waiter's named after
/// the holder value its data holds, each set once and ended at most once.
fn assert_zookeeper_record(events: &[Event], server: &[ServerEvent]) {
    assert!(!server.is_empty());
    assert!(
        server.iter().all(|e| e.node == "zookeeper"),
        "one record for the ensemble"
    );
    let ours = every_holder_value(events);
    let (mut set, mut ended) = (BTreeSet::new(), BTreeSet::new());
    for e in server {
        if e.event == RecordChange::Set {
            let value = e.value.as_deref().unwrap();
            assert!(ours.contains(value), "{value} is no holder value");
            assert!(
                e.key.starts_with(&format!("/locks/lock/{value}-lock-")),
                "{e:?}"
            );
            // Each change once, whichever members reported it.
            assert!(set.insert(&e.key), "set twice: {e:?}");
        } else {
            assert!(
                matches!(e.event, RecordChange::Deleted | RecordChange::Expired),
                "{e:?}"
            );
            assert!(set.contains(&e.key), "gone before it was set: {e:?}");
            assert!(ended.insert(&e.key), "gone twice: {e:?}");
        }
    }
}

/// The end of process `p`'s holding acquired at history index `acquired`: its next release's
/// invocation or failed renewal, and that release's outcome (`None`: a renewal ended it).
fn holding_end(events: &[Event], p: u64, acquired: u64) -> Option<(u64, Option<EventKind>)> {
    let mine = |e: &&Event| e.process == Process::Client(p) && e.index > acquired;
    let end = events.iter().filter(mine).find(|e| {
        (e.f == F::Release && e.kind == EventKind::Invoke)
            || (e.f == F::Renew && e.kind == EventKind::Fail)
    })?;
    if end.f == F::Renew {
        return Some((end.time_ns, None));
    }
    let outcome = events
        .iter()
        .filter(mine)
        .find(|e| e.f == F::Release && e.kind != EventKind::Invoke)
        .map(|e| e.kind);
    Some((end.time_ns, outcome))
}

#[test]
fn without_faults_each_zookeeper_holder_s_znode_is_deleted_by_its_own_release() {
    let (report, dir) = expecting(run_for("zookeeper-baseline", 2000), Verdict::Valid);
    let events = history(&dir);
    let server = record(&dir);
    assert_zookeeper_record(&events, &server);
    let view = report
        .server
        .as_ref()
        .expect("results carry the server view");
    let lock = &view.locks[0];
    assert_eq!(
        (lock.nodes.len(), lock.silent_losses, lock.silent_retakes),
        (1, 0, 0),
        "{report}"
    );
    assert_eq!(lock.unattributed_values, 0, "the values are holder values");
    let all = granted(&events);
    let (holdings, mut recorded) = (all.len() as u64, 0);
    for (p, acquired, value, _) in all {
        // Left out only when its znode was gone before any member read it.
        let Some((set, next)) = znode_after_set(&server, &value) else {
            continue;
        };
        recorded += 1;
        let Some((released, Some(EventKind::Ok))) = holding_end(&events, p, acquired) else {
            continue;
        };
        // Released: its own release deleted it, seen after the release was asked for.
        let next = next.unwrap_or_else(|| panic!("{value} never went"));
        assert_eq!(next.event, RecordChange::Deleted, "{value}: {next:?}");
        assert!(
            set.time_ns <= released && released <= next.time_ns,
            "{value}: set at {}, released at {released}, deleted at {}",
            set.time_ns,
            next.time_ns
        );
    }
    assert_mostly_recorded(holdings, recorded, lock.holdings_judged, &report);
}

#[test]
fn a_zookeeper_holder_paused_past_its_session_loses_its_znode_to_the_expiry() {
    // One pause (at 0.3-0.8 s, for 2-2.4 s: the next would come 2.5-3 s later).
    let (report, dir) = expecting(run_for("zookeeper-session-expiry", 2500), Verdict::Invalid);
    let events = history(&dir);
    let server = record(&dir);
    assert_zookeeper_record(&events, &server);
    // Each pause of a client: the process (client i is process i: no client of this scenario
    // crashes) and when it began.
    let pauses: Vec<(u64, u64)> = events
        .iter()
        .filter(|e| e.process == Process::Nemesis && e.f == F::Pause)
        .filter_map(|e| Some((e.value.client?, e.time_ns)))
        .collect();
    assert!(!pauses.is_empty(), "the schedule pauses a client");
    let mut expired = 0;
    for (p, paused) in pauses {
        // The holding it was paused in (the pause comes before a write, inside a holding).
        let time = |i: u64| events.iter().find(|e| e.index == i).unwrap().time_ns;
        let Some((acquired, value)) = holder_values(&events, p)
            .into_iter()
            .rfind(|(i, _)| time(*i) <= paused)
        else {
            continue;
        };
        let (end, _) = holding_end(&events, p, acquired).expect("the holding ended");
        // The history shows ZooKeeper let its znode go while it was paused: another process
        // was granted the lock before it let go.
        let rival = events.iter().any(|e| {
            e.f == F::Acquire
                && e.kind == EventKind::Ok
                && e.process != Process::Client(p)
                && paused < e.time_ns
                && e.time_ns < end
        });
        if end < paused || !rival {
            continue;
        }
        let (set, next) = znode_after_set(&server, &value)
            .unwrap_or_else(|| panic!("process {p}'s znode {value} is not in the record"));
        // It went while the holder was paused, before the holder let go: its session ended,
        // no release of the holder deleted it.
        let next = next.unwrap_or_else(|| panic!("{value} never went"));
        assert!(
            paused < next.time_ns && next.time_ns < end,
            "{value}: paused at {paused}, gone at {}, let go at {end}",
            next.time_ns
        );
        assert!(
            matches!(next.event, RecordChange::Expired | RecordChange::Deleted),
            "{next:?}"
        );
        if next.event == RecordChange::Expired {
            expired += 1;
        }
        // Whichever the history shows: told, or a silent loss citing the set and its end.
        let told = events.iter().any(|e| {
            e.process == Process::Client(p)
                && e.f == F::Notice
                && e.index > acquired
                && e.time_ns <= end
                && matches!(e.value.event.as_deref(), Some("lost" | "suspended"))
        });
        let loss = report
            .observations
            .iter()
            .find(|f| f.kind == FindingKind::SilentLoss && f.server_indices.contains(&next.index));
        if told {
            assert!(loss.is_none(), "process {p} was told: {loss:?}");
        } else {
            let loss = loss.unwrap_or_else(|| panic!("no silent loss of {value}: {report}"));
            assert_eq!(loss.processes, [p], "{loss:?}");
            assert!(loss.server_indices.contains(&set.index), "{loss:?}");
        }
    }
    // The member that reported a deletion said whether its owner's session was over.
    assert!(
        expired > 0,
        "no paused holder's znode was recorded expired: {report}"
    );
}

// SQL: the server's lock rows and session locks, polled every 10 ms on the server's own
// address (node `n1`, key the lock's name); a lease row's value is its holder column, an
// advisory lock's its backend's application_name, which the recipe sets to the holder value.

/// The `set` of `value` on its row, and the row's next change (renewals skipped).
fn row_after_set<'a>(
    server: &'a [ServerEvent],
    value: &str,
) -> Option<(&'a ServerEvent, Option<&'a ServerEvent>)> {
    let at = server
        .iter()
        .position(|e| e.event == RecordChange::Set && e.value.as_deref() == Some(value))?;
    let key = &server[at].key;
    let next = server[at + 1..]
        .iter()
        .find(|e| &e.key == key && e.event != RecordChange::Renewed);
    Some((&server[at], next))
}

/// The view's record of `value` (which value the node held from when to when).
fn ownership<'a>(
    report: &'a lockpick_checker::lock::LockReport,
    value: &str,
) -> &'a lockpick_checker::lock::Ownership {
    let view = report
        .server
        .as_ref()
        .expect("results carry the server view");
    view.locks
        .iter()
        .flat_map(|l| &l.records)
        .find(|r| r.value == value)
        .unwrap_or_else(|| panic!("no record of {value} in the view"))
}

#[test]
fn a_pg_lease_row_holder_paused_past_its_lease_is_silently_lost_at_its_ttl_end() {
    // One pause (at 0.3-0.8 s, for 0.7-1.1 s, past the 300 ms lease; the next comes 1.5 s
    // or more later).
    let (report, _, _, dir) = run_for("pg-lease-row-gc-pause", 2000);
    let events = history(&dir);
    let server = record(&dir);
    assert!(!server.is_empty());
    let ours = every_holder_value(&events);
    for e in &server {
        assert_eq!((e.node.as_str(), e.key.as_str()), ("n1", "lock"), "{e:?}");
        if e.event == RecordChange::Set {
            // The row's holder column: a holder value, with the lease the server gave it.
            assert!(ours.contains(e.value.as_deref().unwrap()), "{e:?}");
            assert!(e.ttl_ms.is_some_and(|t| t <= 300), "{e:?}");
        }
    }
    let pauses: Vec<(u64, u64)> = events
        .iter()
        .filter(|e| e.process == Process::Nemesis && e.f == F::Pause)
        .filter_map(|e| Some((e.value.client?, e.time_ns)))
        .collect();
    assert!(!pauses.is_empty(), "the schedule pauses a client");
    let time = |i: u64| events.iter().find(|e| e.index == i).unwrap().time_ns;
    let mut lost = 0;
    for (p, paused) in pauses {
        // The holding it was paused in (the pause comes before a write, inside a holding).
        let Some((acquired, value)) = holder_values(&events, p)
            .into_iter()
            .rfind(|(i, _)| time(*i) <= paused)
        else {
            continue;
        };
        let Some((end, _)) = holding_end(&events, p, acquired) else {
            continue;
        };
        if end < paused {
            continue;
        }
        // Its row's set, with its holder value and lease, and the next change of the row:
        // expired where the watcher saw the lease run out, or another holder's set over it.
        let Some((set, next)) = row_after_set(&server, &value) else {
            continue;
        };
        let ttl = set.ttl_ms.expect("a lease row's set has its ttl");
        let next = next.unwrap_or_else(|| panic!("{value} never went"));
        match next.event {
            RecordChange::Expired => {}
            RecordChange::Set => assert_ne!(next.value.as_deref(), Some(value.as_str())),
            _ => panic!("{value}: {next:?}"),
        }
        // Another holder's set after it: the next taker of the row.
        let taker = server[set.index as usize + 1..]
            .iter()
            .find(|e| e.event == RecordChange::Set)
            .expect("another holder took the row");
        assert!(
            !holder_values(&events, p)
                .iter()
                .any(|(_, v)| Some(v.as_str()) == taker.value.as_deref()),
            "{taker:?}"
        );
        // The checker ends it at its TTL's end (or where the watcher saw it go, if that came
        // first): expired, never later than set + ttl.
        let own = ownership(&report, &value);
        assert_eq!(own.ended, Some(lockpick_checker::lock::RecordEnd::Expired));
        let observed = own.observed_end_ns.unwrap();
        assert_eq!(
            own.end_ns,
            Some(observed.min(set.time_ns + ttl * 1_000_000)),
            "{own:?}"
        );
        // And the run reports the silent loss of the paused process, citing the set and its
        // end (it had no notice: the recipe has none to give).
        let loss = report
            .observations
            .iter()
            .find(|f| f.kind == FindingKind::SilentLoss && f.server_indices.contains(&set.index))
            .unwrap_or_else(|| panic!("no silent loss of {value}: {report}"));
        assert_eq!(loss.processes, [p], "{loss:?}");
        assert!(loss.server_indices.contains(&next.index), "{loss:?}");
        assert!(loss.summary.contains("it expired at"), "{}", loss.summary);
        lost += 1;
    }
    assert!(lost > 0, "no paused holding in the record: {report}");
}

#[test]
fn without_faults_each_pg_advisory_holder_s_lock_is_deleted_by_its_own_release() {
    let (report, dir) = expecting(run_for("pg-advisory-baseline", 1500), Verdict::Valid);
    let events = history(&dir);
    let server = record(&dir);
    let ours = every_holder_value(&events);
    for e in &server {
        assert_eq!((e.node.as_str(), e.key.as_str()), ("n1", "lock"), "{e:?}");
        if e.event == RecordChange::Set {
            // The holding backend's application_name: the holder value, no lease.
            assert!(ours.contains(e.value.as_deref().unwrap()), "{e:?}");
            assert_eq!(e.ttl_ms, None);
        }
    }
    let view = report
        .server
        .as_ref()
        .expect("results carry the server view");
    let lock = &view.locks[0];
    assert_eq!(
        (
            lock.silent_losses,
            lock.silent_retakes,
            lock.unattributed_values
        ),
        (0, 0, 0),
        "{report}"
    );
    let mut recorded = 0;
    for (p, acquired, value, last) in granted(&events) {
        // A holding shorter than the poll is often not seen.
        let Some((_, next)) = row_after_set(&server, &value) else {
            continue;
        };
        recorded += 1;
        let Some((released, Some(EventKind::Ok))) = holding_end(&events, p, acquired) else {
            continue;
        };
        let next = next.unwrap_or_else(|| panic!("{value} never went"));
        assert!(released <= next.time_ns, "{value}: {next:?}");
        // Its own release let it go: deleted while its session lived on. The last one may
        // read as expired: the session closed within the same poll, at the run's end.
        if !last {
            assert_eq!(next.event, RecordChange::Deleted, "{value}: {next:?}");
        } else {
            assert!(
                matches!(next.event, RecordChange::Deleted | RecordChange::Expired),
                "{value}: {next:?}"
            );
        }
    }
    assert!(recorded > 0, "no holding in the record: {report}");
    assert!(lock.holdings_judged > 0, "{report}");
}

/// Most holdings are in the record (the ones left out are counted as not judged), and at least
/// as many were judged: their value was seen on a node within them.
fn assert_mostly_recorded(
    holdings: u64,
    recorded: u64,
    judged: u64,
    report: &impl std::fmt::Display,
) {
    assert!(holdings > 0);
    assert!(
        recorded * 10 >= holdings * 9,
        "{recorded} of {holdings} recorded"
    );
    assert!(judged * 10 >= holdings * 9, "{report}");
}

/// A library adapter that reports the value its library stored (the protocol's `owner`):
/// every value the server recorded that an acquire reported is attributed to the process
/// whose acquire reported it, with four clients contending (where the window alone leaves
/// values nobody's when several wait at once); the others, and the values attributed to
/// nobody, are at most the acquires whose outcome is unknown.
fn assert_owners_attribute_every_value(scenario: &str) {
    let (report, dir) = expecting(run(scenario), Verdict::Valid);
    let events = history(&dir);
    let owners: std::collections::BTreeMap<String, u64> = events
        .iter()
        .filter(|e| e.f == F::Acquire && e.kind == EventKind::Ok)
        .filter_map(|e| match e.process {
            Process::Client(p) => Some((e.value.owner.clone()?, p)),
            _ => None,
        })
        .collect();
    let grants: Vec<_> = (events.iter())
        .filter(|e| e.f == F::Acquire && e.kind == EventKind::Ok)
        .collect();
    assert!(
        grants.iter().all(|e| e.value.owner.is_some()),
        "{scenario}: every grant names its owner value"
    );
    let view = report
        .server
        .as_ref()
        .expect("results carry the server view");
    let lock = &view.locks[0];
    assert!(!lock.records.is_empty(), "{report}");
    // An acquire whose outcome is unknown (info: its reply timed out on this loaded machine)
    // names no owner, though its library may have set a value: only those may be unreported.
    let unknown = (events.iter())
        .filter(|e| e.f == F::Acquire && e.kind == EventKind::Info)
        .count() as u64;
    let mut unreported = BTreeSet::new();
    for r in &lock.records {
        match owners.get(&r.value) {
            Some(p) => assert_eq!(r.process, Some(*p), "{scenario}: {r:?}"),
            None => {
                unreported.insert(r.value.clone());
            }
        }
    }
    assert!(
        unreported.len() as u64 <= unknown && lock.unattributed_values <= unknown,
        "{scenario}: values {unreported:?} reported by no acquire, {unknown} acquire(s) unknown: {report}"
    );
    assert!(
        lock.holdings_judged * 10 >= grants.len() as u64 * 9,
        "{report}"
    );
}

/// python-redis-lock's `Lock.id`, a random id per acquisition, on one Redis.
#[test]
fn python_redis_lock_s_owner_values_attribute_every_recorded_value_to_its_process() {
    assert_owners_attribute_every_value("python-redis-lock-baseline");
}

/// kazoo's `Lock` identifier, the data of its znode, on three ZooKeeper members.
#[test]
fn kazoo_s_owner_values_attribute_every_recorded_value_to_its_process() {
    assert_owners_attribute_every_value("python-kazoo-baseline");
}
