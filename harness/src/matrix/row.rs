//! A matrix row: the lock under test (a named lock, or a server kind and a client kind with its
//! options), its settings, and the expected verdict of each of its cells with the reason.

use super::column::Column;
use crate::backends::{client_names, find_client};
use crate::backends::{find_server, server_names};
use crate::client::ClientKind;
use crate::locks::{find_lock, lock_label, lock_names, LockPreset};
use crate::server::ServerKind;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::Path;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRow {
    /// A named lock (a server kind and a client kind with its defaults)…
    pub(super) lock: Option<Spanned<String>>,
    /// … or a server kind, with the client kind in `client.kind` (a library's adapter).
    pub(super) server: Option<Spanned<String>>,
    pub(super) name: Option<Spanned<String>>,
    pub(super) ttl_ms: Spanned<u64>,
    pub(super) lease_ms: Option<Spanned<u64>>,
    pub(super) resource: Option<Spanned<String>>,
    pub(super) nodes: Option<u64>,
    /// The server's release (`[server] version`); the kind's default (Debian's) if absent.
    pub(super) version: Option<Spanned<String>>,
    #[serde(default)]
    pub(super) watchdog: bool,
    pub(super) client: Option<Spanned<toml::Table>>,
    /// Clients contending for this row's lock instead of `[workload] clients`.
    pub(super) clients: Option<Spanned<u64>>,
    /// `[lock]` settings of this row instead of the matrix's (a library's own limits).
    pub(super) acquire_timeout_ms: Option<u64>,
    pub(super) op_timeout_ms: Option<u64>,
    pub(super) about: Option<String>,
    pub(super) expect: BTreeMap<String, Spanned<String>>,
    /// What the runs of a cell showed that its expectation did not foresee, per column.
    #[serde(default)]
    pub(super) note: BTreeMap<String, Spanned<String>>,
    /// Cells this row's setup cannot test though the lock could take the fault (a link of
    /// ours that does not run through the proxies), per column: not run, shown as not tested.
    #[serde(default)]
    pub(super) not_tested: BTreeMap<String, Spanned<String>>,
}

/// A lock under test: a server kind and a client kind on it.
#[derive(Debug, Clone)]
pub struct Row {
    pub name: String,
    /// The named lock the row is (`lock = "redis"`); `None` for a row that names its server
    /// and client kinds (`server = "redis"`, `client = { kind = "process", … }`).
    pub preset: Option<&'static LockPreset>,
    pub server: &'static dyn ServerKind,
    pub client_kind: &'static dyn ClientKind,
    pub ttl_ms: u64,
    /// What frees the lock under a silent holder, when it is not the TTL (a SQL server's idle
    /// timeout for a lease-less lock); the basis of `x lease` sizes.
    pub lease_ms: Option<u64>,
    pub fenced: bool,
    pub nodes: Option<u64>,
    /// The server's release as the row names it, at its span in [`Matrix::text`]: checked by
    /// the scenario loader when each cell is built.
    pub version: Option<Spanned<String>>,
    pub watchdog: bool,
    /// The `[client]` options besides `kind`, relative paths made absolute against the
    /// matrix file's folder.
    pub client: toml::Table,
    /// The row's own number of clients, if it sets one (a library whose contention failure
    /// would hide what every fault does; its own scenario shows that failure).
    pub clients: Option<u64>,
    /// The row's own `[lock]` limits, if it sets them.
    pub acquire_timeout_ms: Option<u64>,
    pub op_timeout_ms: Option<u64>,
    /// How the lock works and what its token is.
    pub about: String,
    /// Expected outcome per column name.
    pub expect: BTreeMap<String, Expectation>,
    /// Observations per column name: why a cell's runs disagree with its expectation.
    pub notes: BTreeMap<String, String>,
    /// Cells that cannot be tested with this row's setup, per column name, and why.
    pub not_tested: BTreeMap<String, String>,
    pub line: usize,
    /// Where the row's table is in [`Matrix::text`].
    pub span: Range<usize>,
}

impl Row {
    /// The lock's name: the preset's, or `<client kind>@<server kind>`.
    pub fn lock_name(&self) -> String {
        self.preset.map_or_else(
            || lock_label(self.server, self.client_kind),
            |l| l.name.to_owned(),
        )
    }

    /// Whether its client is a program speaking the client protocol (a library's adapter).
    pub fn is_adapter(&self) -> bool {
        self.client_kind.name() == crate::client::process::KIND.name()
    }

    /// How its clients use a granted lock: the row's `discipline`, else its client kind's
    /// default. (A value that is not a discipline is refused when its cells are built.)
    pub fn discipline(&self) -> crate::vocab::Discipline {
        let named = self.client.get("discipline").and_then(toml::Value::as_str);
        crate::vocab::Discipline::ALL
            .into_iter()
            .find(|d| Some(d.name()) == named)
            .unwrap_or_else(|| self.client_kind.default_discipline())
    }
}

/// What a cell is expected to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expected {
    /// No violation in any run.
    Valid,
    /// A safety violation in at least one run.
    Invalid,
    /// No safety violation, but a deadlock (liveness) in at least one run.
    Stuck,
    /// The lock cannot take the fault.
    NotApplicable,
}

impl Expected {
    pub fn name(self) -> &'static str {
        match self {
            Expected::Valid => "valid",
            Expected::Invalid => "invalid",
            Expected::Stuck => "stuck",
            Expected::NotApplicable => "n/a",
        }
    }
}

/// An expected outcome and the one-line reason for it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Expectation {
    pub verdict: Expected,
    pub why: String,
}

impl fmt::Display for Expectation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.verdict.name(), self.why)
    }
}

/// A row's server kind, client kind and client options, from `lock` or from `server` and
/// `client.kind`.
pub(super) struct RowKinds {
    pub(super) preset: Option<&'static LockPreset>,
    pub(super) server: &'static dyn ServerKind,
    pub(super) client: &'static dyn ClientKind,
    pub(super) options: toml::Table,
}

type FieldError = (std::ops::Range<usize>, String, String);

pub(super) fn row_kinds(
    r: &RawRow,
    row_span: std::ops::Range<usize>,
    folder: &Path,
) -> Result<RowKinds, FieldError> {
    let fail = |span: std::ops::Range<usize>, field: &str, m: String| (span, field.to_owned(), m);
    let client_span = r.client.as_ref().map_or(row_span.clone(), Spanned::span);
    let mut options = r
        .client
        .as_ref()
        .map(|c| c.get_ref().clone())
        .unwrap_or_default();
    let kind = options.remove("kind");
    let (preset, server, client) = match (&r.lock, &r.server) {
        (Some(lock), None) => {
            let preset = find_lock(lock.get_ref()).ok_or_else(|| {
                fail(
                    lock.span(),
                    "row.lock",
                    format!(
                        "unknown lock {:?}; allowed: {}",
                        lock.get_ref(),
                        lock_names().join(", ")
                    ),
                )
            })?;
            if kind.is_some() {
                return Err(fail(
                    client_span,
                    "row.client.kind",
                    format!(
                        "lock {:?} already names its client kind ({}); to name one, give `server` instead of `lock`",
                        preset.name, preset.client
                    ),
                ));
            }
            (Some(preset), preset.server_kind(), preset.client_kind())
        }
        (None, Some(server)) => {
            let server_kind = find_server(server.get_ref()).ok_or_else(|| {
                fail(
                    server.span(),
                    "row.server",
                    format!(
                        "unknown server kind {:?}; allowed: {}",
                        server.get_ref(),
                        server_names().join(", ")
                    ),
                )
            })?;
            let allowed = client_names().join(", ");
            let client = match &kind {
                Some(toml::Value::String(k)) => find_client(k).ok_or_else(|| {
                    fail(
                        client_span.clone(),
                        "row.client.kind",
                        format!("unknown client kind {k:?}; allowed: {allowed}"),
                    )
                })?,
                Some(other) => {
                    return Err(fail(
                        client_span,
                        "row.client.kind",
                        format!("a {} is not a client kind; allowed: {allowed}", other.type_str()),
                    ))
                }
                None => {
                    return Err(fail(
                        client_span,
                        "row.client.kind",
                        format!("missing; a row given by `server` names its client kind, e.g. client = {{ kind = \"process\", command = [\"node\", \"../../clients/node/redlock-v5/adapter.js\"] }}; allowed: {allowed}"),
                    ))
                }
            };
            if !client.runs_on().allows(server_kind) {
                return Err(fail(
                    server.span(),
                    "row.server",
                    format!(
                        "client kind {:?} does not run on server kind {:?}; allowed: {}",
                        client.name(),
                        server_kind.name(),
                        client.runs_on().describe()
                    ),
                ));
            }
            (None, server_kind, client)
        }
        (Some(lock), Some(_)) => {
            return Err(fail(
                lock.span(),
                "row.lock",
                "give either `lock` (a named lock) or `server` with `client.kind`, not both".into(),
            ))
        }
        (None, None) => {
            return Err(fail(
                row_span,
                "row.lock",
                format!(
                    "missing; allowed: `lock` = a named lock ({}), or `server` = a server kind with `client.kind`",
                    lock_names().join(", ")
                ),
            ))
        }
    };
    client.rebase_paths(&mut options, folder);
    Ok(RowKinds {
        preset,
        server,
        client,
        options,
    })
}

pub(super) fn column_names(columns: &[Column]) -> String {
    columns
        .iter()
        .map(|c| c.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `"invalid: the lease expires during the pause"`.
pub(super) fn expectation(text: &str) -> Result<Expectation, String> {
    let allowed = "allowed: \"valid: <why>\", \"invalid: <why>\" (a safety violation), \"stuck: <why>\" (a deadlock) or \"n/a: <why>\"";
    let (verdict, why) = text
        .split_once(':')
        .ok_or_else(|| format!("{text:?} has no reason; {allowed}"))?;
    let verdict = match verdict.trim() {
        "valid" => Expected::Valid,
        "invalid" => Expected::Invalid,
        "stuck" => Expected::Stuck,
        "n/a" => Expected::NotApplicable,
        other => return Err(format!("unknown verdict {other:?}; {allowed}")),
    };
    let why = why.trim();
    if why.is_empty() || why.contains('\n') {
        return Err(format!("the reason must be one non-empty line; {allowed}"));
    }
    Ok(Expectation {
        verdict,
        why: why.to_owned(),
    })
}
