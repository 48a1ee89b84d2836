//! The streaming checker against the in-memory one on generated histories: same report,
//! field for field, for both properties and with and without the deadlock check.

use super::check_locks_in_memory;
use crate::history::{Event, EventKind, Process, Value, F, FORMAT_VERSION};
use crate::lock::{check_locks, Finding, FindingKind, LockCheckParams, LockReport, Property};

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

struct Client {
    id: u64,
    in_flight: Option<(F, Option<String>, Value)>,
    token: Option<u64>,
}

/// A history that keeps the reader's rules (one operation in flight per process, time never
/// decreasing), with faults, retirements, crashes, stale and rejected writes, a counter and
/// operations that never complete.
fn generate(seed: u64) -> Vec<Event> {
    let mut rng = Rng(seed);
    let locks = ["l", "m", ""];
    let n_locks = 1 + rng.below(2) as usize;
    let mut clients: Vec<Client> = (0..2 + rng.below(4))
        .map(|id| Client {
            id,
            in_flight: None,
            token: None,
        })
        .collect();
    let mut next_id = clients.len() as u64;
    let mut next_token = 1u64;
    let mut counter = 0i64;
    let counter_mode = rng.chance(30);
    let mut events = Vec::new();
    let mut time = 0u64;
    let push = |events: &mut Vec<Event>,
                time: u64,
                p: Process,
                kind,
                f,
                lock: Option<String>,
                value,
                error: Option<&str>| {
        events.push(Event {
            v: FORMAT_VERSION,
            index: events.len() as u64,
            time_ns: time,
            process: p,
            kind,
            f,
            lock,
            value,
            error: error.map(str::to_string),
        })
    };
    let steps = 10 + rng.below(120);
    for _ in 0..steps {
        time += rng.below(4) * 1_000_000 * (1 + rng.below(3) * rng.below(2) * 1000);
        if rng.chance(8) {
            let c = clients[rng.below(clients.len() as u64) as usize].id;
            let (f, value) = match rng.below(6) {
                0 => (
                    F::Pause,
                    Value {
                        client: Some(c),
                        ..Value::default()
                    },
                ),
                1 => (
                    F::Resume,
                    Value {
                        client: Some(c),
                        ..Value::default()
                    },
                ),
                2 => (
                    F::Crash,
                    Value {
                        client: Some(c),
                        ..Value::default()
                    },
                ),
                3 => (
                    F::Partition,
                    Value {
                        nodes: vec!["n1".into()],
                        ..Value::default()
                    },
                ),
                4 => (
                    F::Heal,
                    Value {
                        nodes: vec!["n1".into()],
                        ..Value::default()
                    },
                ),
                _ => (
                    F::Slow,
                    Value {
                        nodes: vec!["n2".into()],
                        ..Value::default()
                    },
                ),
            };
            if rng.chance(50) && value.client.is_none() {
                push(
                    &mut events,
                    time,
                    Process::Nemesis,
                    EventKind::Invoke,
                    f,
                    None,
                    value.clone(),
                    None,
                );
            }
            push(
                &mut events,
                time,
                Process::Nemesis,
                EventKind::Info,
                f,
                None,
                value,
                None,
            );
            continue;
        }
        let i = rng.below(clients.len() as u64) as usize;
        let c = &mut clients[i];
        let p = Process::Client(c.id);
        match c.in_flight.take() {
            None => {
                let lock = Some(locks[rng.below(n_locks as u64) as usize].to_string())
                    .filter(|l| !l.is_empty() || rng.chance(50));
                let (f, value) = match rng.below(10) {
                    0..=3 => (F::Acquire, Value::default()),
                    4..=5 => {
                        let token = c.token.map(|t| {
                            if rng.chance(20) {
                                t.saturating_sub(1)
                            } else {
                                t
                            }
                        });
                        let int = counter_mode.then(|| counter + 1 - rng.below(2) as i64);
                        (
                            F::Write,
                            Value {
                                token,
                                int,
                                ..Value::default()
                            },
                        )
                    }
                    6..=7 => (
                        F::Release,
                        Value {
                            token: c.token,
                            ..Value::default()
                        },
                    ),
                    8 => (F::Renew, Value::default()),
                    _ => {
                        let note = (counter_mode && rng.chance(30)).then(|| "final".to_string());
                        (
                            F::Read,
                            Value {
                                note,
                                ..Value::default()
                            },
                        )
                    }
                };
                push(
                    &mut events,
                    time,
                    p,
                    EventKind::Invoke,
                    f,
                    lock.clone(),
                    value.clone(),
                    None,
                );
                c.in_flight = Some((f, lock, value));
            }
            Some((f, lock, args)) => {
                let r = rng.below(100);
                let kind = if r < 70 {
                    EventKind::Ok
                } else if r < 92 {
                    EventKind::Fail
                } else {
                    EventKind::Info
                };
                let mut value = Value::default();
                let mut error = None;
                match (f, kind) {
                    (F::Acquire, EventKind::Ok) => {
                        let t = if rng.chance(15) {
                            next_token.saturating_sub(2)
                        } else {
                            next_token
                        };
                        next_token += 1;
                        c.token = Some(t);
                        value.token = Some(t);
                    }
                    (F::Write, EventKind::Ok) => {
                        value.token = args.token;
                        value.int = args.int;
                        if let Some(n) = args.int {
                            counter = counter.max(n);
                        }
                        value.max_token = match rng.below(3) {
                            0 => None,
                            1 => Some(next_token.saturating_sub(1)),
                            _ => args.token.map(|t| t.saturating_sub(1)),
                        };
                    }
                    (F::Write, EventKind::Fail) => {
                        error = Some(if rng.chance(60) {
                            "stale-token"
                        } else {
                            "refused"
                        });
                        value.max_token = Some(next_token.saturating_sub(1));
                    }
                    (F::Read, EventKind::Ok) => {
                        value.int = Some(counter - rng.below(2) as i64);
                        value.note = args.note.clone();
                    }
                    (_, EventKind::Fail) => error = Some("lost"),
                    (_, EventKind::Info) => error = Some("timeout"),
                    _ => {}
                }
                let lock = if rng.chance(10) { None } else { lock };
                push(&mut events, time, p, kind, f, lock, value, error);
                if kind == EventKind::Info {
                    c.id = next_id;
                    c.token = None;
                    next_id += 1;
                }
            }
        }
    }
    events
}

#[test]
fn the_streaming_checker_gives_the_in_memory_report_on_generated_histories() {
    for seed in 0..1200 {
        let events = generate(seed);
        for property in [Property::Exclusive, Property::Fenced] {
            for deadlock_ms in [0, 3, 2000] {
                let params = LockCheckParams {
                    property,
                    deadlock_ms,
                };
                let mut stream = check_locks(&events, &params);
                let oracle = check_locks_in_memory(&events, &params);
                let per_lock = std::mem::take(&mut stream.per_lock);
                if oracle.omitted_violations == 0 && oracle.omitted_observations == 0 {
                    assert_per_lock_counts_match(&per_lock, &oracle, seed);
                }
                if stream != oracle {
                    let lines: Vec<String> = events
                        .iter()
                        .map(|e| serde_json::to_string(e).unwrap())
                        .collect();
                    panic!(
                        "seed {seed}, {property:?}, deadlock {deadlock_ms} ms:\nhistory:\n{}\nstream: {}\noracle: {}",
                        lines.join("\n"),
                        serde_json::to_string_pretty(&stream).unwrap(),
                        serde_json::to_string_pretty(&oracle).unwrap()
                    );
                }
            }
        }
    }
}

/// The streaming checker's per-lock counts against the oracle's findings grouped by lock.
fn assert_per_lock_counts_match(
    per_lock: &[crate::lock::LockCounts],
    oracle: &LockReport,
    seed: u64,
) {
    let all: Vec<&Finding> = oracle
        .violations
        .iter()
        .chain(&oracle.observations)
        .collect();
    let of = |lock: &str, kind: FindingKind| {
        all.iter()
            .filter(|f| f.kind == kind && f.lock.as_deref().unwrap_or("") == lock)
            .count() as u64
    };
    let mut violations = 0;
    for c in per_lock {
        assert_eq!(
            c.double_holders,
            of(&c.lock, FindingKind::DoubleHolder),
            "seed {seed}: {c:?}"
        );
        assert_eq!(
            c.stale_writes,
            of(&c.lock, FindingKind::StaleWrite),
            "seed {seed}: {c:?}"
        );
        assert_eq!(
            c.deadlocks,
            of(&c.lock, FindingKind::Deadlock),
            "seed {seed}: {c:?}"
        );
        violations += c.violations;
    }
    let lock_violations = oracle
        .violations
        .iter()
        .filter(|f| {
            f.kind != FindingKind::LostUpdate
                && f.kind != FindingKind::PhantomIncrement
                && f.lock.as_deref().is_some_and(|l| !l.is_empty())
        })
        .count() as u64;
    assert_eq!(violations, lock_violations, "seed {seed}: {per_lock:?}");
    let ops: u64 = per_lock.iter().map(|c| c.ops).sum();
    assert!(
        ops > 0 || oracle.stats.acquires_ok == 0 || per_lock.is_empty(),
        "seed {seed}"
    );
}
