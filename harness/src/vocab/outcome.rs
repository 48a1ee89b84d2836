//! Jepsen's three-valued outcome of one operation: it happened, it did not, or nobody knows.

/// Outcome of one operation against a backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome<T> {
    /// It happened.
    Ok(T),
    /// It definitely did not happen; the reason in a few words.
    Fail(String),
    /// Unknown (timeout, broken connection); the reason in a few words.
    Info(String),
}
