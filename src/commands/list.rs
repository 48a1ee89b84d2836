//! `lockpick list`: the shipped scenarios with their locks and expected verdicts; one in a
//! group folder (scenarios/known-bugs/) as `group/name`.

use crate::outcome::{Exit, Failure, Outcome};
use crate::printable::printable;
use lockpick_harness::scenario::{list_scenarios, parse_scenario};

pub(super) fn list() -> Outcome {
    let entries = list_scenarios();
    if entries.is_empty() {
        return Err(Failure::usage("find scenarios: none in ./scenarios"));
    }
    let mut broken = 0;
    for entry in entries {
        let parsed = std::fs::read_to_string(&entry.path)
            .map_err(|e| e.to_string())
            .and_then(|t| parse_scenario(&entry.path, &t).map_err(|e| e.to_string()));
        match parsed {
            Ok(s) => outln!(
                "{:<28} {:<16} expected {:<8} {}",
                printable(&entry.qualified_name()),
                s.lock_name(),
                s.expected.map(|v| v.name()).unwrap_or("-"),
                s.description
            ),
            Err(e) => {
                outln!("{:<28} BROKEN: {e}", printable(&entry.qualified_name()));
                broken += 1;
            }
        }
    }
    if broken > 0 {
        return Err(Failure::Usage(format!(
            "read {broken} scenario file(s) (marked BROKEN above)"
        )));
    }
    Ok(Exit::Done)
}
