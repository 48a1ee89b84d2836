//! How a command ends: [`Exit`] when it did its work (the verdict or state it reports) and
//! [`Failure`] when it could not. Each knows its exit code; `main` is the only place that turns
//! either into one. The codes themselves are listed once, in [`crate::exit_code`].

use crate::exit_code;
pub use crate::failure::Failure;
use lockpick_checker::verdict::Verdict;

/// A command that did its work, and what it reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// It checked something: 0 valid, 1 invalid (safety), 2 unknown, 7 stuck (liveness),
    /// 8 not exposed.
    Verdict(Verdict),
    /// It did what it was asked (list, report, gc, serve, export): 0.
    Done,
    /// `suite`: some run did not reach its expected verdict: 5.
    SuiteMismatch,
    /// `check`/`report` on a run that did not end with a check: 6.
    IncompleteRun,
    /// Stopped by SIGINT or SIGTERM; what was recorded is kept: 130.
    Interrupted,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Verdict(Verdict::Valid) | Exit::Done => exit_code::VALID,
            Exit::Verdict(Verdict::Invalid) => exit_code::INVALID,
            Exit::Verdict(Verdict::Unknown) => exit_code::UNKNOWN,
            Exit::Verdict(Verdict::Stuck) => exit_code::STUCK,
            Exit::Verdict(Verdict::NotExposed) => exit_code::NOT_EXPOSED,
            Exit::SuiteMismatch => exit_code::SUITE_MISMATCH,
            Exit::IncompleteRun => exit_code::INCOMPLETE_RUN,
            Exit::Interrupted => exit_code::INTERRUPTED,
        }
    }
}

/// What every command returns.
pub type Outcome = Result<Exit, Failure>;

/// The process exit code of a command's outcome, printing a failure's message first (escaped:
/// it may quote a file, a history or a server's log).
pub fn exit_code_of(outcome: Outcome) -> u8 {
    match outcome {
        Ok(exit) => exit.code(),
        Err(failure) => {
            eprintln!(
                "lockpick: failed to {}",
                crate::printable::printable(&failure.to_string())
            );
            failure.code()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_ending_has_the_documented_code() {
        let codes = [
            (Exit::Verdict(Verdict::Valid).code(), 0),
            (Exit::Done.code(), 0),
            (Exit::Verdict(Verdict::Invalid).code(), 1),
            (Exit::Verdict(Verdict::Unknown).code(), 2),
            (Failure::usage("x").code(), 3),
            (Failure::harness("x").code(), 4),
            (Exit::SuiteMismatch.code(), 5),
            (Exit::IncompleteRun.code(), 6),
            (Exit::Verdict(Verdict::Stuck).code(), 7),
            (Exit::Verdict(Verdict::NotExposed).code(), 8),
            (Exit::Interrupted.code(), 130),
        ];
        for (got, want) in codes {
            assert_eq!(got, want);
        }
    }
}
