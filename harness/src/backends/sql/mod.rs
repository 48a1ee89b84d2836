//! What the SQL backends share: a connection that speaks either dialect, the lock recipes
//! written once over it, the client kind that builds them, and the polling watcher of the
//! server's own record.

pub(crate) mod kind;
pub(crate) mod limits;
pub(crate) mod lock;
pub(crate) mod node;
pub(crate) mod watch;

pub use lock::{SqlLock, SqlRecipe};
pub use node::{Dialect, SqlNode};
