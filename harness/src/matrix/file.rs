//! The matrix file (`scenarios/matrix/default.toml`): rows (locks), columns (faults with sizes
//! relative to each row's lease), seeds per cell, the workload every cell shares, and the
//! expected verdict of every cell with its reason. Errors name the file, the line and the
//! field, like the scenario loader's. A column's table, beside the column's own keys, is the
//! fault's `[[nemesis]]` entry: its keys are checked against the fault's field list here,
//! its values are the fault's to read for each row (see `plan`).

use super::size::Size;
use crate::backends::{client_names, find_client};
use crate::backends::{find_server, server_names};
use crate::client::ClientKind;
use crate::fault::RawEntry;
use crate::fault::{fault_names, find_fault};
use crate::locks::{find_lock, lock_label, lock_names, LockPreset};
use crate::scenario::{rules, MsRange, ScenarioError, Source};
use crate::server::ServerKind;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// A matrix file that cannot be used. Reads after "failed to".
#[derive(Debug, thiserror::Error)]
pub enum MatrixError {
    #[error("read matrix file {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("load matrix {path}:{line}: field `{field}`: {message}")]
    Invalid {
        path: PathBuf,
        line: usize,
        field: String,
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMatrix {
    name: Spanned<String>,
    description: Option<String>,
    seeds: Spanned<u64>,
    #[serde(default = "one")]
    first_seed: u64,
    workload: RawWorkload,
    #[serde(default)]
    lock: RawLock,
    #[serde(rename = "row")]
    rows: Vec<Spanned<RawRow>>,
    /// Read key by key: besides the column's own keys, the table is the fault's
    /// `[[nemesis]]` entry, for the fault to read.
    #[serde(rename = "column")]
    columns: Vec<RawEntry>,
}

fn one() -> u64 {
    1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
    clients: Spanned<u64>,
    duration: Spanned<toml::Value>,
    hold_ms: Option<MsRange>,
    think_ms: Option<MsRange>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawLock {
    acquire_timeout_ms: Option<u64>,
    op_timeout_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRow {
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
    client: Option<Spanned<toml::Table>>,
    /// Clients contending for this row's lock instead of `[workload] clients`.
    clients: Option<Spanned<u64>>,
    /// `[lock]` settings of this row instead of the matrix's (a library's own limits).
    acquire_timeout_ms: Option<u64>,
    op_timeout_ms: Option<u64>,
    about: Option<String>,
    expect: BTreeMap<String, Spanned<String>>,
    /// What the runs of a cell showed that its expectation did not foresee, per column.
    #[serde(default)]
    note: BTreeMap<String, Spanned<String>>,
    /// Cells this row's setup cannot test though the lock could take the fault (a link of
    /// ours that does not run through the proxies), per column: not run, shown as not tested.
    #[serde(default)]
    not_tested: BTreeMap<String, Spanned<String>>,
}

/// A checked matrix.
#[derive(Debug, Clone)]
pub struct Matrix {
    pub name: String,
    pub description: String,
    pub path: PathBuf,
    pub seeds: u64,
    pub first_seed: u64,
    pub clients: u64,
    pub duration: Size,
    pub hold_ms: MsRange,
    pub think_ms: MsRange,
    pub acquire_timeout_ms: u64,
    pub op_timeout_ms: u64,
    pub rows: Vec<Row>,
    pub columns: Vec<Column>,
    /// The file's text: the spans of its rows and columns are in it, so a cell's scenario
    /// names the matrix file's own lines in its errors.
    pub text: String,
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

/// A fault (or none) with its sizes.
#[derive(Debug, Clone)]
pub struct Column {
    pub name: String,
    /// What the fault does, in a sentence.
    pub about: String,
    /// The scenario fault name; `None` for the baseline column.
    pub fault: Option<String>,
    /// The fault's `[[nemesis]]` entry as the column gives it (`fault` and the fault's own
    /// keys, each shorthand renamed to its `_ms` key), spans in [`Matrix::text`]; the fault
    /// reads it for each row once its sizes are resolved. Empty for the baseline.
    pub entry: RawEntry,
    /// The entry's size fields (`*_ms`), in the fault's field order, then `at_ms`, `every_ms`:
    /// each resolved against a row's lease into the milliseconds the fault reads.
    pub sizes: Vec<(String, ColumnSize)>,
    /// The key as the column wrote it, where that is a shorthand (`duration` for
    /// `duration_ms`), for messages.
    pub written: BTreeMap<String, String>,
    /// The cell is "not tested" unless the history shows a pause longer than the lease.
    pub must_outlast_lease: bool,
    /// The workload's length for this column (e.g. long enough after a partition heals for a
    /// lost release to show as a deadlock), instead of the matrix's.
    pub run: Option<Size>,
    pub line: usize,
}

impl Column {
    /// `key` of the fault's entry as the column wrote it (`duration` for `duration_ms`).
    pub fn written(&self, key: &str) -> String {
        self.written
            .get(key)
            .cloned()
            .unwrap_or_else(|| key.to_owned())
    }
}

/// A size field of a column: one size, or a `[min, max]` range of them.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnSize {
    One(Size),
    Range(Vec<Size>),
}

/// The keys of a column that are the column's, not the fault's.
const COLUMN_KEYS: &[&str] = &["name", "about", "must_outlast_lease", "run"];

/// Shorthands a column may write for a fault's size field (the names the first matrices used).
const SHORTHANDS: &[(&str, &str)] = &[
    ("duration", "duration_ms"),
    ("latency", "latency_ms"),
    ("jitter", "jitter_ms"),
    ("offset", "offset_ms"),
];

/// When a column does not say `at_ms`: early enough for every row's workload.
pub(super) const DEFAULT_AT_MS: [i64; 2] = [300, 800];

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

/// The most runs per cell.
pub const MAX_SEEDS: u64 = 1000;

/// Reads and checks the matrix file at `path`.
pub fn load_matrix(path: &Path) -> Result<Matrix, MatrixError> {
    load_matrix_in(path, &folder_of(path))
}

/// Reads and checks the matrix file at `path`, a copy of one that was in `folder`: relative
/// paths in it (an adapter's command) resolve against `folder`.
pub fn load_matrix_in(path: &Path, folder: &Path) -> Result<Matrix, MatrixError> {
    let text = std::fs::read_to_string(path).map_err(|source| MatrixError::Io {
        path: path.to_owned(),
        source,
    })?;
    parse_matrix_in(path, folder, &text)
}

/// The absolute folder of the file at `path`, against which its relative paths resolve: its
/// real folder (symlinks resolved, as a scenario's), or, for a file not on disk, its folder.
pub fn folder_of(path: &Path) -> PathBuf {
    if let Some(real) = std::fs::canonicalize(path)
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
    {
        return real;
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::path::absolute(folder).unwrap_or_else(|_| folder.to_owned())
}

/// Parses matrix text; `path` is used in messages, and relative paths resolve against its
/// folder.
pub fn parse_matrix(path: &Path, text: &str) -> Result<Matrix, MatrixError> {
    parse_matrix_in(path, &folder_of(path), text)
}

/// Parses matrix text; `path` is used in messages, relative paths resolve against `folder`.
pub fn parse_matrix_in(path: &Path, folder: &Path, text: &str) -> Result<Matrix, MatrixError> {
    let src = Source::new(path, text);
    let err = |span: std::ops::Range<usize>, field: &str, message: String| MatrixError::Invalid {
        path: path.to_owned(),
        line: src.line_of(span.start),
        field: field.to_owned(),
        message,
    };
    let raw: RawMatrix = toml::from_str(text).map_err(|e| match src.toml_error(&e) {
        crate::scenario::ScenarioError::Invalid(l) => MatrixError::Invalid {
            path: l.path,
            line: l.line,
            field: l.field,
            message: l.message,
        },
        other => MatrixError::Invalid {
            path: path.to_owned(),
            line: 1,
            field: String::new(),
            message: other.to_string(),
        },
    })?;
    rules::check_name(raw.name.get_ref()).map_err(|why| err(raw.name.span(), "name", why))?;
    let seeds = *raw.seeds.get_ref();
    if !(1..=MAX_SEEDS).contains(&seeds) {
        return Err(err(
            raw.seeds.span(),
            "seeds",
            format!("{seeds} is out of range; allowed: 1 to {MAX_SEEDS}"),
        ));
    }
    let check_clients = |v: &Spanned<u64>, field: &str| {
        let clients = *v.get_ref();
        if (2..=rules::MAX_CLIENTS as u64).contains(&clients) {
            Ok(clients)
        } else {
            Err(err(
                v.span(),
                field,
                format!(
                    "{clients} is out of range; allowed: 2 to {} (one client cannot contend)",
                    rules::MAX_CLIENTS
                ),
            ))
        }
    };
    let clients = check_clients(&raw.workload.clients, "workload.clients")?;
    let duration = size(&src, path, "workload.duration", &raw.workload.duration)?;

    let mut columns: Vec<Column> = Vec::new();
    for c in &raw.columns {
        let col = column(&src, c)?;
        if columns.iter().any(|k| k.name == col.name) {
            let span = c.get_ref().get("name").map_or(c.span(), Spanned::span);
            return Err(err(
                span,
                "column.name",
                format!("column {:?} is named twice; each column once", col.name),
            ));
        }
        columns.push(col);
    }
    if columns.is_empty() {
        return Err(err(
            0..0,
            "column",
            "no [[column]]; give at least one".into(),
        ));
    }

    let mut rows: Vec<Row> = Vec::new();
    for r in &raw.rows {
        let line = src.line_of(r.span().start);
        let row_span = r.span();
        let r = r.get_ref();
        let kinds = row_kinds(r, row_span.clone(), folder)
            .map_err(|(span, field, m)| err(span, &field, m))?;
        let name = match (&r.name, kinds.preset) {
            (Some(n), _) => {
                rules::check_name(n.get_ref()).map_err(|why| err(n.span(), "row.name", why))?;
                n.get_ref().clone()
            }
            (None, Some(lock)) => lock.name.to_owned(),
            (None, None) => {
                return Err(err(
                    row_span,
                    "row.name",
                    "missing; a row given by `server` and `client.kind` needs a name (e.g. the library's, \"node-redlock-v5\")".into(),
                ))
            }
        };
        if rows.iter().any(|k| k.name == name) {
            let span = r.name.as_ref().map_or(row_span.clone(), Spanned::span);
            return Err(err(
                span,
                "row.name",
                format!("row {name:?} is named twice; give one a `name`"),
            ));
        }
        let about = match (&r.about, kinds.preset) {
            (Some(about), _) => about.clone(),
            (None, Some(lock)) => lock.client_kind().about().to_owned(),
            (None, None) => {
                return Err(err(
                    row_span,
                    "row.about",
                    format!("row {name:?} names its client kind, so it needs `about`: one sentence on how the lock works and what its token is"),
                ))
            }
        };
        let fenced = match &r.resource {
            Some(m) if m.get_ref() == "fenced" => true,
            Some(m) if m.get_ref() == "naive" => false,
            Some(m) => {
                return Err(err(
                    m.span(),
                    "row.resource",
                    format!("unknown mode {:?}; allowed: naive, fenced", m.get_ref()),
                ))
            }
            None => false,
        };
        let mut expect = BTreeMap::new();
        for (column, text) in &r.expect {
            let field = format!("row.expect.{column}");
            if !columns.iter().any(|c| &c.name == column) {
                return Err(err(
                    text.span(),
                    &field,
                    format!(
                        "no column {column:?}; the columns are: {}",
                        column_names(&columns)
                    ),
                ));
            }
            let parsed = expectation(text.get_ref()).map_err(|m| err(text.span(), &field, m))?;
            expect.insert(column.clone(), parsed);
        }
        if let Some(missing) = columns.iter().find(|c| !expect.contains_key(&c.name)) {
            return Err(err(
                row_span,
                &format!("row.expect.{}", missing.name),
                format!(
                    "row {name:?} gives no expectation for column {:?}; every cell needs one (\"valid: why\", \"invalid: why\" or \"n/a: why\")",
                    missing.name
                ),
            ));
        }
        let mut notes = BTreeMap::new();
        let mut not_tested = BTreeMap::new();
        for (table, column, text) in r
            .note
            .iter()
            .map(|(c, t)| ("note", c, t))
            .chain(r.not_tested.iter().map(|(c, t)| ("not_tested", c, t)))
        {
            if !columns.iter().any(|c| &c.name == column) {
                return Err(err(
                    text.span(),
                    &format!("row.{table}.{column}"),
                    format!(
                        "no column {column:?}; the columns are: {}",
                        column_names(&columns)
                    ),
                ));
            }
            let into = if table == "note" {
                &mut notes
            } else {
                &mut not_tested
            };
            into.insert(column.clone(), text.get_ref().trim().to_owned());
        }
        rows.push(Row {
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
            client: kinds.options,
            clients: r
                .clients
                .as_ref()
                .map(|c| check_clients(c, "row.clients"))
                .transpose()?,
            acquire_timeout_ms: r.acquire_timeout_ms,
            op_timeout_ms: r.op_timeout_ms,
            about,
            expect,
            line,
            span: row_span,
        });
    }
    if rows.is_empty() {
        return Err(err(0..0, "row", "no [[row]]; give at least one".into()));
    }
    Ok(Matrix {
        name: raw.name.get_ref().clone(),
        description: raw.description.unwrap_or_default(),
        path: path.to_owned(),
        seeds,
        first_seed: raw.first_seed,
        clients,
        duration,
        hold_ms: raw.workload.hold_ms.unwrap_or(MsRange { min: 1, max: 5 }),
        think_ms: raw.workload.think_ms.unwrap_or(MsRange { min: 0, max: 10 }),
        acquire_timeout_ms: raw.lock.acquire_timeout_ms.unwrap_or(2000),
        op_timeout_ms: raw.lock.op_timeout_ms.unwrap_or(300),
        rows,
        columns,
        text: text.to_owned(),
    })
}

/// Reads one `[[column]]`: its own keys, then the rest as the fault's `[[nemesis]]` entry,
/// whose keys the fault's own field list checks now (they are the same for every row) and
/// whose values the fault reads for each row.
fn column(src: &Source, raw: &RawEntry) -> Result<Column, MatrixError> {
    let err = |span: Range<usize>, field: &str, message: String| MatrixError::Invalid {
        path: src.path.to_owned(),
        line: src.line_of(span.start),
        field: field.to_owned(),
        message,
    };
    let table = raw.get_ref();
    let text = |key: &str| -> Result<Option<Spanned<String>>, MatrixError> {
        match table.get(key) {
            None => Ok(None),
            Some(v) => match v.get_ref() {
                toml::Value::String(s) => Ok(Some(Spanned::new(v.span(), s.clone()))),
                other => Err(err(
                    v.span(),
                    &format!("column.{key}"),
                    format!("a {} is not text; allowed: a string", other.type_str()),
                )),
            },
        }
    };
    let name = text("name")?.ok_or_else(|| {
        err(
            raw.span(),
            "column.name",
            "missing; every column needs a name (what its row's `expect` entries name)".into(),
        )
    })?;
    rules::check_name(name.get_ref()).map_err(|why| err(name.span(), "column.name", why))?;
    let about = text("about")?.ok_or_else(|| {
        err(
            raw.span(),
            "column.about",
            "missing; allowed: one sentence on what the fault does".into(),
        )
    })?;
    let fault = match text("fault")? {
        Some(f) => Some(find_fault(f.get_ref()).ok_or_else(|| {
            err(
                f.span(),
                "column.fault",
                format!(
                    "unknown fault {:?}; allowed: {} (or no `fault` for the baseline)",
                    f.get_ref(),
                    fault_names().join(", ")
                ),
            )
        })?),
        None => None,
    };
    let must_outlast_lease = match table.get("must_outlast_lease") {
        None => false,
        Some(v) => v.get_ref().as_bool().ok_or_else(|| {
            err(
                v.span(),
                "column.must_outlast_lease",
                format!(
                    "a {} is not a boolean; allowed: true, false",
                    v.get_ref().type_str()
                ),
            )
        })?,
    };
    let run = table
        .get("run")
        .map(|v| size(src, src.path, "column.run", v))
        .transpose()?;
    // The rest is the fault's entry.
    let mut entry = BTreeMap::new();
    let mut written = BTreeMap::new();
    for (key, value) in table {
        if COLUMN_KEYS.contains(&key.as_str()) {
            continue;
        }
        let full = match SHORTHANDS.iter().find(|(short, _)| short == key) {
            Some((short, full)) => {
                if table.contains_key(*full) {
                    return Err(err(
                        value.span(),
                        &format!("column.{short}"),
                        format!("{short} is the shorthand for {full}; give one of them"),
                    ));
                }
                written.insert((*full).to_owned(), (*short).to_owned());
                (*full).to_owned()
            }
            None => key.clone(),
        };
        entry.insert(full, value.clone());
    }
    let entry: RawEntry = Spanned::new(raw.span(), entry);
    let line = src.line_of(raw.span().start);
    let mut column = Column {
        name: name.into_inner(),
        about: about.into_inner(),
        fault: fault.map(|f| f.name().to_owned()),
        entry,
        sizes: Vec::new(),
        written,
        must_outlast_lease,
        run,
        line,
    };
    let Some(kind) = fault else {
        // The baseline: a fault field here would be ignored, so it is refused.
        if let Some((key, value)) = column.entry.get_ref().iter().next() {
            return Err(err(
                value.span(),
                &format!("column.{}", column.written(key)),
                format!(
                    "column {:?} has no `fault`, so it takes no fault fields; allowed: {}",
                    column.name,
                    COLUMN_KEYS.join(", ")
                ),
            ));
        }
        return Ok(column);
    };
    crate::scenario::check_fields(src, &column.entry, kind).map_err(|e| {
        column_error(src.path, &column, e, |_, m| {
            format!(
                "{m}; a column also has: {}, and the shorthands {}",
                COLUMN_KEYS.join(", "),
                SHORTHANDS
                    .iter()
                    .map(|(s, f)| format!("{s} (for {f})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    })?;
    // Every size field the fault takes, in its field order, then the timing every fault has.
    let order: Vec<&str> = kind
        .fields()
        .iter()
        .copied()
        .chain(["at_ms", "every_ms"])
        .filter(|k| k.ends_with("_ms"))
        .collect();
    for key in order {
        let Some(value) = column.entry.get_ref().get(key) else {
            continue;
        };
        let field = format!("column.{}", column.written(key));
        let one = |v: &toml::Value| {
            size(
                src,
                src.path,
                &field,
                &Spanned::new(value.span(), v.clone()),
            )
        };
        let sized = match value.get_ref() {
            toml::Value::Integer(_) | toml::Value::String(_) => {
                ColumnSize::One(one(value.get_ref())?)
            }
            toml::Value::Array(items)
                if items
                    .iter()
                    .all(|i| matches!(i, toml::Value::Integer(_) | toml::Value::String(_))) =>
            {
                ColumnSize::Range(items.iter().map(one).collect::<Result<_, _>>()?)
            }
            // Not a size: the fault says what it wants there.
            _ => continue,
        };
        column.sizes.push((key.to_owned(), sized));
    }
    Ok(column)
}

/// A fault's error about a column's entry as a matrix error: at the same line, the field named
/// as the column wrote it, the message as `message` makes it from the entry's key and the
/// fault's message.
pub(super) fn column_error(
    path: &Path,
    col: &Column,
    e: ScenarioError,
    message: impl FnOnce(&str, &str) -> String,
) -> MatrixError {
    match e {
        ScenarioError::Invalid(l) => {
            let key = l.field.strip_prefix("nemesis.").unwrap_or(&l.field);
            MatrixError::Invalid {
                path: l.path,
                line: l.line,
                field: format!("column.{}", col.written(key)),
                message: message(key, &l.message),
            }
        }
        other => MatrixError::Invalid {
            path: path.to_owned(),
            line: col.line,
            field: format!("column.{}", col.name),
            message: message("", &other.to_string()),
        },
    }
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

/// A size field: an integer (ms) or a string [`Size::parse`] reads.
fn size(
    src: &Source,
    path: &Path,
    field: &str,
    v: &Spanned<toml::Value>,
) -> Result<Size, MatrixError> {
    let parsed = match v.get_ref() {
        toml::Value::Integer(ms) => Ok(Size::Ms(*ms)),
        toml::Value::String(s) => Size::parse(s),
        other => Err(format!(
            "a {} is not a size; allowed: milliseconds or a string such as \"2x lease\"",
            other.type_str()
        )),
    };
    parsed.map_err(|message| MatrixError::Invalid {
        path: path.to_owned(),
        line: src.line_of(v.span().start),
        field: field.to_owned(),
        message,
    })
}

/// `"invalid: the lease expires during the pause"`.
fn expectation(text: &str) -> Result<Expectation, String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) const SMALL: &str = r#"
name = "t"
seeds = 2

[workload]
clients = 3
duration = "2x lease + 1000ms"

[[row]]
lock = "redis"
ttl_ms = 500
expect = { none = "valid: no fault", pause = "invalid: Kleppmann" }

[[row]]
name = "etcd-fenced"
lock = "etcd"
ttl_ms = 1000
resource = "fenced"
expect = { none = "valid: no fault", pause = "valid: the fence" }

[[column]]
name = "none"
about = "no fault"

[[column]]
name = "pause"
about = "a GC pause"
fault = "client-pause"
point = "before-write"
duration = "2x lease"
must_outlast_lease = true
"#;

    fn parse(text: &str) -> Result<Matrix, MatrixError> {
        parse_matrix(Path::new("m.toml"), text)
    }

    #[test]
    fn a_small_matrix_reads() {
        let m = parse(SMALL).unwrap();
        assert_eq!((m.seeds, m.first_seed, m.clients), (2, 1, 3));
        assert_eq!(m.rows.len(), 2);
        assert_eq!(m.rows[1].name, "etcd-fenced");
        assert!(m.rows[1].fenced);
        assert_eq!(m.rows[0].line, 9);
        assert_eq!(m.columns[1].fault.as_deref(), Some("client-pause"));
        let point = m.columns[1].entry.get_ref()["point"].get_ref().as_str();
        assert_eq!(point, Some("before-write"));
        assert_eq!(m.rows[0].expect["pause"].verdict, Expected::Invalid);
        assert_eq!(m.rows[0].expect["pause"].why, "Kleppmann");
        let noted = SMALL.replace(
            "expect = { none = \"valid: no fault\", pause = \"valid: the fence\" }",
            "expect = { none = \"valid: no fault\", pause = \"valid: the fence\" }\nnote.pause = \" seen twice \"",
        );
        let m2 = parse(&noted).unwrap();
        assert_eq!(m2.rows[1].notes["pause"], "seen twice");
        let declared = parse(&noted.replace("note.pause", "not_tested.pause")).unwrap();
        assert_eq!(declared.rows[1].not_tested["pause"], "seen twice");
        assert!(declared.rows[1].notes.is_empty());
        fails(
            &noted.replace("note.pause", "note.paws"),
            20,
            "row.note.paws",
            "no column \"paws\"",
        );
        // The row's sentence defaults to the client kind's own.
        assert!(m.rows[1].about.contains("token"), "{}", m.rows[1].about);
    }

    #[track_caller]
    fn fails(text: &str, line: usize, field: &str, needle: &str) {
        let e = parse(text).unwrap_err().to_string();
        let head = format!("load matrix m.toml:{line}: field `{field}`: ");
        assert!(e.starts_with(&head), "{e}\n  wanted {head}");
        assert!(e.contains(needle), "{e}\n  wanted {needle}");
    }

    #[test]
    fn errors_name_the_file_line_and_field() {
        fails(
            &SMALL.replace("lock = \"redis\"", "lock = \"redys\""),
            10,
            "row.lock",
            "unknown lock \"redys\"; allowed: redis, redis-naive",
        );
        fails(
            &SMALL.replace("seeds = 2", "seeds = 0"),
            3,
            "seeds",
            "allowed: 1 to 1000",
        );
        fails(
            &SMALL.replace("duration = \"2x lease\"", "duration = \"2x leash\""),
            30,
            "column.duration",
            "unknown basis \"leash\"; allowed: lease, ttl",
        );
        fails(
            &SMALL.replace("fault = \"client-pause\"", "fault = \"gc\""),
            28,
            "column.fault",
            "unknown fault \"gc\"; allowed: client-pause",
        );
        fails(
            &SMALL.replace("pause = \"invalid: Kleppmann\"", "pause = \"broken\""),
            12,
            "row.expect.pause",
            "has no reason",
        );
        fails(
            &SMALL.replace("pause = \"valid: the fence\"", "paws = \"valid: x\""),
            19,
            "row.expect.paws",
            "no column \"paws\"; the columns are: none, pause",
        );
        fails(
            &SMALL.replace(", pause = \"valid: the fence\"", ""),
            14,
            "row.expect.pause",
            "gives no expectation for column \"pause\"",
        );
        fails(
            &SMALL.replace("must_outlast_lease", "must_outlive_lease"),
            31,
            "column.must_outlive_lease",
            "unknown field",
        );
        fails(
            &SMALL.replace("resource = \"fenced\"", "resource = \"fence\""),
            18,
            "row.resource",
            "allowed: naive, fenced",
        );
    }

    /// A matrix with one library row (an adapter on five redis masters) and one column.
    const LIBRARY: &str = r#"
name = "libs"
seeds = 1

[workload]
clients = 2
duration = "2x lease + 1000ms"

[[column]]
name = "pause"
about = "a GC pause"
fault = "client-pause"
duration = "2x lease"

[[row]]
name = "node-redlock-v5"
server = "redis"
nodes = 5
ttl_ms = 1000
op_timeout_ms = 2500
client = { kind = "process", command = ["node", "../clients/node/redlock-v5/adapter.js", "--x"], init = { auto_extend = true } }
about = "redlock v5 over five masters; token: none"
expect.pause = "invalid: Kleppmann"
"#;

    #[test]
    fn a_library_row_names_its_server_and_client_kinds_and_its_paths_resolve_against_the_file() {
        let m = parse_matrix_in(
            Path::new("m/libs.toml"),
            Path::new("/repo/scenarios"),
            LIBRARY,
        )
        .unwrap();
        let row = &m.rows[0];
        assert_eq!(row.name, "node-redlock-v5");
        assert!(row.preset.is_none());
        assert_eq!(row.server.name(), "redis");
        assert_eq!(row.client_kind.name(), "process");
        assert!(row.is_adapter());
        assert_eq!(row.lock_name(), "process@redis");
        assert_eq!(
            (row.nodes, row.op_timeout_ms, row.acquire_timeout_ms),
            (Some(5), Some(2500), None)
        );
        assert_eq!(row.line, 15);
        // `kind` is the row's client kind, not an option; the command's relative path is
        // absolute now, its other parts as written; `init` passes through.
        assert!(!row.client.contains_key("kind"));
        let command: Vec<&str> = row.client["command"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(
            command,
            [
                "node",
                "/repo/scenarios/../clients/node/redlock-v5/adapter.js",
                "--x"
            ]
        );
        assert_eq!(row.client["init"]["auto_extend"].as_bool(), Some(true));
        // Without a folder given, the file's own.
        let here = parse_matrix(Path::new("/elsewhere/libs.toml"), LIBRARY).unwrap();
        assert_eq!(
            here.rows[0].client["command"][1].as_str(),
            Some("/elsewhere/../clients/node/redlock-v5/adapter.js")
        );
        // A built-in lock keeps its preset.
        let built_in = parse(SMALL).unwrap();
        assert_eq!(built_in.rows[0].lock_name(), "redis");
        assert!(!built_in.rows[0].is_adapter());
    }

    #[track_caller]
    fn library_fails(text: &str, line: usize, field: &str, needle: &str) {
        let text = LIBRARY.replace(
            "[[row]]\nname = \"node-redlock-v5\"\nserver = \"redis\"",
            text,
        );
        assert_ne!(text, LIBRARY, "the replacement must change the row");
        fails(&text, line, field, needle);
    }

    #[test]
    fn a_library_row_with_a_wrong_or_missing_kind_names_its_line_and_field() {
        let row = "[[row]]\nname = \"node-redlock-v5\"\nserver = \"redis\"";
        library_fails(
            &row.replace("\"redis\"", "\"redys\""),
            17,
            "row.server",
            "unknown server kind \"redys\"; allowed: redis, ",
        );
        let wrong_server = LIBRARY
            .replace("server = \"redis\"", "server = \"etcd\"")
            .replace("kind = \"process\"", "kind = \"redis-lock\"");
        fails(
            &wrong_server,
            17,
            "row.server",
            "client kind \"redis-lock\" does not run on server kind \"etcd\"; allowed: redis",
        );
        library_fails(
            &row.replace("name = \"node-redlock-v5\"\n", ""),
            15,
            "row.name",
            "a row given by `server` and `client.kind` needs a name",
        );
        library_fails(
            &row.replace("server = \"redis\"", "server = \"redis\"\nlock = \"redis\""),
            18,
            "row.lock",
            "give either `lock` (a named lock) or `server` with `client.kind`, not both",
        );
        library_fails(
            &row.replace("server = \"redis\"", "lock = \"redlock\""),
            21,
            "row.client.kind",
            "lock \"redlock\" already names its client kind (redlock); to name one, give `server`",
        );
        library_fails(
            &row.replace("server = \"redis\"", "nodes_ = 1"),
            17,
            "row.nodes_",
            "unknown field",
        );
        let no_kind = LIBRARY.replace("kind = \"process\", ", "");
        fails(
            &no_kind,
            21,
            "row.client.kind",
            "missing; a row given by `server` names its client kind",
        );
        let bad_kind = LIBRARY.replace("kind = \"process\"", "kind = \"proces\"");
        fails(
            &bad_kind,
            21,
            "row.client.kind",
            "unknown client kind \"proces\"; allowed: redis-lock,",
        );
        let no_about = LIBRARY.replace(
            "about = \"redlock v5 over five masters; token: none\"\n",
            "",
        );
        fails(
            &no_about,
            15,
            "row.about",
            "needs `about`: one sentence on how the lock works and what its token is",
        );
        let one = LIBRARY.replace("nodes = 5", "nodes = 5\nclients = 1");
        fails(
            &one,
            19,
            "row.clients",
            "1 is out of range; allowed: 2 to 1000",
        );
        let two = parse(&LIBRARY.replace("nodes = 5", "nodes = 5\nclients = 2")).unwrap();
        assert_eq!(two.rows[0].clients, Some(2));
        let no_lock = LIBRARY.replace("server = \"redis\"\n", "");
        fails(
            &no_lock,
            15,
            "row.lock",
            "missing; allowed: `lock` = a named lock (redis, ",
        );
    }

    #[test]
    fn a_matrix_file_reached_through_a_symlink_resolves_paths_against_its_real_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::fs::write(real.join("m.toml"), "").unwrap();
        std::os::unix::fs::symlink(&real, tmp.path().join("link")).unwrap();
        let folder = folder_of(&tmp.path().join("link/m.toml"));
        assert_eq!(folder, std::fs::canonicalize(&real).unwrap());
    }
}
