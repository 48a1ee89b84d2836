//! How many schedule steps a scenario's faults can take, bounded before anything is drawn, so
//! that a file cannot ask for a schedule too large to hold.

use super::Fault;
use crate::vocab::rules::MAX_SCHEDULE_STEPS;

/// An upper bound on the steps `fault` adds to a schedule of `duration_ms`, whatever the seed
/// draws: starts before the end, times the steps of one start. Saturates instead of
/// overflowing.
pub fn max_steps(fault: &Fault, duration_ms: u64) -> u64 {
    if fault.at_ms.min >= duration_ms {
        return 0;
    }
    let starts = match (fault.every_ms, fault.count) {
        (None, _) => 1,
        (Some(every), count) => {
            let fit = (duration_ms - fault.at_ms.min - 1) / every.min.max(1) + 1;
            count.map_or(fit, |c| fit.min(u64::from(c)))
        }
    };
    let per_start = fault.spec.steps_per_start(duration_ms);
    starts.saturating_mul(per_start)
}

/// Checks that the schedule of `faults` (a scenario's, in file order) over `duration_ms` stays
/// within [`MAX_SCHEDULE_STEPS`]. `Err` names the fault (its index) that takes the most steps, the
/// field to change, and why.
pub fn check_schedule_size(
    faults: &[Fault],
    duration_ms: u64,
) -> Result<(), (usize, &'static str, String)> {
    let per_fault: Vec<u64> = faults.iter().map(|f| max_steps(f, duration_ms)).collect();
    let total = per_fault.iter().fold(0u64, |a, &b| a.saturating_add(b));
    if total <= MAX_SCHEDULE_STEPS {
        return Ok(());
    }
    let (index, steps) = per_fault
        .iter()
        .copied()
        .enumerate()
        .max_by_key(|&(_, n)| n)
        .expect("a schedule over the limit has a fault");
    let fault = &faults[index];
    let field = match fault.every_ms {
        Some(_) => "nemesis.every_ms",
        None => fault.spec.size_field(),
    };
    Err((
        index,
        field,
        format!(
            "fault {} (line {}) can take {steps} schedule steps over a {duration_ms} ms run, {total} in all; allowed: at most {MAX_SCHEDULE_STEPS}: make it recur less often, set count, or shorten the run",
            fault.spec.name(),
            fault.line
        ),
    ))
}
