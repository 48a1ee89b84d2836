//! The matrix file (`scenarios/matrix/default.toml`): rows (locks), columns (faults with sizes
//! relative to each row's lease), seeds per cell, the workload every cell shares, and the
//! expected verdict of every cell with its reason. Errors name the file, the line and the
//! field, like the scenario loader's. A column's table, beside the column's own keys, is the
//! fault's `[[nemesis]]` entry: its keys are checked against the fault's field list when the
//! file is read (see `column`), its values are the fault's to read for each row (see `plan`).
//! The rows are read in `row`.

use super::column::{read_columns, Column};
use super::error::MatrixError;
use super::row::{check_clients, read_rows, RawRow, Row};
use super::size::{size_field, Size};
use crate::fault::RawEntry;
use crate::scenario::{rules, MsRange, Source};
use serde::Deserialize;
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
/// The fields are checked in this order, the first error the one reported: the name, `seeds`,
/// the workload, every column, then every row (whose expectations name the columns).
pub fn parse_matrix_in(path: &Path, folder: &Path, text: &str) -> Result<Matrix, MatrixError> {
    let src = Source::new(path, text);
    let raw: RawMatrix = toml::from_str(text).map_err(|e| toml_error(&src, &e))?;
    rules::check_name(raw.name.get_ref())
        .map_err(|why| MatrixError::at(&src, raw.name.span(), "name", why))?;
    let seeds = *raw.seeds.get_ref();
    if !(1..=MAX_SEEDS).contains(&seeds) {
        return Err(MatrixError::at(
            &src,
            raw.seeds.span(),
            "seeds",
            format!("{seeds} is out of range; allowed: 1 to {MAX_SEEDS}"),
        ));
    }
    let clients = check_clients(&src, &raw.workload.clients, "workload.clients")?;
    let duration = size_field(&src, path, "workload.duration", &raw.workload.duration)?;
    let columns = read_columns(&src, &raw.columns)?;
    let rows = read_rows(&src, &raw.rows, &columns, folder)?;
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

/// The file's TOML error (bad syntax, an unknown or missing field) as a matrix error, at the
/// line and field the scenario loader's reading of it names.
fn toml_error(src: &Source, e: &toml::de::Error) -> MatrixError {
    match src.toml_error(e) {
        // `toml` cannot give a dotted-key table (`note.pause.text = …`) the span a note's
        // errors need, and says so in its own words: say what to write instead.
        crate::scenario::ScenarioError::Invalid(l)
            if l.field.starts_with("row.note.") && l.message.contains("borrowed string") =>
        {
            MatrixError::Invalid {
                path: l.path,
                line: l.line,
                field: l.field,
                message: "a note given by dotted keys is not read; allowed: a string, or one inline table, note.<column> = { text = \"…\", seeds = { invalid = [4] } }".to_owned(),
            }
        }
        crate::scenario::ScenarioError::Invalid(l) => MatrixError::Invalid {
            path: l.path,
            line: l.line,
            field: l.field,
            message: l.message,
        },
        other => MatrixError::Invalid {
            path: src.path.to_owned(),
            line: 1,
            field: String::new(),
            message: other.to_string(),
        },
    }
}

#[cfg(test)]
pub(crate) mod tests {
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
        assert_eq!(m2.rows[1].notes["pause"].text, "seen twice");
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
    pub(crate) fn fails(text: &str, line: usize, field: &str, needle: &str) {
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
            &SMALL.replace(
                "duration = \"2x lease\"\n",
                "duration = \"2x lease\"\nmust_outlive_lease = true\n",
            ),
            31,
            "column.must_outlive_lease",
            "unknown field",
        );
        fails(
            &SMALL.replace(
                "duration = \"2x lease\"\n",
                "duration = \"2x lease\"\nmust_outlast_lease = true\n",
            ),
            31,
            "column.must_outlast_lease",
            "every run is judged by its fault's exposure rule",
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
