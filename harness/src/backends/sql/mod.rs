//! What the SQL backends share: a connection that speaks either dialect, the lock recipes
//! written once over it, and the client kind that builds them.

pub(crate) mod kind;
pub(crate) mod limits;
pub(crate) mod lock;
pub(crate) mod node;

pub use lock::{SqlLock, SqlRecipe};
pub use node::{Dialect, SqlNode};
