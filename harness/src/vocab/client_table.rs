//! A scenario's `[client]` table as a client kind reads it: into its own options struct, with
//! errors that name the file, the line and the field like every scenario error.

use super::error::{ScenarioError, Source};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The `[client]` table of one scenario file, or none (a `[backend]` shorthand, a `--backend`
/// lock): then a kind's options are their defaults.
#[derive(Clone)]
pub struct ClientTable<'a> {
    src: Source<'a>,
    present: bool,
}

#[derive(Deserialize)]
struct Wrap<T> {
    client: T,
}

impl<'a> ClientTable<'a> {
    pub(crate) fn new(src: Source<'a>, present: bool) -> ClientTable<'a> {
        ClientTable { src, present }
    }

    /// No table: every option at its default.
    pub fn defaults() -> ClientTable<'static> {
        ClientTable {
            src: Source::new(Path::new("(defaults)"), ""),
            present: false,
        }
    }

    /// The table as `T` (which must accept, and may ignore, `kind`), or `T::default()` when
    /// there is none. Use `deny_unknown_fields` on `T`, so a misspelt key is an error.
    pub fn read<T: DeserializeOwned + Default>(&self) -> Result<T, ScenarioError> {
        if !self.present {
            return Ok(T::default());
        }
        toml::from_str::<Wrap<T>>(self.src.text)
            .map(|w| w.client)
            .map_err(|e| self.src.toml_error(&e))
    }

    /// The file's `[resource] mode` as written (`None` when absent or unreadable: the
    /// scenario's own reading of it reports a bad one): a client's use may depend on it.
    pub fn resource_mode(&self) -> Option<String> {
        #[derive(Deserialize)]
        struct File {
            resource: Option<Resource>,
        }
        #[derive(Deserialize)]
        struct Resource {
            mode: Option<String>,
        }
        toml::from_str::<File>(self.src.text)
            .ok()
            .and_then(|f| f.resource)
            .and_then(|r| r.mode)
    }

    /// The real folder of the scenario file (symlinks to it or its folders resolved), against
    /// which a client resolves relative paths: a scenario reached through a link to
    /// `scenarios/` must start the same adapter, with the same venv, as the file itself.
    /// A file that cannot be resolved (not on disk, as in a test) keeps its folder as given.
    pub fn folder(&self) -> PathBuf {
        if let Some(real) = std::fs::canonicalize(self.src.path)
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
        {
            return real;
        }
        match self.src.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }

    /// An error about `field` (as the file writes it: `client.<key>`) at `span`.
    pub fn error(
        &self,
        span: std::ops::Range<usize>,
        field: &str,
        message: impl Into<String>,
    ) -> ScenarioError {
        self.src.error(span, field, message)
    }

    /// Checks `lo <= value <= hi`.
    pub fn in_range(
        &self,
        field: &str,
        value: &Spanned<u64>,
        lo: u64,
        hi: u64,
    ) -> Result<u64, ScenarioError> {
        super::error::in_range(&self.src, field, value, lo, hi)
    }
}
