//! What the lock checker is asked to verify: the safety property and the deadlock threshold
//! (which is the lockout threshold too).

use serde::{Deserialize, Serialize};

/// The safety property a lock claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Property {
    /// At most one client believes it holds the lock at any time.
    Exclusive,
    /// Two clients may believe they hold the lock (lease expiry), but fencing tokens keep the
    /// protected resource safe: no stale write is ever accepted.
    Fenced,
}

impl Property {
    /// Every property, in the order `--help` lists them.
    pub const ALL: [Property; 2] = [Property::Exclusive, Property::Fenced];

    /// The name as written in scenarios and reports.
    pub fn name(self) -> &'static str {
        match self {
            Property::Exclusive => "exclusive",
            Property::Fenced => "fenced",
        }
    }
}

/// Parameters of [`check_locks`](super::check_locks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockCheckParams {
    pub property: Property,
    /// Minimum length, in milliseconds, of a fault-free stretch in which clients wait for a
    /// free lock and nobody gets it, for it to count as a deadlock; and of one in which they
    /// wait while one process alone is granted or holds it, for it to count as a lockout. One
    /// threshold serves both: scenarios set it above the longest hold the workload asks for,
    /// so neither an ordinary hold nor a wait for one reaches it, and the others are as stuck
    /// either way. 0 disables both checks.
    pub deadlock_ms: u64,
}
