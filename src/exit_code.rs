//! Every exit code `lockpick` uses, in one place. docs/usage.md's table mirrors this file.

/// The history satisfied every checked property.
pub const VALID: u8 = 0;
/// A safety property was violated (double holder, stale write, lost update, a history no
/// lock could produce); the results list the evidence. Never a deadlock or a lockout: that is
/// [`STUCK`].
pub const INVALID: u8 = 1;
/// The check could not decide (nothing was tested, or a budget ran out).
pub const UNKNOWN: u8 = 2;
/// Bad input: the command line (including an option or a lock the scenario cannot take, or a
/// listen address off loopback), a scenario or matrix file, or a history or run folder that
/// cannot be read. Which failures these are is decided in [`crate::failure::Failure::code`].
pub const USAGE: u8 = 3;
/// The harness failed: a backend did not start, an `--external` node did not answer, a binary
/// is missing, the proxy broke, the store (or a page in it) could not be written.
pub const HARNESS: u8 = 4;
/// `lockpick suite`: some scenario did not reach its expected verdict.
pub const SUITE_MISMATCH: u8 = 5;
/// `check`/`report` on a run folder whose run did not end with a check: it was killed (or
/// is still running); its `run.json` tells the phase it reached. A violation found in what it
/// recorded is still reported as [`INVALID`].
pub const INCOMPLETE_RUN: u8 = 6;
/// Liveness: no safety violation, but clients kept asking for a free lock and nobody got it
/// (a deadlock), or asked while one process alone was granted or held it (a lockout), for
/// longer than the scenario's `deadlock_ms`. Printed `STUCK`.
pub const STUCK: u8 = 7;
/// No violation, but no fault instance of the run opened a window in which one was possible
/// (docs/exposure.md): it never took effect, or every client pause ended before the holder's
/// lease could run out, or a crashed node came back after the hold. Printed
/// `NOT EXPOSED: <why>`; never reported as valid.
pub const NOT_EXPOSED: u8 = 8;
/// Standard output was closed before everything was printed (`lockpick list | head -1`): the
/// command finished its work (a run is stored whole) and stopped printing. 141 is what a
/// shell reports for a program ended by SIGPIPE, so a pipeline reads it the usual way. A
/// failure (3, 4) or an interrupt (130) keeps its own code.
pub const STDOUT_CLOSED: u8 = 141;
/// Stopped by SIGINT or SIGTERM; what was recorded is kept and checked.
pub const INTERRUPTED: u8 = 130;
