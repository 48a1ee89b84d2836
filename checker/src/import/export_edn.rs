//! Writing a lockpick history as Jepsen EDN op maps, one per line, so Knossos or Elle can
//! check the same run.

use crate::exposure::Exposures;
use crate::history::{Event, EventKind, Process, Value, F};
use std::fmt::Write as _;

fn edn_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The `:value` Jepsen expects for each verb: an integer for reads and writes, `[from to]` for
/// cas, the fencing token for lock operations, the node names for faults.
fn edn_value(f: crate::history::F, v: &Value) -> String {
    use crate::history::F;
    match f {
        F::Cas => match (v.from, v.to) {
            (Some(a), Some(b)) => format!("[{a} {b}]"),
            _ => "nil".into(),
        },
        F::Read | F::Write => v.int.map_or("nil".into(), |i| i.to_string()),
        F::Acquire | F::Release | F::Renew => v.token.map_or("nil".into(), |t| t.to_string()),
        _ if !v.nodes.is_empty() => {
            let nodes: Vec<String> = v.nodes.iter().map(|n| edn_str(n)).collect();
            format!("[{}]", nodes.join(" "))
        }
        _ => "nil".into(),
    }
}

/// One EDN map per event, each ending in a newline, in history order.
pub fn to_jepsen_edn(events: &[Event]) -> String {
    to_jepsen_edn_exposed(events, None)
}

/// [`to_jepsen_edn`], with each fault instance's exposure (docs/exposure.md) on the nemesis op
/// that started it: `:exposure {:rule "pause-outlasts-lease", :exposed true, :why "…",
/// :window [from-ns to-ns]}`.
pub fn to_jepsen_edn_exposed(events: &[Event], exposures: Option<&Exposures>) -> String {
    let mut out = String::new();
    // A notice is lockpick's own (what a library told its holder): Jepsen would read a
    // client's `:info` as the process crashing.
    for e in events.iter().filter(|e| e.f != F::Notice) {
        let process = match e.process {
            Process::Client(p) => p.to_string(),
            Process::Nemesis => ":nemesis".to_string(),
        };
        let kind = match e.kind {
            EventKind::Invoke => "invoke",
            EventKind::Ok => "ok",
            EventKind::Fail => "fail",
            EventKind::Info => "info",
        };
        let _ = write!(
            out,
            "{{:index {}, :time {}, :process {process}, :type :{kind}, :f :{}",
            e.index, e.time_ns, e.f
        );
        if let Some(lock) = &e.lock {
            let _ = write!(out, ", :key {}", edn_str(lock));
        }
        let _ = write!(out, ", :value {}", edn_value(e.f, &e.value));
        if let Some(ms) = e.value.lease_ms {
            let _ = write!(out, ", :lease-ms {ms}");
        }
        if let Some(err) = &e.error {
            let _ = write!(out, ", :error {}", edn_str(err));
        }
        let started = (exposures.into_iter())
            .flat_map(|x| &x.faults)
            .find(|x| e.process == Process::Nemesis && x.fault == e.f && x.start_ns == e.time_ns);
        if let Some(x) = started.filter(|_| e.kind == EventKind::Info && e.error.is_none()) {
            let _ = write!(
                out,
                ", :exposure {{:rule {}, :exposed {}, :why {}",
                edn_str(x.rule.name()),
                x.exposed(),
                edn_str(&x.why)
            );
            if let Some(w) = &x.window {
                let _ = write!(out, ", :window [{} {}]", w.from_ns, w.to_ns);
            }
            out.push('}');
        }
        out.push_str("}\n");
    }
    out
}
