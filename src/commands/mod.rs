//! One file per subcommand; this one only dispatches. Every command returns an
//! [`Outcome`](crate::outcome::Outcome), which alone decides the exit code.

mod bench;
mod check;
mod compare;
mod explore;
mod export;
mod gc;
mod incomplete;
mod list;
mod matrix;
mod merge;
mod report;
mod scenario;
mod serve;
pub(crate) mod suite;
mod toxiproxy;

use crate::cli::{Cli, Command};
use crate::outcome::Outcome;

/// Runs the command.
pub fn dispatch(cli: Cli) -> Outcome {
    match cli.command {
        Command::Scenario(args) => scenario::scenario(args),
        Command::List => list::list(),
        Command::Suite(args) => suite::suite(args),
        Command::Check(args) => check::check(args),
        Command::Export(args) => export::export(&args.history),
        Command::Report { run_dir, markdown } => report::report(&run_dir, markdown.as_deref()),
        Command::Compare(args) => compare::compare(args),
        Command::Matrix(args) => matrix::matrix(args),
        Command::Bench(args) => bench::bench(args),
        Command::Explore(args) => explore::explore(args),
        Command::Merge(args) => merge::merge(args),
        Command::Serve(args) => serve::serve(args),
        Command::Gc { store } => gc::gc(&store),
        Command::Toxiproxy { listen } => toxiproxy::toxiproxy(listen),
    }
}
