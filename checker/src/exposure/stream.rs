//! The history read once for exposure: the holds and the asks as they happen, and for each
//! fault instance the holds it could have broken (its candidates), with the asks that met them.
//! Memory follows the clients, the fault instances still open and the asks during their holds,
//! not the history's length: an instance is judged and let go as soon as nothing later in the
//! history can change its judgement (a soak's hour of recurring faults keeps only what is open,
//! and each instance's verdict).

use super::judge::judge;
use super::parts::{Ask, Asking, Cand, Hold, Instance, TokenAfter, TokensSeen};
use super::{Exposure, Exposures, Plan, Rule, KEPT_INSTANCES};
use crate::fault_verbs::{self, Ends, Target};
use crate::history::{EventKind, EventRef, Process, F};
use std::collections::BTreeMap;

/// Exposure fed one event at a time.
#[derive(Debug, Clone)]
pub struct ExposureStream {
    plan: Plan,
    holds: BTreeMap<u64, Hold>,
    /// Each client's pending acquire.
    asking: BTreeMap<u64, Asking>,
    /// Each client's pending renewal: when it was sent.
    renewing: BTreeMap<u64, u64>,
    /// The instances not judged yet, each with its place in the order instances started.
    instances: Vec<Instance>,
    order: Vec<usize>,
    /// The instances judged already and kept whole, by their place in that order.
    judged: Vec<(usize, Exposure)>,
    /// Whether one of them opened a window; the instances judged past the kept ones, counted.
    kept_exposed: bool,
    omitted_exposed: u64,
    omitted_not_exposed: u64,
    /// How many instances started, and which faults (verb, target) did.
    started: usize,
    kinds_started: Vec<(F, Target)>,
    /// Per lock, the lowest and highest fencing token granted so far.
    tokens: BTreeMap<Option<String>, (u64, u64)>,
    end_ns: u64,
    /// Let settled instances go (always, but in the test that compares with keeping them).
    retire: bool,
}

impl ExposureStream {
    pub fn new(plan: Plan) -> ExposureStream {
        ExposureStream {
            plan,
            holds: BTreeMap::new(),
            asking: BTreeMap::new(),
            renewing: BTreeMap::new(),
            instances: Vec::new(),
            order: Vec::new(),
            judged: Vec::new(),
            kept_exposed: false,
            omitted_exposed: 0,
            omitted_not_exposed: 0,
            started: 0,
            kinds_started: Vec::new(),
            tokens: BTreeMap::new(),
            end_ns: 0,
            retire: true,
        }
    }

    /// The same stream, keeping every instance to the end: what letting them go must equal.
    #[cfg(test)]
    pub(super) fn keeping_all(mut self) -> ExposureStream {
        self.retire = false;
        self
    }

    /// The instances not judged yet.
    #[cfg(test)]
    pub(super) fn open_instances(&self) -> usize {
        self.instances.len()
    }

    /// Takes the next event, in history order.
    pub fn push(&mut self, e: &EventRef<'_>) {
        self.end_ns = e.time_ns;
        match e.process {
            Process::Client(c) => self.client_event(c, e),
            Process::Nemesis => self.nemesis_event(e),
        }
        if e.kind != EventKind::Invoke && self.retire {
            self.judge_settled();
        }
    }

    /// Judges and lets go every instance nothing later can change: it ended, every hold it
    /// judges ended, no acquire or renewal still pending was sent before those ends (its answer
    /// could meet a hold, or be a grant the fault slowed), and, for a restart, the first
    /// token granted after it came. What `finish` would make of it at the run's end, it makes
    /// now ([`judge`] reads the run's end only for what had not ended).
    fn judge_settled(&mut self) {
        // Most events come with no instance open: nothing to look at.
        if self.instances.is_empty() {
            return;
        }
        let oldest_pending = (self.asking.values().map(|a| a.invoke_ns))
            .chain(self.renewing.values().copied())
            .min();
        let settled = |i: &Instance| {
            let Some(end) = i.end_ns else {
                return false;
            };
            let mut last = end;
            for cand in &i.cands {
                match cand.end_ns {
                    Some(e) => last = last.max(e),
                    None => return false,
                }
            }
            // A restart after tokens were granted is judged on the first token after it.
            let tokens_known = i.rule != Rule::RestartInsideLease
                || i.tokens_before.is_empty()
                || i.token_after.is_some();
            // A crashed holder's window runs to the end of the run.
            i.rule != Rule::HolderCrashed
                && tokens_known
                && oldest_pending.is_none_or(|sent| sent > last)
        };
        if !self.instances.iter().any(settled) {
            return;
        }
        let mut k = 0;
        while k < self.instances.len() {
            if settled(&self.instances[k]) {
                let i = self.instances.swap_remove(k);
                let at = self.order.swap_remove(k);
                self.keep(at, judge(&i, &self.plan.lock, self.end_ns));
            } else {
                k += 1;
            }
        }
    }

    fn client_event(&mut self, c: u64, e: &EventRef<'_>) {
        let t = e.time_ns;
        match (e.f, e.kind) {
            (F::Acquire, EventKind::Invoke) => {
                let lock = e.lock.as_deref().map(str::to_owned);
                let contended = (self.holds.iter()).any(|(h, hold)| *h != c && hold.lock == lock);
                self.asking.insert(
                    c,
                    Asking {
                        invoke_ns: t,
                        lock,
                        contended,
                    },
                );
            }
            (F::Acquire, EventKind::Ok | EventKind::Fail | EventKind::Info) => {
                let asking = self.asking.remove(&c);
                let invoke_ns = asking.as_ref().map_or(t, |a| a.invoke_ns);
                let granted = e.kind == EventKind::Ok;
                self.met(c, e.lock.as_deref(), invoke_ns, t, granted);
                // An unknown outcome (info) shows neither the grant nor the refusal a cut tests.
                if e.kind != EventKind::Info {
                    self.waited(c, e.lock.as_deref(), invoke_ns, t);
                }
                if granted {
                    for other in self.asking.values_mut() {
                        if other.lock.as_deref() == e.lock.as_deref() {
                            other.contended = true;
                        }
                    }
                } else if let Some(a) = asking.filter(|a| !a.contended) {
                    self.refused(c, &a, t);
                }
                if let (true, Some(token)) = (granted, e.value.token) {
                    let lock = e.lock.as_deref().map(str::to_owned);
                    for i in self.instances.iter_mut() {
                        if i.end_ns.is_none_or(|end| end > t) || i.token_after.is_some() {
                            continue;
                        }
                        if let Some(seen) = i.tokens_before.iter().find(|s| s.lock == lock) {
                            i.token_after = Some(TokenAfter {
                                client: c,
                                at_ns: t,
                                lowest: seen.lowest,
                                highest: seen.highest,
                            });
                        }
                    }
                    let range = self.tokens.entry(lock).or_insert((token, token));
                    *range = (range.0.min(token), range.1.max(token));
                }
                if e.kind == EventKind::Ok {
                    let hold = Hold {
                        lock: e.lock.as_deref().map(str::to_owned),
                        granted_ns: t,
                        since_ns: t,
                        lease_ms: e.value.lease_ms,
                        sent_ns: e.value.sent_ns.unwrap_or(invoke_ns),
                    };
                    self.granted(c, &hold);
                    self.holds.insert(c, hold);
                }
            }
            (F::Renew, EventKind::Invoke) => {
                self.renewing.insert(c, t);
            }
            (F::Renew, EventKind::Ok) => {
                let sent = self.renewing.remove(&c).unwrap_or(t);
                self.renewal_back(c, sent, t);
                if let Some(h) = self.holds.get_mut(&c) {
                    h.since_ns = t;
                    h.sent_ns = sent;
                    h.lease_ms = e.value.lease_ms.or(h.lease_ms);
                    let renewed = h.clone();
                    for cand in self.live_cands_of(c) {
                        cand.hold.since_ns = renewed.since_ns;
                        cand.hold.lease_ms = renewed.lease_ms;
                    }
                    // A renewal is a grant of the lease again: latency judges it as one.
                    self.granted(c, &renewed);
                }
            }
            (F::Renew, EventKind::Fail | EventKind::Info) => {
                if let Some(sent) = self.renewing.remove(&c) {
                    self.renewal_back(c, sent, t);
                }
            }
            (F::Release, EventKind::Invoke) => {
                for cand in self.live_cands_of(c) {
                    cand.release_sent_ns.get_or_insert(t);
                }
            }
            (F::Release, EventKind::Ok | EventKind::Fail | EventKind::Info) => {
                // Any answer ends the hold as far as a violation by this holder goes: after
                // it, the client no longer writes as the lock's holder.
                self.holds.remove(&c);
                for cand in self.live_cands_of(c) {
                    cand.end_ns = Some(t);
                }
            }
            (F::Write | F::Read | F::Cas | F::Notice, _)
            | (
                F::Partition
                | F::Slow
                | F::Heal
                | F::Pause
                | F::Resume
                | F::Crash
                | F::Restart
                | F::Clock
                | F::ClockReset
                | F::Failover,
                _,
            ) => {}
        }
    }

    /// The candidates whose hold is `client`'s and has not ended.
    fn live_cands_of(&mut self, client: u64) -> impl Iterator<Item = &mut Cand> {
        (self.instances.iter_mut())
            .flat_map(|i| i.cands.iter_mut())
            .filter(move |cand| cand.holder == client && cand.end_ns.is_none())
    }

    /// `client`'s hold granted (or renewed) now: a candidate of the instances in force that
    /// judge every hold granted during them.
    fn granted(&mut self, client: u64, hold: &Hold) {
        for i in self.instances.iter_mut() {
            // Latency judges every grant whose request it slowed, even one that came back after
            // the heal, and so does a cut, which holds the requests sent across it; the other
            // rules, the holds granted while they were in force.
            let slowed = matches!(i.rule, Rule::DelayPastLease | Rule::CutPastLease)
                && i.start_ns <= hold.since_ns
                && i.end_ns.is_none_or(|end| hold.sent_ns <= end);
            // A crash judges the grants whose request was on its way when the node went down,
            // whenever they came back: the request may have written the node before it fell
            // and counted its reply, which the node no longer remembers once it is back.
            let across_crash = i.rule == Rule::RestartInsideLease
                && hold.sent_ns <= i.start_ns
                && i.start_ns <= hold.since_ns;
            if !(slowed || across_crash || (i.open() && i.takes_new_holds())) {
                continue;
            }
            let renewal = i
                .cands
                .iter()
                .any(|c| c.holder == client && c.end_ns.is_none());
            // A renewal of a hold already judged adds a candidate only for latency, which
            // judges each grant's round trip.
            if renewal && i.rule != Rule::DelayPastLease {
                continue;
            }
            i.cands.push(Cand {
                holder: client,
                hold: hold.clone(),
                end_ns: None,
                release_sent_ns: None,
                asks: Vec::new(),
                refused: false,
                stalled: false,
                waited: false,
            });
        }
    }

    /// `client`'s renewal sent at `sent_ns` came back (or failed) at `done_ns`: a cut in force
    /// while it was on its way that kept it away past the lease its hold had left stalled the
    /// holder (`Cand::stalled`), whatever quorum the cut left the others.
    fn renewal_back(&mut self, client: u64, sent_ns: u64, done_ns: u64) {
        let configured = self.plan.lock.lease_ms;
        let cuts = self.instances.iter_mut().filter(|i| {
            i.rule == Rule::CutPastLease
                && i.start_ns <= done_ns
                && i.end_ns.is_none_or(|end| sent_ns <= end)
        });
        for i in cuts {
            for cand in (i.cands.iter_mut()).filter(|c| c.holder == client && c.end_ns.is_none()) {
                let Some(lease) = cand.hold.lease_ms.or(configured) else {
                    continue;
                };
                let lease_end =
                    (cand.hold.since_ns).saturating_add(lease.saturating_mul(1_000_000));
                cand.stalled |= done_ns > lease_end;
            }
        }
    }

    /// `client`'s acquire of `lock`, sent at `invoke_ns`, came back (granted or refused) at
    /// `done_ns`: a candidate of each cut that began before it came back and had been in
    /// force for the lease while it waited (its session could end meanwhile: the keep-alives
    /// sent from the cut's start did not arrive); `judge` asks whether the cut left its client
    /// a quorum.
    fn waited(&mut self, client: u64, lock: Option<&str>, invoke_ns: u64, done_ns: u64) {
        let Some(lease) = self
            .plan
            .lock
            .lease_ms
            .filter(|_| self.plan.lock.waiter_sessions)
        else {
            return;
        };
        for i in self.instances.iter_mut() {
            let lease_out = i.start_ns.saturating_add(lease.saturating_mul(1_000_000));
            let cut_long = i.end_ns.is_none_or(|end| end > lease_out);
            if i.rule == Rule::CutPastLease
                && cut_long
                && invoke_ns <= lease_out
                && done_ns > lease_out
            {
                i.cands.push(Cand {
                    holder: client,
                    hold: Hold {
                        lock: lock.map(str::to_owned),
                        granted_ns: done_ns,
                        since_ns: done_ns,
                        lease_ms: None,
                        sent_ns: invoke_ns,
                    },
                    end_ns: Some(done_ns),
                    release_sent_ns: None,
                    asks: Vec::new(),
                    refused: false,
                    stalled: false,
                    waited: true,
                });
            }
        }
    }

    /// `client`'s acquire `a`, sent while the lock was free and nobody was granted it since,
    /// came back refused at `done_ns`: a candidate of the latency in force during it if it
    /// took longer than the lease (the lock refused a grant that came too late).
    fn refused(&mut self, client: u64, a: &Asking, done_ns: u64) {
        let Some(lease) = self.plan.lock.lease_ms else {
            return;
        };
        if done_ns.saturating_sub(a.invoke_ns) <= lease * 1_000_000 {
            return;
        }
        for i in self.instances.iter_mut() {
            let overlapped = i.start_ns <= done_ns && i.end_ns.is_none_or(|end| end >= a.invoke_ns);
            if i.rule == Rule::DelayPastLease && overlapped {
                i.cands.push(Cand {
                    holder: client,
                    hold: Hold {
                        lock: a.lock.clone(),
                        granted_ns: done_ns,
                        since_ns: done_ns,
                        lease_ms: None,
                        sent_ns: a.invoke_ns,
                    },
                    end_ns: Some(done_ns),
                    release_sent_ns: None,
                    asks: Vec::new(),
                    refused: true,
                    stalled: false,
                    waited: false,
                });
            }
        }
    }

    /// `client`'s acquire of `lock`, sent at `invoke_ns`, came back at `done_ns` (`granted` or
    /// not): it met every
    /// other client's hold of that lock that had not ended before it was sent.
    fn met(
        &mut self,
        client: u64,
        lock: Option<&str>,
        invoke_ns: u64,
        done_ns: u64,
        granted: bool,
    ) {
        let ask = Ask {
            client,
            invoke_ns,
            done_ns,
            granted,
        };
        for cand in self.instances.iter_mut().flat_map(|i| i.cands.iter_mut()) {
            if cand.holder != client
                && cand.hold.lock.as_deref() == lock
                && cand.end_ns.is_none_or(|end| end >= invoke_ns)
            {
                cand.asks.push(ask);
            }
        }
    }

    fn nemesis_event(&mut self, e: &EventRef<'_>) {
        if e.kind != EventKind::Info || e.error.is_some() {
            return;
        }
        let t = e.time_ns;
        let target = Target::of(e.value.client);
        let nodes: Vec<String> = e.value.nodes.iter().map(|n| n.to_string()).collect();
        match fault_verbs::role(e.f) {
            fault_verbs::Role::Opens(opener) => {
                let Some(rule) = self.plan.rule_for(e.f, target) else {
                    return;
                };
                // A cut or a slowdown of peer links (`n2-to-n1`) leaves every client its nodes
                // at their speed: only the fault's being in force during a contended hold can be
                // said of it.
                let rule = match rule {
                    Rule::CutPastLease | Rule::DelayPastLease
                        if nodes.iter().any(|n| n.contains("-to-")) =>
                    {
                        Rule::InForceDuringContendedHold
                    }
                    other => other,
                };
                let mut instance = Instance {
                    verb: e.f,
                    target,
                    rule,
                    start_ns: t,
                    end_ns: (opener.ends(target) == Ends::Instant).then_some(t),
                    nodes,
                    client: e.value.client,
                    offset_ms: e.value.offset_ms,
                    cands: Vec::new(),
                    tokens_before: (self.tokens.iter())
                        .filter(|(_, (lowest, highest))| highest > lowest)
                        .map(|(lock, &(lowest, highest))| TokensSeen {
                            lock: lock.clone(),
                            lowest,
                            highest,
                        })
                        .collect(),
                    token_after: None,
                };
                self.order.push(self.started);
                self.started += 1;
                if !self.kinds_started.contains(&(e.f, target)) {
                    self.kinds_started.push((e.f, target));
                }
                for (&holder, hold) in &self.holds {
                    if instance.takes_hold_of(holder) {
                        instance.cands.push(Cand {
                            holder,
                            hold: hold.clone(),
                            end_ns: None,
                            release_sent_ns: None,
                            asks: Vec::new(),
                            refused: false,
                            stalled: false,
                            waited: false,
                        });
                    }
                }
                self.instances.push(instance);
            }
            fault_verbs::Role::Closes => {
                for i in self.instances.iter_mut().filter(|i| i.open()) {
                    let aimed = match i.target {
                        Target::Client => i.client == e.value.client,
                        Target::Nodes => {
                            nodes.is_empty()
                                || i.nodes.is_empty()
                                || i.nodes.iter().any(|n| nodes.contains(n))
                        }
                    };
                    if aimed && fault_verbs::closes(e.f, i.verb, i.target) {
                        i.end_ns = Some(t);
                    }
                }
            }
            fault_verbs::Role::Client => {}
        }
    }

    /// Every fault instance judged; asks still pending count to the run's end.
    pub fn finish(mut self) -> Exposures {
        let asking = std::mem::take(&mut self.asking);
        for (client, a) in asking {
            self.met(client, a.lock.as_deref(), a.invoke_ns, self.end_ns, false);
        }
        let never_started = (self.plan.faults.iter())
            .filter(|f| !self.kinds_started.contains(&(f.verb, f.target)))
            .map(|f| {
                format!(
                    "the {} fault never took effect before the run ended",
                    f.verb
                )
            })
            .collect();
        let open = std::mem::take(&mut self.instances);
        let order = std::mem::take(&mut self.order);
        for (i, at) in open.iter().zip(order) {
            let judged = judge(i, &self.plan.lock, self.end_ns);
            self.keep(at, judged);
        }
        let mut judged = std::mem::take(&mut self.judged);
        judged.sort_by_key(|(at, _)| *at);
        Exposures {
            planned: !self.plan.faults.is_empty(),
            faults: judged.into_iter().map(|(_, e)| e).collect(),
            omitted_exposed: self.omitted_exposed,
            omitted_not_exposed: self.omitted_not_exposed,
            never_started,
        }
    }

    /// Keeps a judged instance whole while fewer than [`KEPT_INSTANCES`] are (and the first
    /// exposed one past them, for the run's summary), else counts it: what an hour's soak
    /// keeps must not grow with its faults.
    fn keep(&mut self, at: usize, judged: Exposure) {
        let first_exposed = judged.exposed() && !self.kept_exposed;
        if self.judged.len() < KEPT_INSTANCES || first_exposed {
            self.kept_exposed |= judged.exposed();
            self.judged.push((at, judged));
        } else if judged.exposed() {
            self.omitted_exposed += 1;
        } else {
            self.omitted_not_exposed += 1;
        }
    }
}
