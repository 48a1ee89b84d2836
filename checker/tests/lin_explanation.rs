//! The linearizability explanation of a lock history with a known first violating operation:
//! it names that operation (not a later one, nor a victim's release) and the operations that
//! force it.

use lockpick_checker::history::{Event, EventKind, Process, Value, F, FORMAT_VERSION};
use lockpick_checker::lin_search::Budget;
use lockpick_checker::lock::{check_lock_linearizability, Property};

/// (process, f, invoked ms, answered ms, lease asked for) on lock "l", all answered `ok`.
type Step = (u64, F, u64, u64, Option<u64>);

fn events(steps: &[Step]) -> Vec<Event> {
    let mut raw: Vec<(u64, bool, Step)> = Vec::new();
    for &s in steps {
        raw.push((s.2, false, s));
        raw.push((s.3, true, s));
    }
    raw.sort_by_key(|&(t, done, s)| (t, done, s.0));
    raw.iter()
        .enumerate()
        .map(|(i, &(t, done, (p, f, _, _, lease_ms)))| Event {
            v: FORMAT_VERSION,
            index: i as u64,
            time_ns: t * 1_000_000,
            process: Process::Client(p),
            kind: if done {
                EventKind::Ok
            } else {
                EventKind::Invoke
            },
            f,
            lock: Some("l".into()),
            value: Value {
                lease_ms: if done { None } else { lease_ms },
                ..Value::default()
            },
            error: None,
        })
        .collect()
}

/// The lines under the explanation's header that starts with `header`, up to the next header.
fn under<'e>(explanation: &'e str, header: &str) -> Vec<&'e str> {
    explanation
        .lines()
        .skip_while(|l| !l.trim_start().starts_with(header))
        .skip(1)
        .take_while(|l| l.starts_with("    "))
        .collect()
}

#[test]
fn the_explanation_names_the_first_violating_operation_and_what_forces_it() {
    let l = Some(800);
    // Process 2's release is answered late; process 0 is granted the lock at 1.21 s, and
    // process 1 at 1.3 s while process 0's lease (from 1.15 s at the earliest) still runs:
    // the first operation after which no linearization exists is process 1's acquire, and
    // process 0's acquire forces it. Process 3's grant at 1.51 s, while process 1 holds, is
    // a later violation; process 0's release (a victim's) is not the first.
    let steps: [Step; 9] = [
        (2, F::Acquire, 0, 10, l),
        (2, F::Release, 400, 1260, None),
        (0, F::Acquire, 1150, 1210, l),
        (1, F::Acquire, 1250, 1300, l),
        (0, F::Release, 1400, 1410, None),
        (3, F::Acquire, 1500, 1510, l),
        (1, F::Release, 1600, 1610, None),
        (3, F::Release, 1700, 1710, None),
        (2, F::Acquire, 1800, 1810, l),
    ];
    let s = check_lock_linearizability(&events(&steps), Property::Exclusive, &Budget::default())
        .expect("a lease model fits");
    let text = s.explanation.expect("invalid, explained");
    let first = under(
        &text,
        "the first operation after which no linearization exists",
    );
    assert_eq!(first.len(), 1, "{text}");
    assert!(first[0].contains("process 1 acquire"), "{text}");
    let forced = under(&text, "forced by:");
    assert!(
        forced.iter().any(|l| l.contains("process 0 acquire")),
        "{text}"
    );
    assert!(
        forced
            .iter()
            .all(|l| !l.contains("process 3") && !l.contains("release")),
        "{text}"
    );
    assert_eq!(s.violated_at_ns, Some(1300 * 1_000_000));
}
