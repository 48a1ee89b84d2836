//! The streaming check against the search on generated lock histories: the same summary,
//! field for field (times aside), whether the stream decides a lock or hands it to the search.

use crate::history::{Event, EventKind, Process, Value, F, FORMAT_VERSION};
use crate::lin_search::Budget;
use crate::lock::{check_lock_linearizability, LinSummary, LockOps, Property};

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

/// What a simulated client has in flight.
#[derive(Clone, Copy, PartialEq)]
enum Doing {
    Nothing,
    Acquiring(usize),
    Releasing(usize),
    Renewing(usize),
}

/// A history of clients of a simulated lock service that now and then misbehaves: grants
/// to a second holder, answers `info` or `fail` whether or not it did the work, and leases
/// that run out; a client may re-enter, or move on without an answer.
fn generate(seed: u64) -> Vec<Event> {
    let mut rng = Rng(seed);
    let n_locks = 1 + rng.below(2) as usize;
    let clients = 2 + rng.below(5) as usize;
    let lease = rng.chance(50).then(|| 1 + rng.below(5));
    let sloppy = rng.below(4);
    let mut events: Vec<Event> = Vec::new();
    let mut time = 0u64;
    let mut holder: Vec<Option<(usize, u64)>> = vec![None; n_locks];
    let mut doing = vec![Doing::Nothing; clients];
    let mut id: Vec<u64> = (0..clients as u64).collect();
    let mut next_id = clients as u64;
    let mut token = 0u64;
    let push = |events: &mut Vec<Event>, time, p, kind, f, lock: usize, value| {
        events.push(Event {
            v: FORMAT_VERSION,
            index: events.len() as u64,
            time_ns: time,
            process: Process::Client(p),
            kind,
            f,
            lock: Some(format!("l{lock}")),
            value,
            error: None,
        })
    };
    for _ in 0..20 + rng.below(100) {
        time += rng.below(3) * 700_000;
        let c = rng.below(clients as u64) as usize;
        let p = id[c];
        let lease_ms = lease.filter(|_| !rng.chance(10));
        let expired = |h: Option<(usize, u64)>| h.is_some_and(|(_, until)| until <= time);
        match doing[c] {
            Doing::Nothing => {
                let l = rng.below(n_locks as u64) as usize;
                let holds = holder[l].is_some_and(|(h, _)| h == c);
                let (f, next) = match rng.below(10) {
                    0..=5 => (F::Acquire, Doing::Acquiring(l)),
                    6..=8 if holds || rng.chance(10) => (F::Release, Doing::Releasing(l)),
                    _ => (F::Renew, Doing::Renewing(l)),
                };
                let value = Value {
                    lease_ms: lease_ms.filter(|_| f != F::Release),
                    ..Value::default()
                };
                push(&mut events, time, p, EventKind::Invoke, f, l, value);
                doing[c] = next;
            }
            Doing::Acquiring(l) => {
                let free = holder[l].is_none_or(|(h, _)| h == c) || expired(holder[l]);
                let grant = free || rng.chance(sloppy);
                if !grant && rng.chance(60) {
                    continue;
                }
                if grant {
                    let until = lease.map_or(u64::MAX, |ms| time + ms * 1_000_000);
                    holder[l] = Some((c, until));
                    token += 1;
                }
                let kind = match rng.below(20) {
                    0 => EventKind::Info,
                    1 => EventKind::Fail,
                    _ if grant => EventKind::Ok,
                    _ => EventKind::Fail,
                };
                let value = Value {
                    token: (kind == EventKind::Ok).then_some(token),
                    lease_ms: lease.filter(|_| kind == EventKind::Ok && rng.chance(30)),
                    ..Value::default()
                };
                push(&mut events, time, p, kind, F::Acquire, l, value);
                doing[c] = Doing::Nothing;
                if kind == EventKind::Info && rng.chance(50) {
                    id[c] = next_id;
                    next_id += 1;
                }
            }
            Doing::Releasing(l) | Doing::Renewing(l) => {
                let holds = holder[l].is_some_and(|(h, _)| h == c) && !expired(holder[l]);
                let releasing = matches!(doing[c], Doing::Releasing(_));
                let kind = match rng.below(20) {
                    0 => EventKind::Info,
                    _ if holds || rng.chance(sloppy) => EventKind::Ok,
                    _ => EventKind::Fail,
                };
                if releasing && kind != EventKind::Fail && holds {
                    holder[l] = None;
                }
                if !releasing && kind == EventKind::Ok && holds {
                    let until = lease.map_or(u64::MAX, |ms| time + ms * 1_000_000);
                    holder[l] = Some((c, until));
                }
                let f = if releasing { F::Release } else { F::Renew };
                push(&mut events, time, p, kind, f, l, Value::default());
                doing[c] = Doing::Nothing;
            }
        }
        // Now and then a client moves on without an answer.
        if rng.chance(2) && doing[c] != Doing::Nothing {
            doing[c] = Doing::Nothing;
        }
    }
    events
}

/// The summary without its times.
fn timeless(summary: Option<LinSummary>) -> Option<LinSummary> {
    summary.map(|mut s| {
        s.elapsed_ms = 0.0;
        s.explanation = s.explanation.map(|e| {
            let (first, rest) = e.split_once('\n').unwrap_or((&e, ""));
            let head = first.split(" in ").next().unwrap_or(first);
            let counts = first
                .split_once(" ms (")
                .and_then(|(_, c)| c.split_once(')'))
                .map_or("", |(c, _)| c);
            format!("{head} ({counts})\n{rest}")
        });
        s
    })
}

fn budget() -> Budget {
    Budget {
        // No time limit: under load a search that ran out of time on one side only would be
        // "unknown" there and fail the comparison by chance (seen once on a loaded 2-core
        // machine); these generated histories are small, and the memory bound still holds.
        time: None,
        memory_bytes: Some(1 << 28),
        threads: 1,
    }
}

fn kept(events: &[Event], property: Property) -> Option<LinSummary> {
    let mut ops = LockOps::default();
    for e in events {
        ops.push(&e.as_ref());
    }
    ops.check(property, &budget())
        .expect("kept operations need no second reading")
}

/// Whether the stream decided every lock itself.
fn streamed(events: &[Event], property: Property) -> bool {
    let mut ops = LockOps::streaming(property);
    for e in events {
        ops.push(&e.as_ref());
    }
    ops.check(property, &budget()).is_ok()
}

fn assert_same(events: &[Event], what: &str) -> (usize, usize, usize) {
    let mut counts = (0, 0, 0);
    for property in [Property::Exclusive, Property::Fenced] {
        let searched = timeless(kept(events, property));
        let both = timeless(check_lock_linearizability(events, property, &budget()));
        assert_eq!(searched, both, "{what}, {property:?}");
        if let Some(searched) = &searched {
            if streamed(events, property) {
                counts.0 += 1;
            } else {
                // The stream hands over what it found violated or could not follow.
                if searched.verdict == crate::verdict::Verdict::Valid {
                    counts.2 += 1;
                } else {
                    counts.1 += 1;
                }
            }
        }
    }
    counts
}

#[test]
fn the_stream_and_the_search_give_the_same_summary_on_generated_lock_histories() {
    let (mut decided, mut searched, mut given_up) = (0, 0, 0);
    for seed in 0..3000 {
        let (d, s, g) = assert_same(&generate(seed), &format!("seed {seed}"));
        decided += d;
        searched += s;
        given_up += g;
    }
    // Both ways are exercised: histories the stream decides, and histories it hands over;
    // and few valid ones are too much to follow (most of those show their first lease only
    // after a return, and the stream follows `lease` from the first state only).
    eprintln!("{decided} decided, {searched} violated, {given_up} valid but not followed");
    assert!(
        decided > 500 && searched > 500 && given_up * 8 < decided,
        "{decided} decided, {searched} violated, {given_up} valid but not followed"
    );
}

#[test]
fn the_stream_and_the_search_give_the_same_summary_on_the_lock_checkers_histories() {
    for seed in 0..1500 {
        let events = crate::lock::oracle::generated(seed);
        assert_same(&events, &format!("generated seed {seed}"));
        let events = crate::lock::oracle::hogged(seed);
        assert_same(&events, &format!("hogged seed {seed}"));
    }
}

/// Holders 10 ms apart, each granted a lease of `lease_ms` (none: a mutex) and releasing it,
/// while another client asks each time and is retired unanswered (`info`).
fn retired_askers(cycles: u64, lease_ms: Option<u64>) -> Vec<Event> {
    retired_askers_then(cycles, lease_ms, false)
}

/// [`retired_askers`]; with `back`, the first retired process is not retired after all: it
/// releases the lock at the end, its acquire having been granted after the last holder's.
fn retired_askers_then(cycles: u64, lease_ms: Option<u64>, back: bool) -> Vec<Event> {
    let mut events = Vec::new();
    let mut push = |t: u64, p: u64, kind, f, lease_ms| {
        events.push(Event {
            v: FORMAT_VERSION,
            index: events.len() as u64,
            time_ns: t * 1_000_000,
            process: Process::Client(p),
            kind,
            f,
            lock: Some("l".into()),
            value: Value {
                lease_ms,
                ..Value::default()
            },
            error: None,
        })
    };
    for i in 0..cycles {
        let t = 10 * i;
        push(t, i, EventKind::Invoke, F::Acquire, lease_ms);
        push(t + 2, i, EventKind::Ok, F::Acquire, None);
        push(t + 3, 1000 + i, EventKind::Invoke, F::Acquire, lease_ms);
        push(t + 4, 1000 + i, EventKind::Info, F::Acquire, None);
        push(t + 6, i, EventKind::Invoke, F::Release, None);
        push(t + 7, i, EventKind::Ok, F::Release, None);
    }
    if back {
        let t = 10 * cycles + 1000;
        push(t, 1000, EventKind::Invoke, F::Release, None);
        push(t + 1, 1000, EventKind::Ok, F::Release, None);
    }
    events
}

#[test]
fn the_stream_decides_a_lock_whose_askers_were_retired_unanswered() {
    // Kept, each such acquire would be one more operation that may yet take effect, and
    // the configurations would multiply until the stream gave up (27 of them after an etcd
    // leader crash). Their processes never act again, so the stream leaves them out.
    for lease_ms in [Some(1000), None] {
        let events = retired_askers(40, lease_ms);
        assert!(streamed(&events, Property::Exclusive), "lease {lease_ms:?}");
        let summary = kept(&events, Property::Exclusive).expect("a lock model fits");
        assert_eq!(
            summary.verdict,
            crate::verdict::Verdict::Valid,
            "{summary:?}"
        );
        assert_same(&events, &format!("lease {lease_ms:?}"));
    }
}

#[test]
fn a_process_the_stream_took_for_retired_that_acts_again_leaves_the_lock_to_the_search() {
    // Its release needs the acquire the stream left out: the stream finds no configuration
    // left, but may not call that a violation; the search, which weighs the acquire, finds
    // the history linearizable.
    let events = retired_askers_then(3, Some(1000), true);
    let mut ops = LockOps::streaming(Property::Exclusive);
    for e in &events {
        ops.push(&e.as_ref());
    }
    let recheck = ops
        .check(Property::Exclusive, &budget())
        .expect_err("the stream hands the lock over");
    let unsearched = recheck.unsearched("no second reading here");
    assert_eq!(
        unsearched.verdict,
        crate::verdict::Verdict::Unknown,
        "{unsearched:?}"
    );
    let summary = check_lock_linearizability(&events, Property::Exclusive, &budget())
        .expect("a lock model fits");
    assert_eq!(
        summary.verdict,
        crate::verdict::Verdict::Valid,
        "{summary:?}"
    );
    assert_same(&events, "a retired process back");
}
