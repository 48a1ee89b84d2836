//! The `lockpick` command line: run scenarios, list them, re-check histories, render
//! reports, compare backends, serve the store and the embedded Toxiproxy.

mod cli;
mod commands;
mod compare;
mod exit_code;
mod gc;
mod incomplete;
mod matrix;
mod printable;
mod ranges;
mod reproduce;
mod serve;
mod signals;
mod suite;

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
    ExitCode::from(commands::dispatch(cli))
}
