//! What the server view needs of the history, gathered as the lock checker streams it: each
//! acquire's and renewal's window (invoke to completion) and the holder value it named, the
//! believed holdings as the checker closes them (the same holdings every other check uses),
//! and each `notice`. Memory: one entry per acquire, renewal, holding and notice of the
//! history, kept only when a server record was given.

use crate::history::{EventKind, F};
use crate::lock::stream::holdings::{EndReason, Holding};
use std::collections::HashMap;

/// An acquire or a renewal, from its invocation to its completion (`None`: never came, or
/// came as `info`, its outcome unknown).
#[derive(Debug, Clone)]
pub(crate) struct Window {
    pub process: u64,
    pub lock: u32,
    pub f: F,
    pub invoke_ns: u64,
    pub invoke_index: u64,
    pub done: Option<(u64, u64)>,
}

/// A believed holding, as [`crate::lock::stream::holdings`] closed it.
#[derive(Debug, Clone)]
pub(crate) struct Held {
    pub process: u64,
    pub lock: u32,
    pub token: Option<u64>,
    pub acquire_index: u64,
    pub asked_ns: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    pub end_index: u64,
    pub end: EndReason,
    /// Its writes' invocations: (time, index).
    pub writes: Vec<(u64, u64)>,
}

/// A `notice`: what the library told a process, and when.
#[derive(Debug, Clone)]
pub(crate) struct Told {
    pub process: u64,
    pub ns: u64,
    pub event: String,
}

impl Told {
    /// Whether it told the holder it had, or may have, lost the lock.
    pub fn warns(&self) -> bool {
        matches!(self.event.as_str(), "lost" | "suspended")
    }
}

#[derive(Debug, Default)]
pub(crate) struct ServerInputs {
    pub windows: Vec<Window>,
    /// Per lane (process, is a renew), its window in flight.
    open: HashMap<(u64, bool), usize>,
    /// Per (lock, holder or owner value the history names on an acquire), the processes that
    /// named it.
    pub holders: HashMap<(u32, String), Vec<u64>>,
    /// Per granted acquire (its completion's index, as a holding's `acquire_index`), the
    /// holder and owner values it named; an acquire in flight's under its invocation's index.
    pub named_by: HashMap<u64, Vec<String>>,
    pub held: Vec<Held>,
    pub told: Vec<Told>,
}

impl ServerInputs {
    /// `p` invoked `f` on `lock` at `at`, naming `holder`.
    pub fn invoked(&mut self, p: u64, f: F, lock: u32, at: (u64, u64), holder: Option<&str>) {
        if !matches!(f, F::Acquire | F::Renew) {
            return;
        }
        self.open.insert((p, f == F::Renew), self.windows.len());
        self.windows.push(Window {
            process: p,
            lock,
            f,
            invoke_ns: at.0,
            invoke_index: at.1,
            done: None,
        });
        if f == F::Acquire {
            self.holder(p, lock, holder);
            self.named(at.1, holder);
        }
    }

    /// The operation in flight on `p`'s lane completed at `at` with `kind`, on `lock` (the
    /// lock its completion names when its invocation named none), naming `names`: its holder
    /// value and the owner value an adapter's library gave (what the server stores).
    pub fn completed(
        &mut self,
        p: u64,
        renew: bool,
        lock: u32,
        kind: EventKind,
        at: (u64, u64),
        names: [Option<&str>; 2],
    ) {
        let Some(i) = self.open.remove(&(p, renew)) else {
            return;
        };
        let w = &mut self.windows[i];
        // An outcome unknown (`info`) leaves its request free to reach the server later:
        // the window stays open to the end, as one that never completed.
        w.done = (kind != EventKind::Info).then_some(at);
        w.lock = lock;
        let invoked = w.invoke_index;
        if w.f == F::Acquire {
            let asked = self.named_by.remove(&invoked).unwrap_or_default();
            if kind == EventKind::Ok {
                for name in asked
                    .iter()
                    .map(String::as_str)
                    .chain(names.into_iter().flatten())
                {
                    self.holder(p, lock, Some(name));
                    self.named(at.1, Some(name));
                }
            }
        }
    }

    fn holder(&mut self, p: u64, lock: u32, holder: Option<&str>) {
        if let Some(h) = holder {
            let ps = self.holders.entry((lock, h.to_owned())).or_default();
            if !ps.contains(&p) {
                ps.push(p);
            }
        }
    }

    fn named(&mut self, acquire_index: u64, value: Option<&str>) {
        if let Some(v) = value {
            let values = self.named_by.entry(acquire_index).or_default();
            if !values.iter().any(|x| x == v) {
                values.push(v.to_owned());
            }
        }
    }

    /// Whether a record of value `value` of `lock` can be holding `h`'s: not when the history
    /// names it the value of another of its process's acquires (a late reading of the
    /// holding before, say), only when it names it this one's or names it not at all.
    pub fn may_be_of(&self, h: &Held, value: &str) -> bool {
        let Some(mine) = self.named_by.get(&h.acquire_index) else {
            return true;
        };
        mine.iter().any(|v| v == value) || !self.holders.contains_key(&(h.lock, value.to_owned()))
    }

    /// The checker closed holding `h`.
    pub fn holding(&mut self, h: &Holding) {
        self.held.push(Held {
            process: h.process,
            lock: h.lock,
            token: h.token,
            acquire_index: h.acquire_index,
            asked_ns: h.asked_ns,
            start_ns: h.start_ns,
            end_ns: h.end_ns,
            end_index: h.end_index,
            end: h.end,
            writes: h
                .writes
                .iter()
                .map(|w| (w.invoke_ns, w.invoke_index))
                .collect(),
        });
    }

    /// The library told `p` `event` at `at` (time, index).
    pub fn notice(&mut self, p: u64, event: &str, at: (u64, u64)) {
        self.told.push(Told {
            process: p,
            ns: at.0,
            event: event.to_owned(),
        });
    }
}
