//! The closed choices of the command line (`--property`, `--model`, `--format`, `--backend`)
//! as clap `ValueEnum`s, each listing its values from the one table that defines them (the
//! checker's, its registry of models, or the registry of named locks), so `--help` and clap's
//! errors name every allowed value and a new model, format or lock appears without touching
//! this file.

use clap::builder::PossibleValue;
use clap::ValueEnum;
use lockpick_checker::import::Format;
use lockpick_checker::lock::Property;
use lockpick_checker::models::{Model, MODELS};
use lockpick_harness::locks::{LockPreset, LOCKS};
use std::sync::LazyLock;

/// A `ValueEnum` newtype over `$ty`, whose values are `$all` named by `$name`.
macro_rules! choice {
    ($(#[$doc:meta])* $arg:ident($ty:ty), all: $all:expr, name: $name:expr) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $arg(pub $ty);

        impl ValueEnum for $arg {
            fn value_variants<'a>() -> &'a [Self] {
                static ALL: LazyLock<Vec<$arg>> = LazyLock::new(|| $all.map($arg).collect());
                &ALL
            }

            fn to_possible_value(&self) -> Option<PossibleValue> {
                Some(PossibleValue::new($name(self.0)))
            }
        }
    };
}

choice!(
    /// `--property`: what must hold.
    PropertyArg(Property),
    all: Property::ALL.into_iter(),
    name: Property::name
);

choice!(
    /// `--model`: the sequential specification a history is checked against.
    ModelArg(&'static dyn Model),
    all: MODELS.iter().copied(),
    name: |m: &'static dyn Model| m.name()
);

choice!(
    /// `--format`: a history file's format.
    FormatArg(Format),
    all: Format::ALL.into_iter(),
    name: Format::name
);

choice!(
    /// `--backend`/`--backends`: a named lock (a server kind and a client kind on it).
    LockArg(&'static LockPreset),
    all: LOCKS.iter(),
    name: |l: &'static LockPreset| l.name
);

impl LockArg {
    pub fn name(self) -> &'static str {
        self.0.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names<T: ValueEnum>() -> Vec<String> {
        T::value_variants()
            .iter()
            .map(|v| v.to_possible_value().unwrap().get_name().to_owned())
            .collect()
    }

    #[test]
    fn every_choice_lists_its_whole_table() {
        assert_eq!(names::<PropertyArg>(), ["exclusive", "fenced"]);
        assert_eq!(names::<ModelArg>(), lockpick_checker::models::model_names());
        assert_eq!(names::<FormatArg>(), ["jepsen-log", "edn", "lockpick"]);
        assert_eq!(names::<LockArg>().len(), LOCKS.len());
        let parsed = LockArg::from_str("etcd", false).unwrap();
        assert_eq!(parsed.name(), "etcd");
        assert!(LockArg::from_str("no-such-lock", false).is_err());
    }
}
