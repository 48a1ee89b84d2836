//! How a client uses the lock it was granted: at once (trusting, as a library's user does),
//! or only after checking that the lease it was told of has not run out (careful).

use serde::Serialize;

/// A client's discipline, `[client] discipline`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Discipline {
    /// Writes as soon as the lock says it is held: how a library is used. A lock that grants
    /// an already expired lease shows it as a stale write.
    Trusting,
    /// Before writing, checks that the lease the lock reported has not run out since the
    /// acquire was sent, and skips the write (releasing at once) if it has.
    Careful,
}

impl Discipline {
    pub const ALL: [Discipline; 2] = [Discipline::Trusting, Discipline::Careful];

    pub fn name(self) -> &'static str {
        match self {
            Discipline::Trusting => "trusting",
            Discipline::Careful => "careful",
        }
    }
}
