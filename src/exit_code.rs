//! Every exit code `lockpick` uses, in one place. README.md's table mirrors this file.

/// The history satisfied every checked property.
pub const VALID: u8 = 0;
/// A property was violated; the results list the evidence.
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
/// Stopped by SIGINT or SIGTERM; what was recorded is kept and checked.
pub const INTERRUPTED: u8 = 130;
