//! Histories for the report tests: a small hand-built one with a known story, and synthetic
//! ones of any length for size and speed measurements.

#![allow(dead_code)]

use lockpick_checker::history::{Event, EventKind, Process, Value, F, FORMAT_VERSION};
use lockpick_checker::lock::{check_locks, LockCheckParams, Property};
use lockpick_checker::results::{RunResults, RESULTS_VERSION};

/// Appends events with consecutive indices.
#[derive(Default)]
pub struct History {
    pub events: Vec<Event>,
}

impl History {
    pub fn push(&mut self, ms: f64, process: Process, kind: EventKind, f: F, value: Value) {
        self.push_err(ms, process, kind, f, value, None);
    }

    pub fn push_err(
        &mut self,
        ms: f64,
        process: Process,
        kind: EventKind,
        f: F,
        value: Value,
        error: Option<&str>,
    ) {
        let is_client = matches!(process, Process::Client(_));
        self.events.push(Event {
            v: FORMAT_VERSION,
            index: self.events.len() as u64,
            time_ns: (ms * 1e6) as u64,
            process,
            kind,
            f,
            lock: is_client.then(|| "lock".to_owned()),
            value,
            error: error.map(str::to_owned),
        });
    }
}

pub fn token(t: u64) -> Value {
    Value {
        token: Some(t),
        ..Value::default()
    }
}

/// Two clients, one GC pause: process 0 takes token 1, is paused 900 ms before its write, its
/// lease runs out, process 1 takes token 2, writes and releases; process 0 wakes and the naive
/// resource accepts its token-1 write after token 2.
pub fn gc_pause_history() -> Vec<Event> {
    use EventKind::*;
    let (p0, p1, nem) = (Process::Client(0), Process::Client(1), Process::Nemesis);
    let mut h = History::default();
    h.push(100.0, p0, Invoke, F::Acquire, Value::default());
    h.push(102.0, p0, Ok, F::Acquire, token(1));
    h.push(
        110.0,
        nem,
        Info,
        F::Pause,
        Value {
            client: Some(0),
            point: Some("before-write".into()),
            ms: Some(900),
            ..Value::default()
        },
    );
    h.push(150.0, p1, Invoke, F::Acquire, Value::default());
    h.push(420.0, p1, Ok, F::Acquire, token(2));
    h.push(430.0, p1, Invoke, F::Write, token(2));
    h.push(432.0, p1, Ok, F::Write, token(2));
    h.push(440.0, p1, Invoke, F::Release, token(2));
    h.push(441.0, p1, Ok, F::Release, Value::default());
    h.push(
        1010.0,
        nem,
        Info,
        F::Resume,
        Value {
            client: Some(0),
            ..Value::default()
        },
    );
    h.push(1011.0, p0, Invoke, F::Write, token(1));
    h.push(
        1013.0,
        p0,
        Ok,
        F::Write,
        Value {
            token: Some(1),
            max_token: Some(2),
            ..Value::default()
        },
    );
    h.push(1020.0, p0, Invoke, F::Release, token(1));
    h.push_err(
        1021.0,
        p0,
        Fail,
        F::Release,
        Value::default(),
        Some("not-owner"),
    );
    h.events
}

/// Checks `events` and wraps the report as a run's results.
pub fn results_for(events: &[Event], scenario: &str) -> RunResults {
    let lock = check_locks(
        events,
        &LockCheckParams {
            property: Property::Exclusive,
            deadlock_ms: 3000,
        },
    );
    let ops = events
        .iter()
        .filter(|e| e.process != Process::Nemesis && e.kind != EventKind::Invoke)
        .count() as u64;
    RunResults {
        v: RESULTS_VERSION,
        scenario: scenario.to_owned(),
        backend: "redis".to_owned(),
        seed: 7,
        verdict: lock.verdict,
        expected: None,
        interrupted: false,
        workload_ms: events.last().map_or(0, |e| e.time_ns / 1_000_000),
        ops,
        history: "history.jsonl".to_owned(),
        reproduce: format!("cargo run -- scenario {scenario} --seed 7"),
        lock,
        linearizability: None,
        not_exposed: None,
        exposed_by: None,
        exposures: None,
        server: None,
        discipline: None,
        library: None,
        description: None,
    }
}

/// A synthetic run of about `ops` completed client operations: `clients` clients take turns
/// on a lock (acquire → write → release, a failed acquire now and then), with a client pause
/// from 0.3 s and every 10 s that lets one stale write through, and a latency fault from
/// 0.15 s and every 7 s.
pub fn synthetic_history(ops: usize, clients: u64) -> Vec<Event> {
    use EventKind::*;
    let mut h = History::default();
    let mut t = 0.0f64;
    let mut tok = 0u64;
    let mut done = 0usize;
    let mut round = 0u64;
    let mut next_pause_ms = 300.0;
    let mut next_slow_ms = 150.0;
    while done < ops {
        round += 1;
        let p = Process::Client(round % clients);
        let other = Process::Client((round + 1) % clients);
        if t >= next_slow_ms {
            let v = Value {
                nodes: vec!["n1".into()],
                ms: Some(50),
                ..Value::default()
            };
            h.push(t, Process::Nemesis, Info, F::Slow, v);
            h.push(
                t + 800.0,
                Process::Nemesis,
                Info,
                F::Heal,
                Value {
                    nodes: vec!["n1".into()],
                    ..Value::default()
                },
            );
            next_slow_ms += 7_000.0;
        }
        if round % 17 == 0 {
            h.push(t, other, Invoke, F::Acquire, Value::default());
        }
        h.push(t, p, Invoke, F::Acquire, Value::default());
        tok += 1;
        let lat = 0.3 + (round % 13) as f64 * 0.15;
        h.push(t + lat, p, Ok, F::Acquire, token(tok));
        if round % 17 == 0 {
            h.push_err(
                t + lat + 0.1,
                other,
                Fail,
                F::Acquire,
                Value::default(),
                Some("timeout-waiting"),
            );
            done += 1;
        }
        let w = t + lat + 0.2;
        if t >= next_pause_ms {
            // The holder is paused past its lease; the next one writes first.
            let pause = Value {
                client: Some(round % clients),
                point: Some("before-write".into()),
                ms: Some(600),
                ..Value::default()
            };
            h.push(w, Process::Nemesis, Info, F::Pause, pause);
            h.push(w + 300.0, other, Invoke, F::Acquire, Value::default());
            h.push(w + 300.5, other, Ok, F::Acquire, token(tok + 1));
            h.push(w + 301.0, other, Invoke, F::Write, token(tok + 1));
            h.push(w + 301.5, other, Ok, F::Write, token(tok + 1));
            h.push(w + 302.0, other, Invoke, F::Release, token(tok + 1));
            h.push(w + 302.3, other, Ok, F::Release, Value::default());
            h.push(
                w + 600.0,
                Process::Nemesis,
                Info,
                F::Resume,
                Value {
                    client: Some(round % clients),
                    ..Value::default()
                },
            );
            h.push(w + 600.5, p, Invoke, F::Write, token(tok));
            let v = Value {
                token: Some(tok),
                max_token: Some(tok + 1),
                ..Value::default()
            };
            h.push(w + 601.0, p, Ok, F::Write, v);
            h.push(w + 602.0, p, Invoke, F::Release, token(tok));
            h.push_err(
                w + 602.2,
                p,
                Fail,
                F::Release,
                Value::default(),
                Some("not-owner"),
            );
            tok += 1;
            done += 6;
            t = w + 603.0;
            next_pause_ms += 10_000.0;
            continue;
        }
        h.push(w, p, Invoke, F::Write, token(tok));
        h.push(w + 0.4, p, Ok, F::Write, token(tok));
        h.push(w + 0.6, p, Invoke, F::Release, token(tok));
        h.push(w + 0.9, p, Ok, F::Release, Value::default());
        done += 3;
        t = w + 1.0 + (round % 5) as f64 * 0.2;
    }
    h.events
}
