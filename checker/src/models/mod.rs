//! Sequential specifications the linearizability checker can check histories against.

mod error;
pub mod kv;
pub mod lease;
pub mod mutex;
mod name;
pub mod register;
mod split;
mod vocabulary;

pub use error::ModelError;
pub use name::{ModelName, UnknownModel};
pub use vocabulary::{coverage, Coverage};
