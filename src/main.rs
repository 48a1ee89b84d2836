//! The `lockpick` command line: run scenarios, list them, re-check histories, render
//! reports, compare backends, serve the store and the embedded Toxiproxy.

#[macro_use]
mod stdout;

mod choices;
mod cli;
mod commands;
mod exit_code;
mod failure;
mod outcome;
mod printable;
mod ranges;
mod reproduce;
mod run_args;
mod signals;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are not errors; everything else is bad usage.
            let code = if e.use_stderr() {
                exit_code::USAGE
            } else {
                exit_code::VALID
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let code = outcome::exit_code_of(commands::dispatch(cli));
    ExitCode::from(stdout_closed(code, stdout::closed()))
}

/// The exit code once the command is done: [`exit_code::STDOUT_CLOSED`] when its output could
/// not all be written, unless the command failed (3, 4) or was interrupted (130), which say more.
fn stdout_closed(code: u8, closed: bool) -> u8 {
    match code {
        exit_code::USAGE | exit_code::HARNESS | exit_code::INTERRUPTED => code,
        _ if closed => exit_code::STDOUT_CLOSED,
        _ => code,
    }
}
