//! Each rule on hand-built histories: one instance exposed and one of the same fault not.

use super::*;
use crate::history::{EventKind, Process, Value};

/// A small history builder: times in milliseconds.
#[derive(Default)]
struct H(Vec<Event>);

impl H {
    fn push(&mut self, ms: u64, process: Process, kind: EventKind, f: F, value: Value) {
        let index = self.0.len() as u64;
        self.0.push(Event {
            v: 1,
            index,
            time_ns: ms * 1_000_000,
            process,
            kind,
            f,
            lock: None,
            value,
            error: None,
        });
    }
    /// [`H::push`] on lock `lock` (the others are on the run's one unnamed lock).
    fn push_on(
        &mut self,
        ms: u64,
        process: Process,
        kind: EventKind,
        f: F,
        value: Value,
        lock: &str,
    ) {
        self.push(ms, process, kind, f, value);
        if let Some(last) = self.0.last_mut() {
            last.lock = Some(lock.into());
        }
    }
    fn ask(mut self, ms: u64, c: u64) -> H {
        self.push(
            ms,
            Process::Client(c),
            EventKind::Invoke,
            F::Acquire,
            Value::default(),
        );
        self
    }
    fn grant(mut self, ms: u64, c: u64, lease: Option<u64>) -> H {
        let value = Value {
            lease_ms: lease,
            ..Value::default()
        };
        self.push(ms, Process::Client(c), EventKind::Ok, F::Acquire, value);
        self
    }
    fn refused(mut self, ms: u64, c: u64) -> H {
        self.push(
            ms,
            Process::Client(c),
            EventKind::Fail,
            F::Acquire,
            Value::default(),
        );
        self
    }
    fn release(mut self, ms: u64, c: u64) -> H {
        self.push(
            ms,
            Process::Client(c),
            EventKind::Invoke,
            F::Release,
            Value::default(),
        );
        self.push(
            ms,
            Process::Client(c),
            EventKind::Ok,
            F::Release,
            Value::default(),
        );
        self
    }
    fn renew(mut self, sent: u64, ms: u64, c: u64, lease: u64) -> H {
        self.push(
            sent,
            Process::Client(c),
            EventKind::Invoke,
            F::Renew,
            Value::default(),
        );
        let value = Value {
            lease_ms: Some(lease),
            ..Value::default()
        };
        self.push(ms, Process::Client(c), EventKind::Ok, F::Renew, value);
        self
    }
    fn nemesis(mut self, ms: u64, f: F, nodes: &[&str], client: Option<u64>) -> H {
        let value = Value {
            nodes: nodes.iter().map(|n| n.to_string()).collect(),
            client,
            ..Value::default()
        };
        self.push(ms, Process::Nemesis, EventKind::Info, f, value);
        self
    }
    fn jump(mut self, ms: u64, nodes: &[&str], offset_ms: i64) -> H {
        let value = Value {
            nodes: nodes.iter().map(|n| n.to_string()).collect(),
            offset_ms: Some(offset_ms),
            ..Value::default()
        };
        self.push(ms, Process::Nemesis, EventKind::Info, F::Clock, value);
        self
    }
    fn end(mut self, ms: u64) -> H {
        self.push(
            ms,
            Process::Client(9),
            EventKind::Invoke,
            F::Read,
            Value::default(),
        );
        self
    }
}

fn plan(verb: F, target: Target, rule: Rule, lease: Option<u64>, nodes: &[&str]) -> Plan {
    Plan {
        faults: vec![FaultRule { verb, target, rule }],
        lock: LockShape {
            lease_ms: lease,
            nodes: nodes.iter().map(|n| n.to_string()).collect(),
            quorum: nodes.len() / 2 + 1,
            waiter_sessions: false,
            renewed_unseen: false,
        },
    }
}

fn one(h: H, plan: Plan) -> Exposure {
    let mut all = exposures(&h.0, plan);
    assert_eq!(all.faults.len(), 1, "{all:?}");
    all.faults.remove(0)
}

fn pause_plan() -> Plan {
    plan(
        F::Pause,
        Target::Client,
        Rule::PauseOutlastsLease,
        Some(500),
        &["n1"],
    )
}

#[test]
fn a_pause_of_the_holder_past_its_lease_while_another_asked_is_exposed() {
    // Client 1 granted a 500 ms lease at 100 ms, paused from 200 to 900 ms; client 2 asks
    // from 300 ms and is granted at 700 ms.
    let h = H::default()
        .ask(0, 1)
        .grant(100, 1, Some(500))
        .nemesis(200, F::Pause, &[], Some(1))
        .ask(300, 2)
        .grant(700, 2, Some(500))
        .nemesis(900, F::Resume, &[], Some(1))
        .release(950, 1)
        .end(1000);
    let e = one(h, pause_plan());
    let w = e.window.as_ref().expect("exposed");
    assert_eq!((w.from_ns, w.to_ns), (600_000_000, 950_000_000));
    assert_eq!((w.holder, w.askers.clone()), (1, vec![2]));
    // The window's start is the lease's end counted from the grant's reply, and says so
    // (a violation's sentence counts it from the request, which can be earlier).
    assert_eq!(
        e.why,
        "the pause outlasted the 500 ms lease its client held: client 1 held on past that lease (counted from its grant's reply) from 0.600 s to 0.950 s, and client 2 asked"
    );
}

#[test]
fn a_pause_within_the_lease_left_or_of_a_client_holding_nothing_is_not_exposed() {
    let within = H::default()
        .ask(0, 1)
        .grant(100, 1, Some(500))
        .nemesis(200, F::Pause, &[], Some(1))
        .ask(300, 2)
        .nemesis(550, F::Resume, &[], Some(1))
        .release(560, 1)
        .grant(570, 2, Some(500))
        .end(1000);
    let e = one(within, pause_plan());
    assert!(e.window.is_none());
    assert!(e.why.contains("within its 500 ms lease"), "{}", e.why);
    let idle = H::default()
        .nemesis(200, F::Pause, &[], Some(1))
        .ask(300, 2)
        .grant(310, 2, Some(500))
        .nemesis(900, F::Resume, &[], Some(1))
        .end(1000);
    let e = one(idle, pause_plan());
    assert_eq!(e.why, "the paused client held no lock when it stopped");
}

#[test]
fn a_pause_past_the_lease_that_nobody_was_granted_after_is_not_exposed() {
    // Nobody asked after the lease's end; and in the second history client 2 asked from
    // 650 ms but the server kept the lease (etcd revokes late) and granted it only after the
    // holder's release.
    let nobody = H::default()
        .ask(0, 1)
        .grant(100, 1, Some(500))
        .ask(150, 2)
        .refused(180, 2)
        .nemesis(200, F::Pause, &[], Some(1))
        .nemesis(900, F::Resume, &[], Some(1))
        .release(950, 1)
        .end(1000);
    let kept = H::default()
        .ask(0, 1)
        .grant(100, 1, Some(500))
        .nemesis(200, F::Pause, &[], Some(1))
        .ask(650, 2)
        .nemesis(900, F::Resume, &[], Some(1))
        .release(950, 1)
        .grant(960, 2, Some(500))
        .end(1000);
    for h in [nobody, kept] {
        let e = one(h, pause_plan());
        assert!(e.window.is_none());
        assert!(
            e.why
                .contains("no other client was granted the lock from 0.600 s to 0.950 s"),
            "{}",
            e.why
        );
    }
}

#[test]
fn a_renewal_before_the_pause_moves_the_lease_it_must_outlast() {
    // Granted at 100 ms with 500 ms and renewed at 400 ms: the lease now ends at 900 ms. A
    // pause from 450 ms to 880 ms ends inside it; one to 950 ms outlasts it.
    let base = |resume: u64| {
        H::default()
            .ask(0, 1)
            .grant(100, 1, Some(500))
            .renew(380, 400, 1, 500)
            .nemesis(450, F::Pause, &[], Some(1))
            .ask(500, 2)
            .grant(905, 2, Some(500))
            .nemesis(resume, F::Resume, &[], Some(1))
            .release(resume + 10, 1)
            .end(2000)
    };
    assert!(one(base(880), pause_plan()).window.is_none());
    assert!(one(base(950), pause_plan()).window.is_some());
}

fn cut_plan(nodes: &[&str]) -> Plan {
    plan(
        F::Partition,
        Target::Nodes,
        Rule::CutPastLease,
        Some(1000),
        nodes,
    )
}

#[test]
fn a_cut_of_a_quorum_past_the_holders_lease_is_exposed_and_a_cut_of_a_minority_is_not() {
    let h = |cut: &[&str]| {
        H::default()
            .ask(0, 1)
            .grant(100, 1, Some(1000))
            .nemesis(500, F::Partition, cut, None)
            .ask(600, 2)
            .nemesis(2500, F::Heal, cut, None)
            .grant(2600, 2, Some(1000))
            .release(3000, 1)
            .end(4000)
    };
    let nodes = ["n1", "n2", "n3"];
    let e = one(h(&["n1", "n2"]), cut_plan(&nodes));
    let w = e.window.expect("two of three cut: no quorum");
    assert_eq!((w.from_ns, w.to_ns), (1_100_000_000, 3_000_000_000));
    let e = one(h(&["n1"]), cut_plan(&nodes));
    assert!(e.window.is_none());
    assert!(
        e.why.contains("left every client 2 of the lock's 3 nodes"),
        "{}",
        e.why
    );
}

#[test]
fn a_cut_of_a_minority_that_held_the_holders_own_renewal_past_its_lease_is_exposed() {
    // etcd's client stays on the member it is connected to: when that member is cut off (or
    // paused), the holder's keep-alive hangs though the other two members are a quorum, and
    // they expire its lease. Client 1 renewed at 0.4 s (lease to 1.4 s); its next renewal,
    // sent at 0.7 s inside the cut of n1, came back at 2.6 s, after the lease ran out, and
    // client 2 was granted at 1.8 s, before client 1 was done.
    let h = |back: u64| {
        let mut h = H::default()
            .ask(0, 1)
            .grant(100, 1, Some(1000))
            .renew(390, 400, 1, 1000)
            .nemesis(500, F::Partition, &["n1"], None)
            .ask(600, 2);
        let renewed = Value {
            lease_ms: Some(1000),
            ..Value::default()
        };
        let c1 = Process::Client(1);
        h.push(700, c1, EventKind::Invoke, F::Renew, Value::default());
        if back < 1800 {
            h.push(back, c1, EventKind::Ok, F::Renew, renewed.clone());
        }
        let h = h
            .grant(1800, 2, Some(1000))
            .nemesis(2500, F::Heal, &["n1"], None);
        let mut h = h;
        if back >= 1800 {
            h.push(back, c1, EventKind::Ok, F::Renew, renewed);
        }
        h.release(3000, 1).end(4000)
    };
    let nodes = ["n1", "n2", "n3"];
    let e = one(h(2600), cut_plan(&nodes));
    let w = e
        .window
        .expect("the holder's own renewal was held past its lease");
    // From the last renewal's send plus its lease (the earliest the server could let it go).
    assert_eq!((w.from_ns, w.to_ns), (1_390_000_000, 3_000_000_000));
    // The renewal came back at 1.2 s, inside the lease: the holder's connection was not cut
    // past it, and the two others were a quorum.
    let e = one(h(1200), cut_plan(&nodes));
    assert!(e.window.is_none(), "{e:?}");
    assert!(
        e.why.contains("left every client 2 of the lock's 3 nodes"),
        "{}",
        e.why
    );
}

#[test]
fn a_cut_of_a_minority_that_held_a_grants_request_past_its_lease_is_exposed() {
    // Client 1's try waits for every node (rslock 0.2.2 SETs all five and waits for all): it
    // was sent at 0.4 s, the cut of n1 held it, and it came back at 2.6 s, after the heal,
    // past its 1 s lease: the keys it set on the other nodes may have expired by then, so a
    // rival asking from 1.4 s on could be granted while client 1 holds.
    let h = |granted: u64| {
        H::default()
            .ask(400, 1)
            .nemesis(500, F::Partition, &["n1"], None)
            .nemesis(2500, F::Heal, &["n1"], None)
            .grant(granted, 1, Some(1000))
            .ask(granted + 10, 2)
            .release(granted + 300, 1)
            .end(4000)
    };
    let nodes = ["n1", "n2", "n3"];
    let e = one(h(2600), cut_plan(&nodes));
    let w = e.window.expect("the cut held the request past its lease");
    assert_eq!(
        (w.from_ns, w.to_ns, w.askers.clone()),
        (1_400_000_000, 2_900_000_000, vec![2])
    );
    assert!(
        e.why.starts_with(
            "the cut held a grant's request until it came back past the 1000 ms lease"
        ),
        "{}",
        e.why
    );
    // Granted inside the cut 0.6 s after it was sent, within its lease: the cut left a quorum.
    let e = one(h(1000), cut_plan(&nodes));
    assert!(e.window.is_none(), "{e:?}");
    assert!(
        e.why.contains("left every client 2 of the lock's 3 nodes"),
        "{}",
        e.why
    );
}

#[test]
fn a_holder_that_gives_up_inside_a_cut_past_its_lease_is_exposed_with_a_rival_asking() {
    // Client 1's library notices the lost session and gives up at 1.5 s, inside the cut and
    // past its lease (1.1 s): the lock's defence met the cut, though nobody was granted on top.
    let h = |asks: bool| {
        let h = H::default().ask(0, 1).grant(100, 1, Some(1000));
        let h = h.nemesis(500, F::Partition, &["n1"], None);
        let h = if asks { h.ask(600, 2) } else { h };
        h.release(1500, 1)
            .nemesis(2500, F::Heal, &["n1"], None)
            .grant(2600, 2, Some(1000))
            .end(4000)
    };
    let w = one(h(true), cut_plan(&["n1"]))
        .window
        .expect("gave up inside the cut");
    assert_eq!(
        (w.from_ns, w.to_ns, w.askers.clone()),
        (1_100_000_000, 2_500_000_000, vec![2])
    );
    assert!(one(h(false), cut_plan(&["n1"])).window.is_none());
}

#[test]
fn a_waiter_the_cut_kept_from_a_quorum_past_its_lease_is_exposed_by_how_its_acquire_came_back() {
    // etcd #11456: nobody holds the lock; client 2 waits in its acquire from 0.2 s (holding a
    // leased key in the wait queue, as etcd's waiters do), every node
    // is cut from 0.5 s to 2.5 s (its session's keep-alives stop: it could end at 1.5 s), and
    // the acquire comes back after the heal. Refused (the fixed client saw its key gone) or
    // granted (the bug), its outcome is what the cut tested: exposed, no rival needed.
    let nodes = ["n1", "n2", "n3"];
    let h = |cut: &[&str], back: u64, granted: bool| {
        let h = H::default()
            .ask(200, 2)
            .nemesis(500, F::Partition, cut, None)
            .nemesis(2500, F::Heal, cut, None);
        let h = if granted {
            h.grant(back, 2, Some(1000)).release(back + 100, 2)
        } else {
            h.refused(back, 2)
        };
        h.end(4000)
    };
    // etcd's waiters hold a leased key in the queue; ZooKeeper's an ephemeral node.
    let session_plan = || {
        let mut p = cut_plan(&nodes);
        p.lock.waiter_sessions = true;
        p
    };
    for granted in [false, true] {
        let e = one(h(&nodes, 2600, granted), session_plan());
        let w = e.window.unwrap_or_else(|| panic!("not exposed: {}", e.why));
        assert_eq!(
            (w.from_ns, w.to_ns, w.holder),
            (1_500_000_000, 2_600_000_000, 2)
        );
        assert!(
            e.why.starts_with("the cut kept a waiting client from a quorum past the 1000 ms lease: client 2 was still waiting when its session could have ended, at 1.500 s, and its acquire came back at 2.600 s"),
            "{}",
            e.why
        );
    }
    // Back before its session could end: the cut tested nothing of it.
    let e = one(h(&nodes, 1400, false), session_plan());
    assert!(e.window.is_none(), "{}", e.why);
    // A lock whose waiters only retry a set-if-absent holds nothing while it waits.
    let e = one(h(&nodes, 2600, false), cut_plan(&nodes));
    assert!(e.window.is_none(), "{}", e.why);
    // A cut of one node of three left it a quorum: its session lived on.
    let e = one(h(&["n1"], 2600, false), session_plan());
    assert!(e.window.is_none(), "{}", e.why);
    assert!(
        e.why.contains("left every client 2 of the lock's 3 nodes"),
        "{}",
        e.why
    );
}

#[test]
fn a_holder_whose_release_inside_the_cut_is_answered_after_the_heal_gave_up_inside_it() {
    // Client 1 is told of the cut and sends its release at 1.5 s, inside the cut and past its
    // lease; the release cannot reach the servers and is answered (info) after the heal at
    // 2.5 s. It gave up when it sent it.
    let mut h = H::default().ask(0, 1).grant(100, 1, Some(1000));
    h = h.nemesis(500, F::Partition, &["n1"], None).ask(600, 2);
    h.push(
        1500,
        Process::Client(1),
        EventKind::Invoke,
        F::Release,
        Value::default(),
    );
    h = h.nemesis(2500, F::Heal, &["n1"], None);
    h.push(
        2700,
        Process::Client(1),
        EventKind::Info,
        F::Release,
        Value::default(),
    );
    let w = one(h.grant(2800, 2, Some(1000)).end(4000), cut_plan(&["n1"]))
        .window
        .expect("gave up inside the cut");
    assert_eq!(
        (w.from_ns, w.to_ns, w.askers.clone()),
        (1_100_000_000, 2_500_000_000, vec![2])
    );
}

/// `h` with client `c` asking at `ms` and granted token `t` (lease 2 s) a millisecond later.
fn token_grant(mut h: H, ms: u64, c: u64, t: u64) -> H {
    h.push(
        ms,
        Process::Client(c),
        EventKind::Invoke,
        F::Acquire,
        Value::default(),
    );
    let value = Value {
        token: Some(t),
        lease_ms: Some(2000),
        ..Value::default()
    };
    h.push(ms + 1, Process::Client(c), EventKind::Ok, F::Acquire, value);
    h
}

#[test]
fn a_token_granted_after_a_restart_that_followed_two_tokens_is_exposed() {
    // The crash fell between holds, but tokens 7 and 8 were granted before it and one after
    // the restart: a server that forgot its counter and counted again from 7 could hand out
    // a token below 8, which the stale-write check sees.
    let h = token_grant(H::default(), 100, 1, 7).release(110, 1);
    let h = token_grant(h, 120, 3, 8).release(130, 3);
    let h = h
        .nemesis(200, F::Crash, &["n1"], None)
        .nemesis(900, F::Restart, &["n1"], None);
    let h = token_grant(h, 950, 2, 9).release(960, 2).end(2000);
    let e = one(h, crash_plan());
    let w = e.window.expect("a token after the restart");
    assert_eq!(
        (w.from_ns, w.to_ns, w.holder),
        (900_000_000, 951_000_000, 2)
    );
    assert!(
        e.why
            .contains("tokens 7 to 8 were granted before the crash")
            && e.why
                .contains("counted again from 7 could hand out one below 8"),
        "{}",
        e.why
    );
}

#[test]
fn a_token_after_a_restart_that_followed_a_single_token_is_not_exposed() {
    // One token before the crash: a forgetful server would hand out the same one again, and
    // two grants of one token in turn break nothing (the resource takes an equal token).
    let h = token_grant(H::default(), 100, 1, 7).release(110, 1);
    let h = h
        .nemesis(200, F::Crash, &["n1"], None)
        .nemesis(900, F::Restart, &["n1"], None);
    let h = token_grant(h, 950, 2, 7).release(960, 2).end(2000);
    let e = one(h, crash_plan());
    assert!(e.window.is_none(), "{e:?}");
    assert!(!e.why.contains("forgot its counter"), "{}", e.why);
}

#[test]
fn tokens_on_another_lock_do_not_expose_a_crash() {
    // Two tokens on lock a before the crash, the grant after it on lock b: b's counter, if
    // forgotten, had handed out nothing to go below.
    let mut h = H::default();
    for (ms, c, t, lock) in [(100, 1, 7, "a"), (120, 3, 8, "a")] {
        h.push_on(
            ms,
            Process::Client(c),
            EventKind::Invoke,
            F::Acquire,
            Value::default(),
            lock,
        );
        let value = Value {
            token: Some(t),
            lease_ms: Some(2000),
            ..Value::default()
        };
        h.push_on(
            ms + 1,
            Process::Client(c),
            EventKind::Ok,
            F::Acquire,
            value,
            lock,
        );
        h.push_on(
            ms + 5,
            Process::Client(c),
            EventKind::Invoke,
            F::Release,
            Value::default(),
            lock,
        );
        h.push_on(
            ms + 6,
            Process::Client(c),
            EventKind::Ok,
            F::Release,
            Value::default(),
            lock,
        );
    }
    let mut h = h
        .nemesis(200, F::Crash, &["n1"], None)
        .nemesis(900, F::Restart, &["n1"], None);
    h.push_on(
        950,
        Process::Client(2),
        EventKind::Invoke,
        F::Acquire,
        Value::default(),
        "b",
    );
    let value = Value {
        token: Some(1),
        lease_ms: Some(2000),
        ..Value::default()
    };
    h.push_on(
        951,
        Process::Client(2),
        EventKind::Ok,
        F::Acquire,
        value,
        "b",
    );
    let e = one(h.end(2000), crash_plan());
    assert!(e.window.is_none(), "{e:?}");
}

#[test]
fn a_cut_shorter_than_the_lease_left_is_not_exposed() {
    let h = H::default()
        .ask(0, 1)
        .grant(100, 1, Some(1000))
        .nemesis(500, F::Partition, &["n1"], None)
        .ask(600, 2)
        .nemesis(1000, F::Heal, &["n1"], None)
        .release(1200, 1)
        .grant(1210, 2, Some(1000))
        .end(2000);
    let e = one(h, cut_plan(&["n1"]));
    assert!(e.window.is_none());
    assert!(e.why.contains("within its 1000 ms lease"), "{}", e.why);
}

#[test]
fn a_cut_of_peer_links_is_judged_by_its_being_in_force_during_a_contended_hold() {
    let h = H::default()
        .ask(0, 1)
        .grant(100, 1, Some(1000))
        .nemesis(500, F::Partition, &["n2-to-n1"], None)
        .ask(600, 2)
        .nemesis(700, F::Heal, &["n2-to-n1"], None)
        .release(800, 1)
        .end(1000);
    let e = one(h, cut_plan(&["n1", "n2"]));
    assert_eq!(e.rule, Rule::InForceDuringContendedHold);
    let w = e.window.expect("in force during a hold someone asked for");
    assert_eq!((w.from_ns, w.to_ns), (500_000_000, 700_000_000));
}

fn crash_plan() -> Plan {
    plan(
        F::Crash,
        Target::Nodes,
        Rule::RestartInsideLease,
        Some(2000),
        &["n1"],
    )
}

#[test]
fn a_node_back_inside_the_holders_lease_while_another_asked_is_exposed() {
    let h = H::default()
        .ask(0, 1)
        .grant(100, 1, Some(2000))
        .nemesis(200, F::Crash, &["n1"], None)
        .ask(300, 2)
        .nemesis(900, F::Restart, &["n1"], None)
        .grant(950, 2, Some(2000))
        .release(1500, 1)
        .end(3000);
    let w = one(h, crash_plan()).window.expect("exposed");
    assert_eq!((w.from_ns, w.to_ns), (900_000_000, 1_500_000_000));
}

#[test]
fn a_crash_between_holds_or_a_restart_after_the_hold_is_not_exposed() {
    // The holder's 1-5 ms hold ended long before the node came back.
    let short = H::default()
        .ask(0, 1)
        .grant(100, 1, Some(2000))
        .nemesis(101, F::Crash, &["n1"], None)
        .release(103, 1)
        .ask(300, 2)
        .nemesis(900, F::Restart, &["n1"], None)
        .grant(950, 2, Some(2000))
        .end(3000);
    let e = one(short, crash_plan());
    assert!(e.window.is_none());
    assert!(
        e.why.contains("after client 1's hold or lease ended"),
        "{}",
        e.why
    );
    let between = H::default()
        .nemesis(200, F::Crash, &["n1"], None)
        .ask(300, 2)
        .nemesis(900, F::Restart, &["n1"], None)
        .grant(950, 2, Some(2000))
        .end(3000);
    let e = one(between, crash_plan());
    assert_eq!(
        e.why,
        "no client held the lock while the fault was in force"
    );
}

#[test]
fn an_acquire_on_its_way_across_a_crash_is_judged_as_a_hold_and_one_sent_after_is_not() {
    // Client 1 asked before n1 went down and was granted while it was down (its request may
    // have written n1 first) or after it came back; client 2 asked while that hold lasted.
    let across = |sent: u64, granted: u64| {
        H::default()
            .ask(sent, 1)
            .nemesis(200, F::Crash, &["n1"], None)
            .grant(granted, 1, Some(2000))
            .ask(860, 2)
            .nemesis(900, F::Restart, &["n1"], None)
            .grant(950, 2, Some(2000))
            .release(1500, 1)
            .end(3000)
    };
    let w = one(across(0, 300), crash_plan())
        .window
        .expect("granted while the node was down");
    assert_eq!(
        (w.from_ns, w.to_ns, w.holder),
        (900_000_000, 1_500_000_000, 1)
    );
    let after = H::default()
        .ask(0, 1)
        .nemesis(200, F::Crash, &["n1"], None)
        .nemesis(900, F::Restart, &["n1"], None)
        .grant(1000, 1, Some(2000))
        .ask(1100, 2)
        .grant(1200, 2, Some(2000))
        .release(1500, 1)
        .end(3000);
    let w = one(after, crash_plan())
        .window
        .expect("granted after the node came back");
    assert_eq!((w.from_ns, w.to_ns), (900_000_000, 1_500_000_000));
    // Sent once n1 was down, the request could not have written it.
    let e = one(across(250, 300), crash_plan());
    assert!(e.window.is_none(), "{e:?}");
    assert_eq!(
        e.why,
        "no client held the lock while the fault was in force"
    );
}

#[test]
fn a_crash_of_a_node_that_grants_nothing_is_not_exposed() {
    let h = H::default()
        .ask(0, 1)
        .grant(100, 1, Some(2000))
        .nemesis(200, F::Crash, &["n4"], None)
        .ask(300, 2)
        .nemesis(900, F::Restart, &["n4"], None)
        .release(1500, 1)
        .end(3000);
    let e = one(h, crash_plan());
    assert_eq!(e.why, "n4 grants no part of the lock");
}

fn jump_plan(lease: Option<u64>) -> Plan {
    plan(F::Clock, Target::Nodes, Rule::JumpPastLease, lease, &["n1"])
}

#[test]
fn a_forward_jump_past_the_lease_left_during_a_hold_is_exposed_and_a_small_or_backward_one_is_not()
{
    let leased = |offset: i64, lease: Option<u64>| {
        H::default()
            .ask(0, 1)
            .grant(100, 1, lease)
            .ask(200, 2)
            .jump(300, &["n1"], offset)
            .grant(310, 2, lease)
            .release(600, 1)
            .nemesis(900, F::ClockReset, &["n1"], None)
            .end(2000)
    };
    let h = |offset: i64| leased(offset, Some(1000));
    let w = one(h(2000), jump_plan(Some(1000))).window.expect("exposed");
    assert_eq!(
        (w.from_ns, w.to_ns, w.askers.clone()),
        (300_000_000, 600_000_000, vec![2])
    );
    let e = one(h(500), jump_plan(Some(1000)));
    assert!(
        e.why.contains("+500 ms, not forward past the 800 ms"),
        "{}",
        e.why
    );
    assert!(one(h(-2000), jump_plan(Some(1000))).window.is_none());
    let e = one(leased(2000, None), jump_plan(None));
    assert_eq!(e.why, "the lock keeps no lease, so it reads no clock");
}

fn latency_plan() -> Plan {
    plan(
        F::Slow,
        Target::Nodes,
        Rule::DelayPastLease,
        Some(300),
        &["n1"],
    )
}

#[test]
fn a_grant_back_later_than_its_lease_is_exposed_and_a_quick_one_is_not() {
    let h = |granted: u64| {
        H::default()
            .nemesis(50, F::Slow, &["n1"], None)
            .ask(100, 1)
            .ask(120, 2)
            .grant(granted, 1, Some(300))
            .release(granted + 100, 1)
            .nemesis(1500, F::Heal, &["n1"], None)
            .end(2000)
    };
    let w = one(h(600), latency_plan())
        .window
        .expect("500 ms round trip, 300 ms lease");
    assert_eq!((w.from_ns, w.to_ns), (400_000_000, 700_000_000));
    let e = one(h(300), latency_plan());
    assert!(
        e.why
            .contains("came back 200 ms after it was sent, within its 300 ms lease"),
        "{}",
        e.why
    );
}

#[test]
fn an_acquire_of_a_free_lock_refused_after_more_than_its_lease_is_exposed_but_a_contended_one_is_not(
) {
    // Client 1 asks a free lock under latency and is refused after 500 ms (a 300 ms lease):
    // a grant that came too late, refused. Client 2's refusal after 500 ms came while client 3
    // held the lock: it waited on a holder, which says nothing of latency.
    let free = H::default()
        .nemesis(50, F::Slow, &["n1"], None)
        .ask(100, 1)
        .refused(600, 1)
        .nemesis(1500, F::Heal, &["n1"], None)
        .end(2000);
    let w = one(free, latency_plan()).window.expect("refused too late");
    assert_eq!(
        (w.from_ns, w.to_ns, w.askers.len()),
        (400_000_000, 600_000_000, 0)
    );
    let contended = H::default()
        .nemesis(50, F::Slow, &["n1"], None)
        .ask(60, 3)
        .grant(70, 3, Some(300))
        .ask(100, 2)
        .refused(600, 2)
        .release(650, 3)
        .nemesis(1500, F::Heal, &["n1"], None)
        .end(2000);
    let e = one(contended, latency_plan());
    assert!(e.window.is_none(), "{e:?}");
}

#[test]
fn a_crash_of_the_holder_that_others_wait_on_is_exposed_and_of_an_idle_client_is_not() {
    let plan = || {
        plan(
            F::Crash,
            Target::Client,
            Rule::HolderCrashed,
            Some(1000),
            &["n1"],
        )
    };
    let h = H::default()
        .ask(0, 1)
        .grant(100, 1, Some(1000))
        .nemesis(200, F::Crash, &[], Some(1))
        .ask(300, 2)
        .grant(1100, 2, Some(1000))
        .end(2000);
    let w = one(h, plan()).window.expect("exposed");
    assert_eq!((w.holder, w.askers.clone()), (1, vec![2]));
    let idle = H::default()
        .nemesis(200, F::Crash, &[], Some(1))
        .ask(300, 2)
        .grant(310, 2, Some(1000))
        .end(2000);
    assert_eq!(one(idle, plan()).why, "the crashed client held no lock");
}

#[test]
fn a_fault_in_force_during_a_hold_nobody_else_wanted_is_not_exposed() {
    let plan = plan(
        F::Failover,
        Target::Nodes,
        Rule::InForceDuringContendedHold,
        Some(1000),
        &["n1"],
    );
    let h = H::default()
        .ask(0, 1)
        .grant(100, 1, Some(1000))
        .nemesis(200, F::Failover, &["n1"], None)
        .release(300, 1)
        .ask(400, 2)
        .grant(410, 2, Some(1000))
        .end(2000);
    let e = one(h, plan.clone());
    assert!(e.why.contains("no other client asked"), "{}", e.why);
    let contended = H::default()
        .ask(0, 1)
        .grant(100, 1, Some(1000))
        .ask(150, 2)
        .nemesis(200, F::Failover, &["n1"], None)
        .release(300, 1)
        .grant(310, 2, Some(1000))
        .end(2000);
    assert!(one(contended, plan).window.is_some());
}

#[test]
fn a_run_is_exposed_by_any_instance_and_a_baseline_needs_none() {
    assert!(exposures(&H::default().end(10).0, Plan::none()).exposed());
    let never = exposures(&H::default().end(10).0, pause_plan());
    assert!(!never.exposed());
    assert_eq!(
        never.summary(),
        Err("the pause fault never took effect before the run ended".to_owned())
    );
    assert_eq!(with_exposure(Verdict::Valid, &never), Verdict::NotExposed);
    assert_eq!(with_exposure(Verdict::Invalid, &never), Verdict::Invalid);
    assert_eq!(with_exposure(Verdict::Stuck, &never), Verdict::Stuck);
}

#[test]
fn every_rule_has_a_name_and_a_sentence_the_docs_state() {
    let docs = include_str!("../../../docs/exposure.md");
    for rule in Rule::ALL {
        assert!(
            docs.contains(rule.name()) && docs.contains(rule.text()),
            "docs/exposure.md must state {}: {:?}",
            rule.name(),
            rule.text()
        );
        let json = serde_json::to_string(&rule).unwrap();
        assert_eq!(json, format!("\"{}\"", rule.name()));
    }
}

/// `n` cycles of 2 s: client 1 holds a 500 ms lease granted at 100 ms into the cycle and is
/// paused at 200 ms for `pause(k)` ms (past the lease from 500 ms on: client 2, asking from
/// 300 ms, is granted at 700 ms); both release.
fn pause_cycles(n: u64, pause: impl Fn(u64) -> u64) -> H {
    let mut h = H::default();
    for k in 0..n {
        let t = k * 2000;
        h = h
            .ask(t, 1)
            .grant(t + 100, 1, Some(500))
            .nemesis(t + 200, F::Pause, &[], Some(1))
            .ask(t + 300, 2)
            .nemesis(t + 200 + pause(k), F::Resume, &[], Some(1))
            .grant(t + 700, 2, Some(500))
            .release(t + 950, 1)
            .release(t + 1000, 2);
    }
    h
}

#[test]
fn a_soaks_recurring_faults_are_judged_as_they_settle_and_the_same_as_kept_to_the_end() {
    // 300 cycles of 2 s: client 1 holds a 500 ms lease and is paused past it (exposed: client 2
    // is granted meanwhile) or, every third cycle, within it (not exposed); client 2 releases.
    // An hour's soak is this for thousands of faults: what stays open must not grow with it.
    let h = pause_cycles(300, |k| if k % 3 == 0 { 200 } else { 700 }).end(600_000);
    let mut settling = ExposureStream::new(pause_plan());
    let mut keeping = ExposureStream::new(pause_plan()).keeping_all();
    let mut most_open = 0;
    for e in &h.0 {
        settling.push(&e.as_ref());
        keeping.push(&e.as_ref());
        most_open = most_open.max(settling.open_instances());
    }
    assert!(most_open <= 1, "{most_open} instances open at once");
    assert_eq!(keeping.open_instances(), 300);
    let (settled, kept) = (settling.finish(), keeping.finish());
    assert_eq!(settled, kept);
    let exposed = settled.faults.iter().filter(|f| f.window.is_some()).count();
    assert_eq!((settled.faults.len(), exposed), (300, 200));
}

/// `plan` for a lock whose library renews it where the history does not show it.
fn renewed_unseen(mut p: Plan) -> Plan {
    p.lock.renewed_unseen = true;
    p
}

#[test]
fn a_restart_after_one_lease_from_the_grant_exposes_a_hold_its_library_renews_unseen() {
    // Client 1 holds from 100 ms to 5 s on a 2 s lease it never renews in the history; n1
    // is down from 500 ms to 3 s and client 2 asks at 3.5 s.
    let h = || {
        H::default()
            .ask(0, 1)
            .grant(100, 1, Some(2000))
            .nemesis(500, F::Crash, &["n1"], None)
            .nemesis(3000, F::Restart, &["n1"], None)
            .ask(3500, 2)
            .release(5000, 1)
            .grant(5010, 2, Some(2000))
            .end(6000)
    };
    // Counted from its grant, the lease ran out at 2.1 s, before the node came back.
    let e = one(h(), crash_plan());
    assert!(e.window.is_none(), "{e:?}");
    assert!(
        e.why
            .contains("after client 1's hold or lease ended at 2.100 s"),
        "{}",
        e.why
    );
    // Renewed by the library with the nodes left, it was live until the release.
    let e = one(h(), renewed_unseen(crash_plan()));
    let w = e.window.as_ref().expect("exposed");
    assert_eq!((w.from_ns, w.to_ns), (3_000_000_000, 5_000_000_000));
    assert!(
        e.why
            .starts_with("the node came back while the holder's lease, which its library renews, was live: client 1 held from 3.000 s to 5.000 s"),
        "{}",
        e.why
    );
}

#[test]
fn a_pause_counts_a_lease_its_library_renews_unseen_from_the_pause_not_the_grant() {
    // Client 1 granted a 500 ms lease at 100 ms holds to 3 s; its library keeps renewing it
    // unseen until the pause stops the process.
    let h = |resume: u64| {
        H::default()
            .ask(0, 1)
            .grant(100, 1, Some(500))
            .nemesis(1000, F::Pause, &[], Some(1))
            .ask(1100, 2)
            .grant(1600, 2, Some(500))
            .nemesis(resume, F::Resume, &[], Some(1))
            .release(3000, 1)
            .end(3500)
    };
    // A 400 ms pause: past the lease counted from the grant, within the one renewed until it.
    assert!(one(h(1400), pause_plan()).window.is_some());
    let e = one(h(1400), renewed_unseen(pause_plan()));
    assert!(e.window.is_none(), "{e:?}");
    assert!(
        e.why.contains("the pause ended 400 ms after client 1's lease began (its library renews it unseen, so at the latest when it fell silent), within its 500 ms lease"),
        "{}",
        e.why
    );
    // A 900 ms pause outlasts it: the window opens one lease after the pause began.
    let e = one(h(1900), renewed_unseen(pause_plan()));
    let w = e.window.as_ref().expect("exposed");
    assert_eq!((w.from_ns, w.to_ns), (1_500_000_000, 3_000_000_000));
    assert!(
        e.why.contains("counted from when it fell silent"),
        "{}",
        e.why
    );
}

#[test]
fn a_soak_keeps_its_first_instances_whole_and_counts_the_rest() {
    // 1,200 cycles as above, every third pause within the lease: 800 exposed, 400 not.
    let h = pause_cycles(1200, |k| if k % 3 == 0 { 200 } else { 700 });
    let all = exposures(&h.end(2_400_000).0, pause_plan());
    assert_eq!(all.faults.len(), KEPT_INSTANCES);
    // The kept ones are the first to start.
    assert_eq!(all.faults[0].start_ns, 200_000_000);
    assert_eq!(
        all.faults[KEPT_INSTANCES - 1].start_ns,
        (KEPT_INSTANCES as u64 - 1) * 2_000_000_000 + 200_000_000
    );
    assert_eq!(all.count(), (800, 1200));
    assert_eq!(all.omitted(), 700);
    let kept_exposed = all.faults.iter().filter(|e| e.exposed()).count() as u64;
    assert_eq!(all.omitted_exposed, 800 - kept_exposed);
    assert!(all.exposed());
}

#[test]
fn a_first_exposed_instance_past_the_kept_ones_is_kept_for_the_summary() {
    // 600 pauses within the lease, then one past it: the summary names that one.
    let h = pause_cycles(601, |k| if k == 600 { 700 } else { 200 });
    let all = exposures(&h.end(1_300_000).0, pause_plan());
    assert_eq!(all.faults.len(), KEPT_INSTANCES + 1);
    assert_eq!((all.omitted_exposed, all.omitted_not_exposed), (0, 100));
    assert_eq!(all.count(), (1, 601));
    let summary = all.summary().expect("exposed");
    assert!(
        summary.starts_with("pause of client 1 at 1200.200 s"),
        "{summary}"
    );
}
