//! `lockpick toxiproxy`: the embedded Toxiproxy-compatible API alone, until Ctrl-C.

use crate::outcome::{Exit, Outcome};
use crate::run_args::runtime;
use std::net::SocketAddr;

pub(super) fn toxiproxy(listen: SocketAddr) -> Outcome {
    runtime().block_on(lockpick_harness::proxy::serve_standalone(listen))?;
    Ok(Exit::Done)
}
