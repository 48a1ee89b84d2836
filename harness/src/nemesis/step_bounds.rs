//! Every fault parses, labels itself, and its schedule stays within the bound of steps it
//! declares, each fault it opens closed once.

use super::build_schedule;
use crate::fault::tests::{sample, scenario};
use crate::fault::{max_steps, FAULTS};

#[test]
fn every_fault_parses_labels_itself_and_stays_within_its_step_bound() {
    for f in FAULTS {
        let (server, body) = sample(f.name());
        let s = scenario(server, f.name(), body).unwrap_or_else(|e| panic!("{e}"));
        let fault = &s.nemesis.faults[0];
        assert_eq!(fault.spec.name(), f.name());
        assert!(
            fault.spec.label().starts_with(f.name()),
            "{}",
            fault.spec.label()
        );
        assert_eq!(fault.spec.moves_clocks(), s.has_clock_faults());
        for seed in 0..5 {
            let steps = build_schedule(&s, seed, 5000, 3);
            assert!(!steps.is_empty(), "{}: no steps", f.name());
            let bound = max_steps(fault, 5000);
            assert!(
                steps.len() as u64 <= bound,
                "{}: {} steps, bound {bound}",
                f.name(),
                steps.len()
            );
            let mut open = std::collections::BTreeSet::new();
            for step in &steps {
                assert!(step.action_json().is_object());
                if let Some(id) = step.action.opens() {
                    assert!(open.insert(id), "{}: {id} opened twice", f.name());
                }
                if let Some(id) = step.action.closes() {
                    assert!(open.remove(&id), "{}: {id} closed unopened", f.name());
                }
            }
            assert!(open.is_empty(), "{}: never closed: {open:?}", f.name());
        }
    }
}
