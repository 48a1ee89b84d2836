//! The first [`MAX_LISTED`](crate::lock::MAX_LISTED) findings of a kind by their place in the
//! report, kept while the history streams by, and a count of the rest.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<K, V>(K, V);

impl<K: Ord, V> PartialEq for Entry<K, V> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
impl<K: Ord, V> Eq for Entry<K, V> {}
impl<K: Ord, V> PartialOrd for Entry<K, V> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<K: Ord, V> Ord for Entry<K, V> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.cmp(&other.0)
    }
}

/// The `cap` entries with the smallest keys, and how many others were offered.
pub(crate) struct Top<K, V> {
    cap: usize,
    heap: BinaryHeap<Entry<K, V>>,
    pub omitted: u64,
}

impl<K: Ord, V> Top<K, V> {
    pub fn new(cap: usize) -> Self {
        Top {
            cap,
            heap: BinaryHeap::new(),
            omitted: 0,
        }
    }

    pub fn push(&mut self, key: K, value: V) {
        if self.heap.len() < self.cap {
            self.heap.push(Entry(key, value));
            return;
        }
        self.omitted += 1;
        if self.heap.peek().is_some_and(|top| key < top.0) {
            self.heap.pop();
            self.heap.push(Entry(key, value));
        }
    }

    /// The kept entries, smallest key first.
    pub fn into_sorted(self) -> Vec<V> {
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|Entry(_, v)| v)
            .collect()
    }
}
