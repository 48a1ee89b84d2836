//! MariaDB (Debian's MySQL): one server, and the locks lockpick builds on it (a lease row,
//! GET_LOCK, SELECT … FOR UPDATE).

mod for_update;
mod get_lock;
mod lease_row;
mod node;
mod process;
mod reset;
mod server;
mod watch;

pub use for_update::{MyForUpdateLock, MyForUpdateSession};
pub use get_lock::{MyGetLock, MyGetLockSession};
pub use lease_row::{MyLeaseRowLock, MyLeaseRowSession};
pub use node::{My, MyNode, MySettings};
pub use process::{mariadb_ready, MariaDbOptions};

/// The MariaDB backend's entry in the registry.
pub static BACKEND: super::Backend = super::Backend {
    servers: &[&server::MariaDb],
    clients: &[&lease_row::KIND, &get_lock::KIND, &for_update::KIND],
    packages: &[process::PACKAGE],
};
