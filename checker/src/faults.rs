//! Fault windows: the nemesis events of a history turned into time intervals during which a
//! fault was in force, and the query "which faults were active during [a, b]".

use crate::fault_verbs::{self, opener, role, Ends, Role, Target};
use crate::history::{Event, EventKind, Process, F};
use serde::{Deserialize, Serialize};

/// One fault in force from `start_ns` to `end_ns` (both inclusive).
///
/// A window that was never closed ends at the last event of the history and has no
/// `end_index`. A client crash is instantaneous: `start_ns == end_ns` and it is never healed
/// (see [`FaultWindow::is_instant`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultWindow {
    /// The nemesis verb that opened the window, one the table ([`fault_verbs::role`]) says
    /// opens.
    pub f: F,
    pub start_ns: u64,
    pub end_ns: u64,
    /// The nodes the fault applies to; empty for a client fault.
    pub nodes: Vec<String>,
    /// The client process the fault applies to, for a client pause or crash.
    pub client: Option<u64>,
    /// History index of the nemesis event that opened the window.
    pub start_index: u64,
    /// History index of the event that closed it (`heal`, `resume`, `restart`,
    /// `clock-reset`); `None` when the
    /// history ended first or the fault is an instantaneous client crash.
    pub end_index: Option<u64>,
    /// A pause inside a request (point `during-op`): whether the request's reply had already
    /// come when the stop took hold, as its `note` ends. Such a stop changed nothing the
    /// request did, so an explanation does not blame it for the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_came: Option<bool>,
}

impl FaultWindow {
    /// True for a client crash (an [`Ends::Instant`] in the table): a point in time, not a
    /// stretch during which the system was degraded, so it does not excuse a later lack of
    /// progress.
    pub fn is_instant(&self) -> bool {
        opener(self.f).is_some_and(|o| o.ends(self.target()) == Ends::Instant)
    }

    /// Whether the fault was aimed at a client or at nodes.
    pub fn target(&self) -> Target {
        Target::of(self.client)
    }

    /// True when the window shares at least one instant with `[start_ns, end_ns]`.
    pub fn overlaps(&self, start_ns: u64, end_ns: u64) -> bool {
        self.start_ns <= end_ns && start_ns <= self.end_ns
    }

    /// A few words for a human: "pause of client 3 for 2.400 s from 10.000 s".
    pub fn describe(&self) -> String {
        let target = match self.client {
            Some(c) => format!("client {c}"),
            None if self.nodes.is_empty() => "all nodes".to_string(),
            None => self.nodes.join(","),
        };
        if self.is_instant() {
            return format!("crash of {target} at {}", secs(self.start_ns));
        }
        let open = if self.end_index.is_none() {
            " (never healed)"
        } else {
            ""
        };
        format!(
            "{} of {target} for {} from {}{open}",
            self.f,
            secs(self.end_ns - self.start_ns),
            secs(self.start_ns)
        )
    }
}

/// For a pause inside a request, whether its reply had already come: the harness ends the
/// pause's `note` with `its reply had already come` or `no reply yet`
/// (docs/history-format.md, pause points).
fn reply_came(e: &Event) -> Option<bool> {
    if e.value.point.as_deref() != Some("during-op") {
        return None;
    }
    let note = e.value.note.as_deref()?;
    if note.ends_with("its reply had already come") {
        Some(true)
    } else if note.ends_with("no reply yet") {
        Some(false)
    } else {
        None
    }
}

/// Formats nanoseconds as seconds with millisecond precision: "12.301 s".
pub fn secs(ns: u64) -> String {
    format!("{}.{:03} s", ns / 1_000_000_000, (ns / 1_000_000) % 1000)
}

/// A window still waiting for the events that close it.
#[derive(Debug)]
struct Open {
    window: FaultWindow,
    /// Nodes not yet healed / restarted / resumed; the window closes when none are left.
    pending: Vec<String>,
}

/// Turns the nemesis events of a history into fault windows, ordered by start.
///
/// Which verb opens a window, which closes it and which windows never close is the table's,
/// [`fault_verbs::role`]; how they pair with events is here.
///
/// `heal {nodes}` ends every network fault (partition, slow) on those nodes, `restart {nodes}`
/// ends node crashes, `clock-reset {nodes}` ends clock faults, `resume {client}` or
/// `resume {nodes}` ends the matching pause. A window over several nodes closes when its last
/// node is healed. A closer without nodes or client closes every window it applies to.
///
/// Windows are as wide as the history allows: a fault recorded as an `invoke`/`info` pair
/// opens at its invoke (it may have been in force from then on) and is closed by the `info`
/// of its closer (only then is it surely over); a closer whose completion carries an error
/// closes nothing. A fault recorded as a lone `info` (client faults, which take effect the
/// moment they are recorded) opens and closes at that event. Precondition: `events` are in
/// history order.
pub fn fault_windows(events: &[Event]) -> Vec<FaultWindow> {
    let mut stream = FaultStream::default();
    for e in events.iter().filter(|e| e.process == Process::Nemesis) {
        stream.push(e);
    }
    stream.finish(events.last().map_or(0, |e| e.time_ns))
}

/// [`fault_windows`] one nemesis event at a time, for a reader that does not keep the
/// history: memory is one entry per fault.
#[derive(Debug, Default)]
pub struct FaultStream {
    open: Vec<Open>,
    done: Vec<FaultWindow>,
    /// Openers invoked and not yet completed: their window is already open.
    invoked: Vec<(F, Vec<String>, Option<u64>)>,
}

impl FaultStream {
    /// Takes the next nemesis event, in history order; client events are ignored.
    pub fn push(&mut self, e: &Event) {
        if e.process != Process::Nemesis {
            return;
        }
        match role(e.f) {
            // A window no closer heals (a failover) runs to the end of the history.
            Role::Opens(_) => {
                let key = (e.f, e.value.nodes.clone(), e.value.client);
                match e.kind {
                    EventKind::Invoke => self.invoked.push(key),
                    _ => {
                        if let Some(at) = self.invoked.iter().position(|k| *k == key) {
                            self.invoked.remove(at);
                            return;
                        }
                    }
                }
                let window = FaultWindow {
                    f: e.f,
                    start_ns: e.time_ns,
                    end_ns: e.time_ns,
                    nodes: e.value.nodes.clone(),
                    client: e.value.client,
                    start_index: e.index,
                    end_index: None,
                    reply_came: reply_came(e),
                };
                if window.is_instant() {
                    self.done.push(window);
                } else {
                    let pending = e.value.nodes.clone();
                    self.open.push(Open { window, pending });
                }
            }
            Role::Closes => {
                if e.kind == EventKind::Invoke || e.error.is_some() {
                    return;
                }
                let everything = e.value.nodes.is_empty() && e.value.client.is_none();
                for o in self.open.iter_mut() {
                    let w = &o.window;
                    if !fault_verbs::closes(e.f, w.f, w.target()) {
                        continue;
                    }
                    match w.client {
                        Some(c) => {
                            if everything || e.value.client == Some(c) {
                                o.pending.clear();
                                o.window.end_index = Some(e.index);
                            }
                        }
                        None => {
                            let applies = everything
                                || w.nodes.is_empty()
                                || o.pending.iter().any(|n| e.value.nodes.contains(n));
                            if !applies {
                                continue;
                            }
                            if everything {
                                o.pending.clear();
                            } else {
                                o.pending.retain(|n| !e.value.nodes.contains(n));
                            }
                            if o.pending.is_empty() {
                                o.window.end_index = Some(e.index);
                            }
                        }
                    }
                }
                let (closed, still): (Vec<Open>, Vec<Open>) = std::mem::take(&mut self.open)
                    .into_iter()
                    .partition(|o| o.window.end_index.is_some());
                self.open = still;
                self.done.extend(closed.into_iter().map(|mut o| {
                    o.window.end_ns = e.time_ns;
                    o.window
                }));
            }
            Role::Client => {}
        }
    }

    /// The windows, ordered by start; a window still open ends at `history_end`.
    pub fn finish(self, history_end: u64) -> Vec<FaultWindow> {
        let mut done = self.done;
        done.extend(self.open.into_iter().map(|mut o| {
            o.window.end_ns = history_end.max(o.window.start_ns);
            o.window
        }));
        done.sort_by_key(|w| w.start_index);
        done
    }
}

/// The windows that share at least one instant with `[start_ns, end_ns]`, in start order.
pub fn active_during(windows: &[FaultWindow], start_ns: u64, end_ns: u64) -> Vec<&FaultWindow> {
    windows
        .iter()
        .filter(|w| w.overlaps(start_ns, end_ns))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{Value, FORMAT_VERSION};

    fn nem(index: u64, ms: u64, f: F, nodes: &[&str], client: Option<u64>) -> Event {
        Event {
            v: FORMAT_VERSION,
            index,
            time_ns: ms * 1_000_000,
            process: Process::Nemesis,
            kind: EventKind::Info,
            f,
            lock: None,
            value: Value {
                nodes: nodes.iter().map(|n| n.to_string()).collect(),
                client,
                ..Value::default()
            },
            error: None,
        }
    }

    #[test]
    fn heal_closes_a_partition_only_when_all_its_nodes_are_healed() {
        let events = vec![
            nem(0, 100, F::Partition, &["n1", "n2"], None),
            nem(1, 200, F::Heal, &["n1"], None),
            nem(2, 300, F::Heal, &["n2"], None),
        ];
        let w = fault_windows(&events);
        assert_eq!(w.len(), 1);
        assert_eq!((w[0].start_ns, w[0].end_ns), (100_000_000, 300_000_000));
        assert_eq!(w[0].end_index, Some(2));
    }

    #[test]
    fn pause_is_closed_by_resume_of_the_same_client_and_open_windows_run_to_the_end() {
        let events = vec![
            nem(0, 100, F::Pause, &[], Some(3)),
            nem(1, 150, F::Pause, &[], Some(4)),
            nem(2, 200, F::Resume, &[], Some(3)),
            nem(3, 250, F::Crash, &[], Some(5)),
            nem(4, 300, F::Crash, &["n1"], None),
            nem(5, 900, F::Slow, &["n2"], None),
        ];
        let w = fault_windows(&events);
        assert_eq!(w.len(), 5);
        assert_eq!(
            (w[0].client, w[0].end_ns, w[0].end_index),
            (Some(3), 200_000_000, Some(2))
        );
        assert_eq!(
            (w[1].client, w[1].end_ns, w[1].end_index),
            (Some(4), 900_000_000, None)
        );
        assert!(w[2].is_instant());
        assert_eq!(w[2].end_ns, 250_000_000);
        assert!(!w[3].is_instant());
        assert_eq!(w[3].end_ns, 900_000_000);
        assert_eq!(active_during(&w, 210_000_000, 260_000_000).len(), 2);
        assert_eq!(active_during(&w, 201_000_000, 240_000_000).len(), 1);
    }

    #[test]
    fn clock_faults_are_closed_by_a_clock_reset_of_their_nodes_only() {
        let events = vec![
            nem(0, 100, F::Clock, &["n1"], None),
            nem(1, 150, F::Clock, &["n2"], None),
            nem(2, 200, F::Heal, &["n1"], None),
            nem(3, 300, F::ClockReset, &["n1"], None),
        ];
        let w = fault_windows(&events);
        let ends: Vec<(F, Option<u64>)> = w.iter().map(|w| (w.f, w.end_index)).collect();
        assert_eq!(ends, vec![(F::Clock, Some(3)), (F::Clock, None)]);
        assert_eq!(w[0].describe(), "clock of n1 for 0.200 s from 0.100 s");
    }

    #[test]
    fn node_pause_ends_at_resume_of_its_node_and_heal_without_nodes_heals_everything() {
        let events = vec![
            nem(0, 100, F::Pause, &["n1"], None),
            nem(1, 110, F::Slow, &["n2"], None),
            nem(2, 120, F::Partition, &["n3"], None),
            nem(3, 200, F::Resume, &["n2"], None),
            nem(4, 300, F::Resume, &["n1"], None),
            nem(5, 400, F::Heal, &[], None),
        ];
        let w = fault_windows(&events);
        let ends: Vec<(F, Option<u64>)> = w.iter().map(|w| (w.f, w.end_index)).collect();
        assert_eq!(
            ends,
            vec![
                (F::Pause, Some(4)),
                (F::Slow, Some(5)),
                (F::Partition, Some(5))
            ]
        );
        assert_eq!(w[0].describe(), "pause of n1 for 0.200 s from 0.100 s");
    }

    fn invoke(mut e: Event) -> Event {
        e.kind = EventKind::Invoke;
        e
    }

    #[test]
    fn a_paired_fault_opens_at_its_invoke_and_closes_at_the_completion_of_its_heal() {
        let events = vec![
            invoke(nem(0, 100, F::Partition, &["n1"], None)),
            nem(1, 130, F::Partition, &["n1"], None),
            invoke(nem(2, 500, F::Heal, &["n1"], None)),
            nem(3, 540, F::Heal, &["n1"], None),
            invoke(nem(4, 600, F::Crash, &["n2"], None)),
            nem(5, 610, F::Crash, &["n2"], None),
            invoke(nem(6, 700, F::Restart, &["n2"], None)),
        ];
        let w = fault_windows(&events);
        assert_eq!(w.len(), 2, "{w:?}");
        assert_eq!(
            (w[0].start_ns, w[0].end_ns, w[0].start_index, w[0].end_index),
            (100_000_000, 540_000_000, 0, Some(3))
        );
        // The restart never completed: the node may still be down at the end.
        assert_eq!((w[1].start_index, w[1].end_index), (4, None));
    }

    #[test]
    fn a_heal_that_failed_closes_nothing() {
        let mut failed = nem(3, 300, F::Heal, &["n1"], None);
        failed.error = Some("heal proxy n1: connection refused".into());
        let events = vec![
            invoke(nem(0, 100, F::Slow, &["n1"], None)),
            nem(1, 110, F::Slow, &["n1"], None),
            invoke(nem(2, 290, F::Heal, &["n1"], None)),
            failed,
            nem(4, 900, F::Pause, &[], Some(1)),
        ];
        let w = fault_windows(&events);
        assert_eq!((w[0].end_ns, w[0].end_index), (900_000_000, None));
    }

    #[test]
    fn a_failover_is_closed_by_nothing_and_runs_to_the_end_of_the_history() {
        let mut events = vec![nem(0, 100, F::Failover, &["n1", "n2"], None)];
        for (i, closer) in [F::Heal, F::Restart, F::Resume, F::ClockReset]
            .into_iter()
            .enumerate()
        {
            let i = i as u64;
            events.push(nem(1 + 2 * i, 200 + i, closer, &["n1", "n2"], None));
            events.push(nem(2 + 2 * i, 300 + i, closer, &[], None));
        }
        let w = fault_windows(&events);
        assert_eq!(w.len(), 1);
        assert_eq!((w[0].f, w[0].end_index), (F::Failover, None));
        assert_eq!(w[0].end_ns, 303_000_000);
        assert!(!w[0].is_instant());
        assert_eq!(
            w[0].describe(),
            "failover of n1,n2 for 0.203 s from 0.100 s (never healed)"
        );
    }

    /// Each opener on n1 (or on client 1), then one closer on n1 (or client 1): which window
    /// it ended, if any.
    fn closed_by(closer: F, client: Option<u64>) -> Vec<F> {
        let nodes: &[&str] = if client.is_some() { &[] } else { &["n1"] };
        let openers = [F::Partition, F::Slow, F::Pause, F::Crash, F::Clock];
        let mut events: Vec<Event> = openers
            .iter()
            .enumerate()
            .map(|(i, &f)| nem(i as u64, 100 + i as u64, f, nodes, client))
            .collect();
        events.push(nem(5, 200, closer, nodes, client));
        fault_windows(&events)
            .iter()
            .filter(|w| w.end_index == Some(5))
            .map(|w| w.f)
            .collect()
    }

    #[test]
    fn each_closer_ends_the_windows_of_its_own_openers_only() {
        assert_eq!(closed_by(F::Heal, None), [F::Partition, F::Slow]);
        assert_eq!(closed_by(F::Resume, None), [F::Pause]);
        assert_eq!(closed_by(F::Restart, None), [F::Crash]);
        assert_eq!(closed_by(F::ClockReset, None), [F::Clock]);
        // Aimed at a client: nothing heals a network fault, and a crash was an instant.
        assert_eq!(closed_by(F::Heal, Some(1)), []);
        assert_eq!(closed_by(F::Resume, Some(1)), [F::Pause]);
        assert_eq!(closed_by(F::Restart, Some(1)), []);
        assert_eq!(closed_by(F::ClockReset, Some(1)), [F::Clock]);
    }

    #[test]
    fn a_closer_naming_nothing_ends_client_windows_of_its_openers_only() {
        let events = vec![
            nem(0, 100, F::Pause, &[], Some(1)),
            nem(1, 110, F::Pause, &[], Some(2)),
            nem(2, 120, F::Heal, &[], None),
            nem(3, 130, F::Restart, &[], None),
            nem(4, 140, F::Resume, &[], None),
        ];
        let w = fault_windows(&events);
        let ends: Vec<Option<u64>> = w.iter().map(|w| w.end_index).collect();
        assert_eq!(ends, [Some(4), Some(4)]);
    }
}
