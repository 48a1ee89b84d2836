//! PostgreSQL: one server, or a primary with a streaming replica (asynchronous or
//! synchronous) that a failover promotes, and the locks lockpick builds on it (a lease row,
//! an advisory lock, SELECT … FOR UPDATE).

mod advisory;
mod for_update;
mod lease_row;
mod node;
mod process;
mod replica_server;
mod reset;
mod server;
mod watch;

pub use advisory::{PgAdvisoryLock, PgAdvisorySession};
pub use for_update::{PgForUpdateLock, PgForUpdateSession};
pub use lease_row::{PgLeaseRowLock, PgLeaseRowSession};
pub use node::{Pg, PgNode, PgSettings};
pub use process::replicas_streaming;
pub use process::{pg_ready, PgOptions, DATABASE as PG_DATABASE, USER as PG_USER};

/// The PostgreSQL backend's entry in the registry.
pub static BACKEND: super::Backend = super::Backend {
    servers: &[
        &server::Postgres,
        &replica_server::ASYNC,
        &replica_server::SYNC,
    ],
    clients: &[&lease_row::KIND, &advisory::KIND, &for_update::KIND],
    packages: &[process::PACKAGE],
};
