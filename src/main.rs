//! The `lockpick` command line: run scenarios, list them, re-check histories, render
//! reports, compare backends, serve the store and the embedded Toxiproxy.

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
    ExitCode::from(outcome::exit_code_of(commands::dispatch(cli)))
}
