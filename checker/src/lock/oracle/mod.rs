//! The in-memory lock checker that [`super::stream`] replaced, kept as a test oracle: the
//! property tests check that both give the same report on generated histories. It predates
//! the lease cap on a holding still open at the end (the generated histories carry no leases).

mod check;
mod culprit;
mod deadlock;
mod double_holder;
mod holding;
mod lockout;
mod lost_update;
mod ops;
mod stale_write;

pub(crate) use check::check_locks_in_memory;
#[cfg(test)]
mod compare;
#[cfg(test)]
pub(crate) use compare::{generate as generated, hog as hogged};
