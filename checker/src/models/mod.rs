//! Sequential specifications the linearizability checker can check histories against, in a
//! registry like the harness's server, client and fault kinds: adding a model is one module
//! here implementing [`Model`] and one line in [`MODELS`]. `check --model`, its `--help` and
//! its error for an unknown name list [`MODELS`]; nothing matches on models.

mod error;
pub mod kv;
mod kv_strings;
pub mod lease;
mod model;
pub mod mutex;
pub mod register;
mod split;
mod vocabulary;

pub use error::ModelError;
pub use model::Model;
pub use vocabulary::{coverage, Coverage};

/// Every model, by name, in the order `--help` lists them. One line per model.
pub static MODELS: &[&dyn Model] = &[
    &register::REGISTER,
    &register::CAS_REGISTER,
    &kv::KV,
    &mutex::MUTEX,
    &mutex::FENCED_MUTEX,
    &lease::LEASE,
];

/// The model of that name, as `check --model` takes it.
pub fn find_model(name: &str) -> Option<&'static dyn Model> {
    MODELS.iter().copied().find(|m| m.name() == name)
}

/// The names of every model, for "allowed:" lists.
pub fn model_names() -> Vec<&'static str> {
    MODELS.iter().map(|m| m.name()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_model_has_its_own_name_and_is_found_by_it() {
        let names = model_names();
        assert_eq!(
            names.iter().collect::<HashSet<_>>().len(),
            names.len(),
            "{names:?}"
        );
        for m in MODELS {
            assert_eq!(find_model(m.name()).map(|f| f.name()), Some(m.name()));
        }
        assert!(find_model("no-such-model").is_none());
    }

    #[test]
    fn every_model_takes_something_and_never_passes_over_what_it_takes() {
        for m in MODELS {
            assert!(!m.takes().is_empty(), "{m}");
            assert!(
                m.passes_over().iter().all(|f| !m.takes().contains(f)),
                "{m}"
            );
        }
    }
}
