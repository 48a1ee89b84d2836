//! The models a history can be checked against, by the names the CLI accepts.

use std::fmt;
use std::str::FromStr;

/// A sequential specification the checker knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModelName {
    /// One integer register with read and write, initially `nil`.
    Register,
    /// A register with read, write and compare-and-set.
    CasRegister,
    /// Independent string keys with get, put and append, initially empty; split per key.
    Kv,
    /// A lock with an owner: only the holder may release; split per lock.
    Mutex,
    /// A mutex whose every new holder's fencing token exceeds the previous holder's.
    FencedMutex,
    /// A mutex whose holder may lose it once its lease has run out.
    Lease,
}

impl ModelName {
    pub const ALL: [ModelName; 6] = [
        ModelName::Register,
        ModelName::CasRegister,
        ModelName::Kv,
        ModelName::Mutex,
        ModelName::FencedMutex,
        ModelName::Lease,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ModelName::Register => "register",
            ModelName::CasRegister => "cas-register",
            ModelName::Kv => "kv",
            ModelName::Mutex => "mutex",
            ModelName::FencedMutex => "fenced-mutex",
            ModelName::Lease => "lease",
        }
    }
}

impl fmt::Display for ModelName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A model name that is not one of [`ModelName::ALL`].
#[derive(Debug, thiserror::Error)]
#[error(
    "find model {0:?}: known models are register, cas-register, kv, mutex, fenced-mutex, lease"
)]
pub struct UnknownModel(pub String);

impl FromStr for ModelName {
    type Err = UnknownModel;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ModelName::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownModel(s.to_string()))
    }
}
