//! The matrix file (`scenarios/matrix/default.toml`): rows (locks), columns (faults with sizes
//! relative to each row's lease), seeds per cell, the workload every cell shares, and the
//! expected verdict of every cell with its reason. Errors name the file, the line and the
//! field, like the scenario loader's. A column's table, beside the column's own keys, is the
//! fault's `[[nemesis]]` entry: its keys are checked against the fault's field list here,
//! its values are the fault's to read for each row (see `plan`).

use super::column::{column, Column};
use super::error::MatrixError;
use super::row::{column_names, expectation, row_kinds, RawRow, Row};
use super::size::{size_field, Size};
use crate::fault::RawEntry;
use crate::scenario::{rules, MsRange, Source};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

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
    let duration = size_field(&src, path, "workload.duration", &raw.workload.duration)?;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::Expected;

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
