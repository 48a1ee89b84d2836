//! A matrix row: the lock under test (a named lock, or a server kind and a client kind with its
//! options), its settings, and the expected verdict of each of its cells with the reason.

use super::column::Column;
use super::error::MatrixError;
use super::note::{read_note, RawNote};
use crate::backends::{client_names, find_client};
use crate::backends::{find_server, server_names};
use crate::client::ClientKind;
use crate::locks::{find_lock, lock_label, lock_names, LockPreset};
use crate::scenario::{rules, Source};
use crate::server::ServerKind;
use lockpick_reports::matrix::CellNote;
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
    lock: Option<Spanned<String>>,
    /// … or a server kind, with the client kind in `client.kind` (a library's adapter).
    server: Option<Spanned<String>>,
    name: Option<Spanned<String>>,
    ttl_ms: Spanned<u64>,
    lease_ms: Option<Spanned<u64>>,
    resource: Option<Spanned<String>>,
    nodes: Option<u64>,
    /// The server's release (`[server] version`); the kind's default (Debian's) if absent.
    version: Option<Spanned<String>>,
    #[serde(default)]
    watchdog: bool,
    /// The library keeps the lock alive by itself while its holder lives (a session's
    /// heartbeats, a watchdog in the library): no lockpick watchdog, but the columns'
    /// `hold_renewing` applies.
    #[serde(default)]
    renews: bool,
    client: Option<Spanned<toml::Table>>,
    /// Clients contending for this row's lock instead of `[workload] clients`.
    clients: Option<Spanned<u64>>,
    /// `[lock]` settings of this row instead of the matrix's (a library's own limits).
    acquire_timeout_ms: Option<u64>,
    op_timeout_ms: Option<u64>,
    about: Option<String>,
    expect: BTreeMap<String, Spanned<String>>,
    /// What the runs of a cell showed that its expectation did not foresee, per column: a
    /// string or a table (`note.rs` reads either).
    #[serde(default)]
    note: BTreeMap<String, Spanned<RawNote>>,
    /// Cells this row's setup cannot test though the lock could take the fault (a link of
    /// ours that does not run through the proxies), per column: not run, shown as not tested.
    #[serde(default)]
    not_tested: BTreeMap<String, Spanned<String>>,
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
    /// The library renews the lock by itself (`renews = true`): a holder may keep it past one
    /// lease without lockpick's watchdog.
    pub renews: bool,
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
    /// Observations per column name: why a cell's runs disagree with its expectation, with
    /// their figures about runs as data.
    pub notes: BTreeMap<String, CellNote>,
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
    /// The lock could meet the fault, but lockpick cannot bring it to these servers here.
    NotInjectable,
}

impl Expected {
    pub fn name(self) -> &'static str {
        match self {
            Expected::Valid => "valid",
            Expected::Invalid => "invalid",
            Expected::Stuck => "stuck",
            Expected::NotApplicable => "n/a",
            Expected::NotInjectable => "not-injectable",
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

/// A number of contending clients (`[workload] clients`, a row's `clients`): 2 to
/// [`rules::MAX_CLIENTS`].
pub(super) fn check_clients(
    src: &Source,
    v: &Spanned<u64>,
    field: &str,
) -> Result<u64, MatrixError> {
    let clients = *v.get_ref();
    if (2..=rules::MAX_CLIENTS as u64).contains(&clients) {
        Ok(clients)
    } else {
        Err(MatrixError::at(
            src,
            v.span(),
            field,
            format!(
                "{clients} is out of range; allowed: 2 to {} (one client cannot contend)",
                rules::MAX_CLIENTS
            ),
        ))
    }
}

/// Reads every `[[row]]` in order, against the matrix's `columns`; relative paths in a row's
/// client options resolve against `folder`. A file without rows is refused.
pub(super) fn read_rows(
    src: &Source,
    raw: &[Spanned<RawRow>],
    columns: &[Column],
    folder: &Path,
) -> Result<Vec<Row>, MatrixError> {
    let mut rows: Vec<Row> = Vec::new();
    for r in raw {
        let row = read_row(src, r, columns, &rows, folder)?;
        rows.push(row);
    }
    // A note quoting another row's cell (`{cell:ROW}`) may quote a row below it: checked
    // once every row is read.
    for (row, r) in rows.iter().zip(raw) {
        for (column, note) in &row.notes {
            let missing = note
                .rows_quoted()
                .into_iter()
                .find(|q| !rows.iter().any(|o| &o.name == q));
            if let Some(q) = missing {
                return Err(MatrixError::at(
                    src,
                    r.get_ref().note[column].span(),
                    &format!("row.note.{column}"),
                    format!(
                        "{{cell:{q}}} names no row; the rows are: {}",
                        rows.iter()
                            .map(|o| o.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
        }
    }
    if rows.is_empty() {
        return Err(MatrixError::none_given(src, "row"));
    }
    Ok(rows)
}

/// Reads one `[[row]]`, in order: its kinds, its name (not one of the rows `before` it), its
/// `about`, its resource, its expectation of every column, its notes, its clients.
fn read_row(
    src: &Source,
    raw: &Spanned<RawRow>,
    columns: &[Column],
    before: &[Row],
    folder: &Path,
) -> Result<Row, MatrixError> {
    let r = raw.get_ref();
    let kinds = row_kinds(r, raw.span(), folder)
        .map_err(|(span, field, m)| MatrixError::at(src, span, &field, m))?;
    let name = row_name(src, raw, kinds.preset, before)?;
    let about = row_about(src, raw, kinds.preset, &name)?;
    let fenced = row_fenced(src, r)?;
    let expect = row_expectations(src, raw, &name, columns)?;
    let (notes, not_tested) = row_notes(src, r, columns)?;
    Ok(Row {
        notes,
        not_tested,
        name,
        preset: kinds.preset,
        server: kinds.server,
        client_kind: kinds.client,
        ttl_ms: *r.ttl_ms.get_ref(),
        lease_ms: r.lease_ms.as_ref().map(|l| *l.get_ref()),
        fenced,
        nodes: r.nodes,
        version: r.version.clone(),
        watchdog: r.watchdog,
        renews: r.renews,
        client: kinds.options,
        clients: r
            .clients
            .as_ref()
            .map(|c| check_clients(src, c, "row.clients"))
            .transpose()?,
        acquire_timeout_ms: r.acquire_timeout_ms,
        op_timeout_ms: r.op_timeout_ms,
        about,
        expect,
        line: src.line_of(raw.span().start),
        span: raw.span(),
    })
}

/// The row's `name` (a plain name), else its named lock's; a row given by its kinds must
/// have one. Two rows of one name are refused at the second.
fn row_name(
    src: &Source,
    raw: &Spanned<RawRow>,
    preset: Option<&'static LockPreset>,
    before: &[Row],
) -> Result<String, MatrixError> {
    let r = raw.get_ref();
    let name = match (&r.name, preset) {
        (Some(n), _) => {
            rules::check_name(n.get_ref())
                .map_err(|why| MatrixError::at(src, n.span(), "row.name", why))?;
            n.get_ref().clone()
        }
        (None, Some(lock)) => lock.name.to_owned(),
        (None, None) => {
            return Err(MatrixError::at(
                src,
                raw.span(),
                "row.name",
                "missing; a row given by `server` and `client.kind` needs a name (e.g. the library's, \"node-redlock-v5\")".into(),
            ))
        }
    };
    if before.iter().any(|k| k.name == name) {
        let span = r.name.as_ref().map_or(raw.span(), Spanned::span);
        return Err(MatrixError::at(
            src,
            span,
            "row.name",
            format!("row {name:?} is named twice; give one a `name`"),
        ));
    }
    Ok(name)
}

/// The row's `about`, else its named lock's client kind's; a row given by its kinds must
/// have one.
fn row_about(
    src: &Source,
    raw: &Spanned<RawRow>,
    preset: Option<&'static LockPreset>,
    name: &str,
) -> Result<String, MatrixError> {
    match (&raw.get_ref().about, preset) {
        (Some(about), _) => Ok(about.clone()),
        (None, Some(lock)) => Ok(lock.client_kind().about().to_owned()),
        (None, None) => Err(MatrixError::at(
            src,
            raw.span(),
            "row.about",
            format!("row {name:?} names its client kind, so it needs `about`: one sentence on how the lock works and what its token is"),
        )),
    }
}

/// Whether the row's `resource` is fenced (naive when absent).
fn row_fenced(src: &Source, r: &RawRow) -> Result<bool, MatrixError> {
    match &r.resource {
        Some(m) if m.get_ref() == "fenced" => Ok(true),
        Some(m) if m.get_ref() == "naive" => Ok(false),
        Some(m) => Err(MatrixError::at(
            src,
            m.span(),
            "row.resource",
            format!("unknown mode {:?}; allowed: naive, fenced", m.get_ref()),
        )),
        None => Ok(false),
    }
}

/// The row's `expect`, one per column: each names a column and parses ([`expectation`]); a
/// column without one is refused.
fn row_expectations(
    src: &Source,
    raw: &Spanned<RawRow>,
    name: &str,
    columns: &[Column],
) -> Result<BTreeMap<String, Expectation>, MatrixError> {
    let mut expect = BTreeMap::new();
    for (column, text) in &raw.get_ref().expect {
        let field = format!("row.expect.{column}");
        if !columns.iter().any(|c| &c.name == column) {
            return Err(MatrixError::at(
                src,
                text.span(),
                &field,
                format!(
                    "no column {column:?}; the columns are: {}",
                    column_names(columns)
                ),
            ));
        }
        let parsed = expectation(text.get_ref())
            .map_err(|m| MatrixError::at(src, text.span(), &field, m))?;
        expect.insert(column.clone(), parsed);
    }
    if let Some(missing) = columns.iter().find(|c| !expect.contains_key(&c.name)) {
        return Err(MatrixError::at(
            src,
            raw.span(),
            &format!("row.expect.{}", missing.name),
            format!(
                "row {name:?} gives no expectation for column {:?}; every cell needs one (\"valid: why\", \"invalid: why\" or \"n/a: why\")",
                missing.name
            ),
        ));
    }
    Ok(expect)
}

/// The notes per column name, and the reasons a cell is not tested per column name.
type NotesAndNotTested = (BTreeMap<String, CellNote>, BTreeMap<String, String>);

/// The row's `note` entries (read by [`read_note`]) and `not_tested` entries (trimmed), each
/// naming a column.
fn row_notes(
    src: &Source,
    r: &RawRow,
    columns: &[Column],
) -> Result<NotesAndNotTested, MatrixError> {
    let known = |table: &str, column: &str, span: Range<usize>| {
        if columns.iter().any(|c| c.name == column) {
            return Ok(());
        }
        Err(MatrixError::at(
            src,
            span,
            &format!("row.{table}.{column}"),
            format!(
                "no column {column:?}; the columns are: {}",
                column_names(columns)
            ),
        ))
    };
    let mut notes = BTreeMap::new();
    for (column, value) in &r.note {
        known("note", column, value.span())?;
        notes.insert(column.clone(), read_note(src, column, value)?);
    }
    let mut not_tested = BTreeMap::new();
    for (column, text) in &r.not_tested {
        known("not_tested", column, text.span())?;
        not_tested.insert(column.clone(), text.get_ref().trim().to_owned());
    }
    Ok((notes, not_tested))
}

/// A row's server kind, client kind and client options, from `lock` or from `server` and
/// `client.kind`.
struct RowKinds {
    preset: Option<&'static LockPreset>,
    server: &'static dyn ServerKind,
    client: &'static dyn ClientKind,
    options: toml::Table,
}

type FieldError = (std::ops::Range<usize>, String, String);

fn row_kinds(
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

fn column_names(columns: &[Column]) -> String {
    columns
        .iter()
        .map(|c| c.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `"invalid: the lease expires during the pause"`.
fn expectation(text: &str) -> Result<Expectation, String> {
    let allowed = "allowed: \"valid: <why>\", \"invalid: <why>\" (a safety violation), \"stuck: <why>\" (a deadlock), \"n/a: <why>\" (the lock cannot meet the fault) or \"not-injectable: <why>\" (lockpick cannot bring it here)";
    let (verdict, why) = text
        .split_once(':')
        .ok_or_else(|| format!("{text:?} has no reason; {allowed}"))?;
    let verdict = match verdict.trim() {
        "valid" => Expected::Valid,
        "invalid" => Expected::Invalid,
        "stuck" => Expected::Stuck,
        "n/a" => Expected::NotApplicable,
        "not-injectable" => Expected::NotInjectable,
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
