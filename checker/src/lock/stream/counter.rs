//! Lost updates on the `counter` workload: the final read against the number of acknowledged
//! increments, with the writes that wrote the same value (both read the same n) as proof.
//! Memory: bounded. A value written once is kept (with its write) while it is within
//! [`WINDOW`] of the highest value written, since a second write of it is a lost update; older
//! ones are let go and only counted, so an hour-long soak does not keep every increment.

use super::stale::Write;
use std::collections::BTreeMap;

/// How many values below the highest written a value written once is kept: a second write of
/// a value comes from a process that read the value before it, so it lands within a few
/// operations of the first unless that process stalled while the counter went on past it.
/// Past 65,536 increments (minutes of a busy counter, far longer than any pause or operation
/// timeout lockpick sets), its first write is let go: about 6 MiB at most.
pub(crate) const WINDOW: i64 = 1 << 16;

/// A completed read marked final.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FinalRead {
    pub invoke_index: u64,
    pub done_index: u64,
    pub done_ns: u64,
    pub value: i64,
}

#[derive(Debug, Default)]
pub(crate) struct Counter {
    /// Writes that carry an `int`.
    pub writes: u64,
    /// Of those, acknowledged (`ok`).
    pub acked: u64,
    /// Of those, definitely not done (`fail`).
    pub failed: u64,
    /// Values acknowledged once so far, within [`WINDOW`] of the highest, with their write.
    once: BTreeMap<i64, Write>,
    /// Values acknowledged more than once, with every such write: the lost updates' proof.
    pub repeated: BTreeMap<i64, Vec<Write>>,
    /// Values below this were let go from `once`.
    let_go_below: i64,
    /// Acknowledged writes of a value below `let_go_below` and not in `repeated`: whether
    /// another write of it came first is no longer known.
    pub unplaced: u64,
    /// The final read invoked last.
    pub final_read: Option<FinalRead>,
}

impl Counter {
    /// A write of `value` completed `ok`.
    pub fn acked(&mut self, value: i64, w: Write) {
        self.acked += 1;
        if let Some(group) = self.repeated.get_mut(&value) {
            group.push(w);
        } else if let Some(first) = self.once.remove(&value) {
            self.repeated.insert(value, vec![first, w]);
        } else if value < self.let_go_below {
            self.unplaced += 1;
        } else {
            self.once.insert(value, w);
            self.let_go(value);
        }
    }

    /// Lets go of the values written once that fell [`WINDOW`] below `highest`, a quarter of
    /// the window at a time (so the cost is spread over the writes).
    fn let_go(&mut self, highest: i64) {
        let floor = highest.saturating_sub(WINDOW);
        if floor >= self.let_go_below.saturating_add(WINDOW / 4) {
            self.once = self.once.split_off(&floor);
            self.let_go_below = floor;
        }
    }

    /// A final read completed.
    pub fn final_read(&mut self, r: FinalRead) {
        if self
            .final_read
            .is_none_or(|f| r.invoke_index > f.invoke_index)
        {
            self.final_read = Some(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(process: u64, index: u64) -> Write {
        Write {
            process,
            token: 0,
            invoke_ns: index,
            invoke_index: index,
            done_ns: index + 1,
            done_index: index + 1,
        }
    }

    #[test]
    fn a_value_written_twice_is_kept_with_both_writes_and_old_single_values_are_let_go() {
        let mut c = Counter::default();
        c.acked(1, w(0, 0));
        c.acked(2, w(1, 2));
        c.acked(2, w(2, 4));
        c.acked(2, w(3, 6));
        assert_eq!(c.repeated[&2].len(), 3);
        assert_eq!(c.once.len(), 1);
        // A long counter: what is kept stays within the window of the highest value.
        for v in 3..=(4 * WINDOW) {
            c.acked(v, w(0, v as u64 * 2));
        }
        assert!(
            c.once.len() as i64 <= WINDOW + WINDOW / 4,
            "{}",
            c.once.len()
        );
        assert_eq!(c.repeated.len(), 1, "the proof is kept whatever its age");
        // A late second write of a value let go: counted, not told apart.
        c.acked(5, w(3, 1));
        assert_eq!(c.unplaced, 1);
        // A late second write inside the window is still a repetition.
        let recent = 4 * WINDOW - 10;
        c.acked(recent, w(3, 1));
        assert_eq!(c.repeated[&recent].len(), 2);
        assert_eq!(c.acked, 4 * WINDOW as u64 + 4);
    }
}
