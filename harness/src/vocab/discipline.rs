//! How a client uses the lock it was granted: at once (trusting, as many of a library's users
//! do), only after checking that the lease it was told of has not run out (careful), or as the
//! library's documentation tells its users to (documented): every loss or suspension notice
//! honoured before the next write, and the library's fencing token checked by the resource.

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
    /// As the library's documentation says: before writing, honours what the library told
    /// the holder since its grant (a `lost` notice ends the holding; a `suspended` one stops
    /// writes until a `reconnected` says the session survived), skipping the write and
    /// releasing when it must. Where the library gives a fencing token, the resource checks
    /// it (a scenario says `[resource] mode = "fenced"`; loading refuses it otherwise).
    Documented,
}

impl Discipline {
    pub const ALL: [Discipline; 3] = [
        Discipline::Trusting,
        Discipline::Careful,
        Discipline::Documented,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Discipline::Trusting => "trusting",
            Discipline::Careful => "careful",
            Discipline::Documented => "documented",
        }
    }
}
