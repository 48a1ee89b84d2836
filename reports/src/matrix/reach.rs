//! Did a run's fault reach the size its cell needed? Read from the history: a fault that never
//! started, or a pause that ended before the holder's lease could run out, tested nothing, and
//! the cell must say "not tested", never "valid".

use lockpick_checker::history::{Event, EventKind, Process, F};

/// What a cell's runs must show for the fault to count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Needs {
    /// The nemesis verb the fault is recorded under; `None`: no fault (a baseline).
    pub verb: Option<F>,
    /// A client pause must outlast the lease its client held.
    pub outlast_lease: bool,
    /// The lease planned for the row, used when the history records none.
    pub planned_lease_ms: u64,
}

/// `Ok(what was reached)` or `Err(why the run tested nothing)`.
pub fn fault_reach(events: &[Event], needs: Needs) -> Result<String, String> {
    let Some(verb) = needs.verb else {
        return Ok("no fault".to_owned());
    };
    let started = events.iter().any(|e| {
        e.process == Process::Nemesis
            && e.f == verb
            && e.kind == EventKind::Info
            && e.error.is_none()
    });
    if !started {
        return Err(format!(
            "the {} fault never took effect before the run ended",
            verb.name()
        ));
    }
    if !needs.outlast_lease {
        return Ok(format!("the {} fault took effect", verb.name()));
    }
    let end_ns = events.last().map_or(0, |e| e.time_ns);
    let mut longest: Option<(u64, u64)> = None; // (pause ms, lease ms)
    for (i, e) in events.iter().enumerate() {
        let Some(client) = e.value.client else {
            continue;
        };
        if !(e.process == Process::Nemesis && e.f == F::Pause) {
            continue;
        }
        let resumed = events[i + 1..]
            .iter()
            .find(|r| {
                r.process == Process::Nemesis && r.f == F::Resume && r.value.client == Some(client)
            })
            .map_or(end_ns, |r| r.time_ns);
        let paused_ms = (resumed - e.time_ns) / 1_000_000;
        // The lease of the grant the paused client held: its last acquire before the pause.
        let lease = events[..i]
            .iter()
            .rev()
            .find(|a| {
                a.process == Process::Client(client) && a.f == F::Acquire && a.kind == EventKind::Ok
            })
            .and_then(|a| a.value.lease_ms)
            .unwrap_or(needs.planned_lease_ms);
        if paused_ms > lease {
            return Ok(format!(
                "a pause of {paused_ms} ms outlasted the {lease} ms lease"
            ));
        }
        if longest.is_none_or(|(p, _)| paused_ms > p) {
            longest = Some((paused_ms, lease));
        }
    }
    Err(match longest {
        Some((p, l)) => format!(
            "the longest client pause lasted {p} ms, not past the {l} ms lease: it could not run out"
        ),
        None => "no client was paused".to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockpick_checker::history::Value;

    fn ev(ms: u64, process: Process, kind: EventKind, f: F, value: Value) -> Event {
        Event {
            v: 1,
            index: 0,
            time_ns: ms * 1_000_000,
            process,
            kind,
            f,
            lock: None,
            value,
            error: None,
        }
    }

    fn grant(ms: u64, client: u64, lease: u64) -> Event {
        ev(
            ms,
            Process::Client(client),
            EventKind::Ok,
            F::Acquire,
            Value {
                lease_ms: Some(lease),
                ..Value::default()
            },
        )
    }

    fn pause(ms: u64, client: u64, f: F) -> Event {
        ev(
            ms,
            Process::Nemesis,
            EventKind::Info,
            f,
            Value {
                client: Some(client),
                ..Value::default()
            },
        )
    }

    const PAUSE: Needs = Needs {
        verb: Some(F::Pause),
        outlast_lease: true,
        planned_lease_ms: 1000,
    };

    #[test]
    fn a_pause_shorter_than_the_recorded_lease_tested_nothing() {
        // etcd granted 1000 ms; the pause was 900 ms: the redis-gc-pause-on-etcd mistake.
        let h = vec![
            grant(100, 2, 1000),
            pause(200, 2, F::Pause),
            pause(1100, 2, F::Resume),
            grant(1200, 1, 1000),
        ];
        let why = fault_reach(&h, PAUSE).unwrap_err();
        assert_eq!(why, "the longest client pause lasted 900 ms, not past the 1000 ms lease: it could not run out");
        // The same pause against a 300 ms lease did test it.
        let h = vec![
            grant(100, 2, 300),
            pause(200, 2, F::Pause),
            pause(1100, 2, F::Resume),
        ];
        assert_eq!(
            fault_reach(&h, PAUSE).unwrap(),
            "a pause of 900 ms outlasted the 300 ms lease"
        );
    }

    #[test]
    fn a_pause_cut_by_the_end_of_the_run_counts_to_the_end_only() {
        let h = vec![
            grant(100, 0, 1000),
            pause(200, 0, F::Pause),
            grant(900, 1, 1000),
        ];
        assert!(fault_reach(&h, PAUSE).is_err());
        let h = vec![
            grant(100, 0, 1000),
            pause(200, 0, F::Pause),
            grant(1300, 1, 1000),
        ];
        assert!(fault_reach(&h, PAUSE).is_ok());
    }

    #[test]
    fn a_fault_that_never_took_effect_tested_nothing() {
        let mut failed = pause(300, 0, F::Partition);
        failed.error = Some("proxy refused".into());
        let h = vec![
            grant(100, 0, 1000),
            ev(
                250,
                Process::Nemesis,
                EventKind::Invoke,
                F::Partition,
                Value::default(),
            ),
            failed,
        ];
        let needs = Needs {
            verb: Some(F::Partition),
            outlast_lease: false,
            planned_lease_ms: 1000,
        };
        assert_eq!(
            fault_reach(&h, needs).unwrap_err(),
            "the partition fault never took effect before the run ended"
        );
        let baseline = Needs {
            verb: None,
            ..needs
        };
        assert!(fault_reach(&h, baseline).is_ok());
        // A lock without a lease in its grants is held to the planned one.
        let h = vec![
            ev(
                100,
                Process::Client(0),
                EventKind::Ok,
                F::Acquire,
                Value::default(),
            ),
            pause(200, 0, F::Pause),
            pause(1500, 0, F::Resume),
        ];
        assert!(fault_reach(&h, PAUSE).is_ok());
    }
}
