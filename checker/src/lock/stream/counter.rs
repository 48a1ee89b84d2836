//! Lost updates on the `counter` workload: the final read against the number of acknowledged
//! increments, with the writes that wrote the same value (both read the same n) as proof.
//! Memory: one entry per value written (a counter history's writes), not per event.

use super::stale::Write;
use std::collections::HashMap;

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
    /// Acknowledged writes by the value they wrote.
    pub by_value: HashMap<i64, Vec<Write>>,
    /// The final read invoked last.
    pub final_read: Option<FinalRead>,
}

impl Counter {
    /// A write of `value` completed `ok`.
    pub fn acked(&mut self, value: i64, w: Write) {
        self.acked += 1;
        self.by_value.entry(value).or_default().push(w);
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
