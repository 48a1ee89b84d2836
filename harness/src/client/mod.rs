//! Lock clients: the lock implementations under test (built in, or an adapter process that
//! speaks the client protocol) and the loop every client process runs.

mod adapter_error;
mod broken;
mod driver;
pub(crate) mod kind;
pub(crate) mod lock;
pub(crate) mod pause;
pub(crate) mod pause_gate;
pub mod process;
pub(crate) mod retry;
mod start_gate;
mod watchdog;

pub use broken::Broken;
pub use driver::{run_client, ClientCtx};
pub use kind::{BuildCtx, ClientKind, ClientOptions, Clients, NoOptions, Plain, Runs, SINGLE_NODE};
pub use lock::{Connecting, Grant, LockClient, LockSession, Outcome};
pub use pause::{InsidePause, Interrupt, PauseHook, PausePlan, PausePoints};
pub use start_gate::StartGate;
