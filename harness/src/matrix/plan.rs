//! One cell of a matrix as an ordinary scenario: the row's lock and the column's fault, every
//! relative size resolved against the row's lease into concrete milliseconds.
//!
//! The cell's [`Scenario`] is built as a value, through the scenario loader's own rules rather
//! than a copy of them: the cell fills in the loader's layout of a scenario file
//! ([`RawScenario`]) with the row's settings, and the column's fault table, its sizes resolved,
//! is a `[[nemesis]]` entry the fault reads with its own parser. Every span in them points
//! into the matrix file, so what the loader refuses names the matrix file's line: a column's
//! field at its own line, a row's setting at the row. The layout, not typed values, because
//! the loader's checks are written against it (with the spans their errors need), and one set
//! of checks is the point; a fault the row's servers cannot take is found by the same
//! [`crate::fault::FaultSpec::cannot_run_on`] the loader asks, and makes the cell n/a.
//!
//! The scenario is also written out as a file from the same resolved values, so each run of
//! the cell can be repeated with `lockpick scenario FILE --seed N`; a test checks that every
//! shipped cell's file loads back into the scenario built here.

use super::cell_file::CellSettings;
use super::column::{column_error, Column, ColumnSize, DEFAULT_AT_MS};
use super::error::MatrixError;
use super::file::Matrix;
use super::row::{Expectation, Row};
use super::size::Promise;
use crate::fault::{RawEntry, Refusal};
use crate::scenario::{check, read_fault, ClientTable, Scenario, ScenarioError, Source};
use crate::vocab::MsRange;
use serde::Serialize;
use toml::Spanned;

/// One size as resolved for a row: what was asked and what it became.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resolved {
    /// The scenario field it became (`nemesis.duration_ms`; `nemesis.at_ms[0]` for an end of
    /// a range).
    pub field: String,
    /// As the matrix wrote it (`2x lease`).
    pub asked: String,
    pub ms: i64,
}

/// A cell ready to run, or why it cannot.
#[derive(Debug, Clone, Serialize)]
pub struct CellPlan {
    pub row: String,
    pub column: String,
    pub promise: Promise,
    /// Where the lease figure comes from.
    pub lease_from: String,
    pub resolved: Vec<Resolved>,
    /// The scenario's name (its runs are stored under `store/<name>/`).
    pub scenario: String,
    /// The scenario the cell runs; `None` when the row cannot take the fault. Its `path` is
    /// the matrix file's until the cell's file ([`CellPlan::text`]) is written: point it there
    /// (the run stores a copy of the file it names).
    #[serde(skip)]
    pub built: Option<Scenario>,
    /// The scenario file's text, from the same resolved values.
    pub text: String,
    /// Why the row cannot take the fault (the lock never meets it, or lockpick cannot bring
    /// it here); the cell then has no run.
    pub not_applicable: Option<Refusal>,
    pub expect: Expectation,
    /// The matrix file's note on this cell, if any.
    pub note: Option<lockpick_reports::matrix::CellNote>,
    /// Why this row's setup cannot test the fault (declared in the matrix file): the cell
    /// is not run.
    pub not_tested: Option<String>,
}

/// The lease a row promises: its `lease_ms` (what frees a lease-less lock) or its TTL, which
/// the scenario loader has checked against the server (etcd: whole seconds, at least one;
/// ZooKeeper: 2 to 20 ticks), so the TTL asked for is the one granted.
pub fn promise(row: &Row) -> (Promise, String) {
    match row.lease_ms {
        Some(lease_ms) => (
            Promise {
                lease_ms,
                ttl_ms: row.ttl_ms,
            },
            "the row's lease_ms (what frees the lock under a silent holder)".to_owned(),
        ),
        None => (
            Promise {
                lease_ms: row.ttl_ms,
                ttl_ms: row.ttl_ms,
            },
            "the row's ttl_ms, as granted".to_owned(),
        ),
    }
}

/// The column's fault entry for `row`: every size resolved into milliseconds (each recorded in
/// `resolved`), at the spans the column wrote them, and the timing a matrix gives by default
/// (`at_ms`, once).
fn resolve_entry(
    m: &Matrix,
    row: &Row,
    col: &Column,
    promise: Promise,
    resolved: &mut Vec<Resolved>,
) -> Result<RawEntry, MatrixError> {
    let mut table = col.entry.get_ref().clone();
    for (key, sized) in &col.sizes {
        let span = table[key].span();
        let at = |size: &super::Size, field: &str| {
            size.resolve(promise).ok_or_else(|| MatrixError::Invalid {
                path: m.path.clone(),
                line: col.line,
                field: format!("column.{}", col.written(key)),
                message: format!(
                    "{field} = {size} is beyond a day for row {:?} (lease {} ms)",
                    row.name, promise.lease_ms
                ),
            })
        };
        let value = match sized {
            ColumnSize::One(size) => {
                let field = format!("nemesis.{key}");
                let ms = at(size, &field)?;
                resolved.push(Resolved {
                    field,
                    asked: size.to_string(),
                    ms,
                });
                toml::Value::Integer(ms)
            }
            ColumnSize::Range(sizes) => {
                // A range of plain milliseconds is as the column wrote it: not a resolution.
                let relative = sizes.iter().any(|s| s.is_relative());
                let mut items = Vec::new();
                for (i, size) in sizes.iter().enumerate() {
                    let field = format!("nemesis.{key}[{i}]");
                    let ms = at(size, &field)?;
                    if relative {
                        resolved.push(Resolved {
                            field,
                            asked: size.to_string(),
                            ms,
                        });
                    }
                    items.push(toml::Value::Integer(ms));
                }
                toml::Value::Array(items)
            }
        };
        table.insert(key.clone(), Spanned::new(span, value));
    }
    let here = col.entry.span();
    if !table.contains_key("at_ms") {
        let at = DEFAULT_AT_MS.iter().map(|&ms| toml::Value::Integer(ms));
        table.insert(
            "at_ms".into(),
            Spanned::new(here.clone(), toml::Value::Array(at.collect())),
        );
    }
    // Once, unless the column makes it recur.
    if !table.contains_key("count") && !table.contains_key("every_ms") {
        table.insert("count".into(), Spanned::new(here.clone(), 1.into()));
    }
    Ok(Spanned::new(here, table))
}

/// Plans the cell of `row` × `column`. A scenario that cannot load for another reason than
/// the fault being impossible on the row is an error of the matrix: at the column's field for
/// what the fault refuses, else at the row's line.
pub fn plan_cell(m: &Matrix, row: &Row, col: &Column) -> Result<CellPlan, MatrixError> {
    let (promise, lease_from) = promise(row);
    let mut resolved = Vec::new();
    let duration_ms = run_length(m, row, col, promise, &mut resolved)?;
    let hold_ms = hold_range(m, row, col, promise, &mut resolved)?;
    let entry = col
        .fault
        .is_some()
        .then(|| resolve_entry(m, row, col, promise, &mut resolved))
        .transpose()?;
    let cell = CellSettings::new(m, row, col, promise, duration_ms, hold_ms);
    // The file, from the same values; the fault's line in it is the scenario's fault line.
    let (text, fault_line) = cell.text(&lease_from, entry.as_ref());
    let src = Source::new(&m.path, &m.text);
    let mut scenario = check_cell(&cell, &src)?;
    let not_applicable = match &entry {
        Some(entry) => add_fault(&cell, &src, entry, fault_line, &resolved, &mut scenario)?,
        None => None,
    };
    Ok(CellPlan {
        row: row.name.clone(),
        column: col.name.clone(),
        promise,
        lease_from,
        resolved,
        scenario: cell.name,
        built: not_applicable.is_none().then_some(scenario),
        text,
        not_applicable,
        expect: row.expect[&col.name].clone(),
        note: row.notes.get(&col.name).cloned(),
        not_tested: row.not_tested.get(&col.name).cloned(),
    })
}

/// An error of the matrix at `row`'s line.
fn row_error(m: &Matrix, row: &Row, message: String) -> MatrixError {
    MatrixError::Invalid {
        path: m.path.clone(),
        line: row.line,
        field: format!("row.{}", row.name),
        message,
    }
}

/// The length of the cell's run for `row`: the column's `run`, else the matrix's duration,
/// resolved against the row's lease (recorded in `resolved`); at least 1 ms.
fn run_length(
    m: &Matrix,
    row: &Row,
    col: &Column,
    promise: Promise,
    resolved: &mut Vec<Resolved>,
) -> Result<i64, MatrixError> {
    let run = col.run.as_ref().unwrap_or(&m.duration);
    let duration = run.resolve(promise).ok_or_else(|| {
        row_error(
            m,
            row,
            format!("workload.duration_ms = {run} is beyond a day for this row"),
        )
    })?;
    if duration < 1 {
        return Err(row_error(
            m,
            row,
            format!(
                "column {:?}: workload.duration_ms = {run} resolves to {duration} ms for row {:?} (lease {} ms); allowed: at least 1",
                col.name, row.name, promise.lease_ms
            ),
        ));
    }
    resolved.push(Resolved {
        field: "workload.duration_ms".into(),
        asked: run.to_string(),
        ms: duration,
    });
    Ok(duration)
}

/// How long the cell's holders keep the lock: the column's `hold_renewing` for a row whose
/// lock renews itself (lockpick's `watchdog`, or the library's own: `renews`), else its
/// `hold`, else the matrix's `hold_ms`, resolved against the row's lease (recorded in `resolved`); min at most max.
fn hold_range(
    m: &Matrix,
    row: &Row,
    col: &Column,
    promise: Promise,
    resolved: &mut Vec<Resolved>,
) -> Result<MsRange, MatrixError> {
    let hold = match (&col.hold_renewing, row.watchdog || row.renews) {
        (Some(renewing), true) => Some(renewing),
        (Some(_) | None, _) => col.hold.as_ref(),
    };
    let Some([min, max]) = hold else {
        return Ok(m.hold_ms);
    };
    let ms = |size: &super::size::Size| {
        size.resolve(promise)
            .filter(|ms| *ms >= 0)
            .map(|ms| ms as u64)
            .ok_or_else(|| {
                row_error(
                    m,
                    row,
                    format!(
                        "column {:?}: hold {size} resolves below 0 or beyond a day for this row (lease {} ms); allowed: 0 to a day",
                        col.name, promise.lease_ms
                    ),
                )
            })
    };
    let range = MsRange {
        min: ms(min)?,
        max: ms(max)?,
    };
    if range.min > range.max {
        return Err(row_error(
            m,
            row,
            format!(
                "column {:?}: hold [{min}, {max}] resolves to [{}, {}] ms for this row; allowed: min at most max",
                col.name, range.min, range.max
            ),
        ));
    }
    resolved.push(Resolved {
        field: "workload.hold_ms".into(),
        asked: format!("[{min}, {max}]"),
        ms: range.max as i64,
    });
    Ok(range)
}

/// The cell's scenario without its fault, checked by the loader's rules ([`check`]). An
/// error about the row's client options names them as the matrix writes them; any other is
/// the column's, at the row's line.
fn check_cell(cell: &CellSettings, src: &Source) -> Result<Scenario, MatrixError> {
    let client_text = cell.client_text();
    let client_src = Source::new(&cell.m.path, &client_text);
    match check(src, &cell.raw(), &ClientTable::new(client_src, true)) {
        Ok(s) => Ok(s),
        // The row's client options are the row's fields: name them as the matrix writes them.
        Err(ScenarioError::Invalid(l)) if l.field.starts_with("client.") => {
            Err(row_client_error(cell.m, cell.row, &l.field, &l.message))
        }
        Err(e) => Err(row_error(
            cell.m,
            cell.row,
            format!(
                "column {:?} makes a scenario that cannot load: {e}",
                cell.col.name
            ),
        )),
    }
}

/// Reads the column's fault `entry`, resolved for the row, into `scenario` (its line in the
/// cell's file `fault_line`), unless the row's server cannot take it: then returns why, and
/// the cell is n/a. What else the fault refuses, or a schedule too large, is the column's
/// error ([`fault_refused`]).
fn add_fault(
    cell: &CellSettings,
    src: &Source,
    entry: &RawEntry,
    fault_line: usize,
    resolved: &[Resolved],
    scenario: &mut Scenario,
) -> Result<Option<Refusal>, MatrixError> {
    let refused = |e: ScenarioError| fault_refused(cell, resolved, e);
    let mut fault = read_fault(
        src,
        entry,
        &scenario.node_names(),
        scenario.workload.clients,
        scenario.server,
    )
    .map_err(refused)?;
    fault.line = fault_line;
    // The one refusal that makes the cell n/a rather than the matrix wrong, by the rule
    // the loader applies to any scenario.
    let not_applicable = fault.spec.cannot_run_on(scenario.server);
    if not_applicable.is_none() {
        scenario.nemesis.faults.push(fault);
        crate::fault::check_schedule_size(&scenario.nemesis.faults, scenario.workload.duration_ms)
            .map_err(|(_, field, why)| refused(src.error(entry.span(), field, why)))?;
    }
    Ok(not_applicable)
}

/// What the fault refused, as the column's error: the fault's own message, with what each
/// resolved size of the field it names became for this row.
fn fault_refused(cell: &CellSettings, resolved: &[Resolved], e: ScenarioError) -> MatrixError {
    let (row, col) = (cell.row, cell.col);
    column_error(&cell.m.path, col, e, |key, message| {
        let of_key = |r: &&Resolved| {
            r.field
                .strip_prefix("nemesis.")
                .and_then(|f| f.strip_prefix(key))
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('['))
        };
        let sizes: Vec<String> = resolved
            .iter()
            .filter(of_key)
            .map(|r| format!("{} = {} = {} ms", r.field, r.asked, r.ms))
            .collect();
        let sizes = if sizes.is_empty() {
            String::new()
        } else {
            format!(
                " ({} for its lease of {} ms)",
                sizes.join(", "),
                cell.promise.lease_ms
            )
        };
        format!(
            "column {:?} on row {:?}{sizes}: {message}",
            col.name, row.name
        )
    })
}

/// Every cell, row by row.
pub fn plan_matrix(m: &Matrix) -> Result<Vec<CellPlan>, MatrixError> {
    let mut out = Vec::new();
    for row in &m.rows {
        for col in &m.columns {
            out.push(plan_cell(m, row, col)?);
        }
    }
    Ok(out)
}

/// A row's client options are the row's fields: an error about one names it as the matrix
/// writes it (`row.client.init.fenced`), at the row's line.
fn row_client_error(m: &Matrix, row: &Row, field: &str, message: &str) -> MatrixError {
    MatrixError::Invalid {
        path: m.path.clone(),
        line: row.line,
        field: format!("row.{field}"),
        message: format!("row {:?}: {message}", row.name),
    }
}

/// Checks every cell's client against this machine (`ClientOptions::preflight`: an adapter's
/// command, the types its declaration gives each `init` option), for the whole file before any
/// run: a run of some rows (`--rows`) must not start while another row is wrong, and a wrong
/// row must not stop a long matrix only when its cells come.
pub fn preflight_matrix(m: &Matrix, plans: &[CellPlan]) -> Result<(), MatrixError> {
    for plan in plans {
        let Some(built) = &plan.built else {
            continue;
        };
        let Some(row) = m.rows.iter().find(|r| r.name == plan.row) else {
            continue;
        };
        match built.client.options.preflight() {
            Ok(()) => {}
            Err(ScenarioError::Invalid(l)) => {
                return Err(row_client_error(m, row, &l.field, &l.message))
            }
            Err(e) => return Err(row_client_error(m, row, "client", &e.to_string())),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The refusal a cell's expectation foresees: none, the lock's (`n/a`: `Some(false)`) or
    /// this machine's (`not-injectable`: `Some(true)`).
    fn refusal_expected(c: &CellPlan) -> Option<bool> {
        match c.expect.verdict {
            crate::matrix::Expected::NotApplicable => Some(false),
            crate::matrix::Expected::NotInjectable => Some(true),
            crate::matrix::Expected::Valid
            | crate::matrix::Expected::Invalid
            | crate::matrix::Expected::Stuck => None,
        }
    }
    use crate::matrix::file::{parse_matrix, parse_matrix_in};
    use crate::nemesis::build_schedule;
    use crate::scenario::parse_scenario;
    use std::path::Path;

    const M: &str = r#"
name = "t"
seeds = 1
[workload]
clients = 3
duration = "2x lease + 1000ms"

[[row]]
lock = "redis"
ttl_ms = 300
expect = { pause = "invalid: Kleppmann", clock = "invalid: expires early" }

[[row]]
lock = "etcd"
ttl_ms = 1000
watchdog = true
expect = { pause = "invalid: Kleppmann", clock = "n/a: Go ignores libfaketime" }

[[row]]
lock = "pg-advisory"
ttl_ms = 1000
lease_ms = 800
client = { idle_session_timeout_ms = 800 }
expect = { pause = "invalid: the session is ended", clock = "valid: no clock in it" }

[[column]]
name = "pause"
about = "a GC pause"
fault = "client-pause"
point = "before-write"
duration = "2x lease"

[[column]]
name = "clock"
about = "a clock jump"
fault = "clock-jump"
nodes = "random-one"
duration = "0.5x lease"
offset = "+1.5x lease"
"#;

    #[test]
    fn sizes_resolve_per_row_into_the_scenario_each_cell_runs() {
        let m = parse_matrix(Path::new("m.toml"), M).unwrap();
        let cells = plan_matrix(&m).unwrap();
        assert_eq!(cells.len(), 6);
        let pause_ms = |c: &CellPlan| {
            let s = c.built.as_ref().unwrap();
            s.nemesis.faults[0].spec.max_client_pause_ms().unwrap()
        };
        // Each row's pause is twice its own lease.
        assert_eq!(pause_ms(&cells[0]), 600);
        assert_eq!(pause_ms(&cells[2]), 2000);
        assert_eq!(pause_ms(&cells[4]), 1600);
        assert_eq!(cells[4].promise.lease_ms, 800);
        assert!(cells[4].text.contains("\"idle_session_timeout_ms\" = 800"));
        let redis_run = cells[0].built.as_ref().unwrap();
        assert_eq!(redis_run.workload.duration_ms, 1600);
        assert_eq!(
            cells[2].resolved,
            vec![
                Resolved {
                    field: "workload.duration_ms".into(),
                    asked: "2x lease + 1000 ms".into(),
                    ms: 3000
                },
                Resolved {
                    field: "nemesis.duration_ms".into(),
                    asked: "2x lease".into(),
                    ms: 2000
                }
            ]
        );
        // The clock jump is 1.5 leases ahead on redis.
        let clock = cells[1].built.as_ref().unwrap();
        assert_eq!(clock.nemesis.faults[0].spec.label(), "clock-jump +450 ms");
        assert_eq!(cells[1].not_applicable, None);
    }

    #[test]
    fn a_fault_the_servers_cannot_take_is_not_applicable_with_the_servers_reason() {
        let m = parse_matrix(Path::new("m.toml"), M).unwrap();
        let cells = plan_matrix(&m).unwrap();
        let etcd_clock = &cells[3];
        assert!(etcd_clock.built.is_none(), "an n/a cell has nothing to run");
        let why = etcd_clock
            .not_applicable
            .as_ref()
            .map(|r| r.why.as_str())
            .unwrap();
        assert!(
            why.contains("clock-jump cannot run on server \"etcd\""),
            "{why}"
        );
        assert!(why.contains("ignores libfaketime"), "{why}");
        // The pause runs on every row.
        assert!(cells.iter().step_by(2).all(|c| c.not_applicable.is_none()));
    }

    #[test]
    fn the_shipped_default_matrix_plans_every_cell() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/matrix/default.toml");
        let m = crate::matrix::load_matrix(&path).unwrap();
        // Every built-in lock is a row, plus the fenced etcd.
        for lock in crate::locks::LOCKS {
            assert!(
                m.rows.iter().any(|r| r.preset == Some(lock)),
                "{}",
                lock.name
            );
        }
        let cells = plan_matrix(&m).unwrap();
        assert_eq!(cells.len(), m.rows.len() * m.columns.len());
        for c in &cells {
            // The file's n/a and not-injectable expectations are exactly the cells the
            // servers refuse, each for its reason.
            assert_eq!(
                refusal_expected(c),
                c.not_applicable.as_ref().map(|r| r.not_here),
                "{} × {}: {:?}",
                c.row,
                c.column,
                c.not_applicable
            );
        }
        let etcd_pause = cells
            .iter()
            .find(|c| c.row == "etcd" && c.column == "client-pause")
            .unwrap();
        let s = etcd_pause.built.as_ref().unwrap();
        assert_eq!(s.nemesis.faults[0].spec.max_client_pause_ms(), Some(2000));
    }

    #[test]
    fn the_shipped_library_matrix_plans_every_cell_with_absolute_adapter_paths() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/matrix/libraries.toml");
        let m = crate::matrix::load_matrix(&path).unwrap();
        assert!(m.rows.iter().all(|r| r.is_adapter()));
        let cells = plan_matrix(&m).unwrap();
        assert_eq!(cells.len(), m.rows.len() * m.columns.len());
        for c in &cells {
            assert_eq!(
                refusal_expected(c),
                c.not_applicable.as_ref().map(|r| r.not_here),
                "{} × {}",
                c.row,
                c.column
            );
            // The generated scenario lives in the store: no path in it may be relative.
            assert!(
                !c.text.contains("\"./") && !c.text.contains("\"../"),
                "{}",
                c.text
            );
        }
    }

    #[test]
    fn a_cell_that_cannot_load_is_a_matrix_error_at_the_row() {
        // etcd leases are whole seconds: 1500 ms is refused by the server's rule.
        let bad = M.replace("ttl_ms = 1000\nwatchdog", "ttl_ms = 1500\nwatchdog");
        let m = parse_matrix(Path::new("m.toml"), &bad).unwrap();
        let e = plan_matrix(&m).unwrap_err().to_string();
        assert!(e.starts_with("load matrix m.toml:13: field `row.etcd`: column \"pause\" makes a scenario that cannot load"), "{e}");
        assert!(e.contains("lock.ttl_ms"), "{e}");
    }

    /// Two library rows, under the header and the columns of `M`.
    const LIBRARY_ROWS: &str = r#"[[row]]
name = "python-redis-lock"
server = "redis"
ttl_ms = 2000
acquire_timeout_ms = 2000
client = { kind = "process", command = ["python3", "./adapter.py"] }
about = "python-redis-lock; token: none"
expect = { pause = "invalid: Kleppmann", clock = "invalid: Redis expires keys by its clock" }

[[row]]
name = "kazoo"
server = "zookeeper"
nodes = 3
ttl_ms = 1000
client = { kind = "process", command = ["python3", "./kazoo.py"] }
about = "kazoo; token: the node's sequence number"
expect = { pause = "invalid: the session expires", clock = "n/a: the JVMs ignore libfaketime" }

"#;

    /// `M` with its rows replaced by [`LIBRARY_ROWS`]: the first row is on line 8.
    fn library() -> String {
        let (rows, columns) = (M.find("[[row]]").unwrap(), M.find("[[column]]").unwrap());
        format!("{}{LIBRARY_ROWS}{}", &M[..rows], &M[columns..])
    }

    #[test]
    fn a_library_row_plans_like_a_built_in_one_with_its_own_limits_and_an_absolute_command() {
        let m = parse_matrix_in(
            Path::new("m.toml"),
            Path::new("/repo/scenarios/matrix"),
            &library(),
        )
        .unwrap();
        let cells = plan_matrix(&m).unwrap();
        let s = parse_scenario(
            Path::new("/store/matrix/t/scenarios/x.toml"),
            &cells[0].text,
        )
        .unwrap();
        // Sized from the row's own lease, with the row's own acquire timeout.
        assert_eq!(s.nemesis.faults[0].spec.max_client_pause_ms(), Some(4000));
        assert_eq!(s.lock.acquire_timeout_ms, 2000);
        assert_eq!(s.server.name(), "redis");
        assert!(
            cells[0]
                .text
                .contains("\"command\" = [\"python3\", \"/repo/scenarios/matrix/./adapter.py\"]"),
            "{}",
            cells[0].text
        );
        // The same server rule makes a fault n/a on a library row as on a built-in one.
        assert_eq!(cells[1].not_applicable, None);
        let why = cells[3]
            .not_applicable
            .as_ref()
            .map(|r| r.why.as_str())
            .unwrap();
        assert!(
            why.contains("clock-jump cannot run on server \"zookeeper\""),
            "{why}"
        );
    }

    #[test]
    fn a_column_holds_longer_on_rows_that_renew_by_lockpick_or_by_their_library() {
        let cut = "[[column]]\nname = \"cut\"\nabout = \"a cut\"\nfault = \"partition\"\nnodes = \"all\"\nduration = \"2x lease\"\nhold = [\"0.5x lease\", \"0.8x lease\"]\nhold_renewing = [\"3x lease\", \"3.5x lease\"]\n";
        let with_cut = |text: &str| {
            let text = text.replace("expect = { pause", "expect = { cut = \"valid: x\", pause");
            let columns = text.find("[[column]]").unwrap();
            format!("{}{cut}\n{}", &text[..columns], &text[columns..])
        };
        let holds = |text: &str| {
            let m = parse_matrix_in(Path::new("m.toml"), Path::new("/r"), text).unwrap();
            plan_matrix(&m)
                .unwrap()
                .iter()
                .filter(|c| c.column == "cut")
                .map(|c| {
                    let h = c.built.as_ref().unwrap().workload.hold_ms;
                    (h.min, h.max)
                })
                .collect::<Vec<_>>()
        };
        // redis (300 ms, no renewal), etcd (lockpick's watchdog), pg-advisory (its 800 ms lease).
        assert_eq!(holds(&with_cut(M)), [(150, 240), (3000, 3500), (400, 640)]);
        // A library row renews only if it says so: kazoo's session does.
        let rows = with_cut(&library());
        assert_eq!(holds(&rows), [(1000, 1600), (500, 800)]);
        let renewing = rows.replace(
            "nodes = 3\nttl_ms = 1000",
            "nodes = 3\nttl_ms = 1000\nrenews = true",
        );
        assert_eq!(holds(&renewing), [(1000, 1600), (3000, 3500)]);
        // Its renewals are not in the history: its cells' scenarios say so, and exposure
        // counts its holds' leases from when they could last have been renewed.
        let m = parse_matrix_in(Path::new("m.toml"), Path::new("/r"), &renewing).unwrap();
        let renews: Vec<(bool, bool, bool)> = (plan_matrix(&m).unwrap().iter())
            .filter(|c| c.column == "cut")
            .map(|c| {
                let built = c.built.as_ref().unwrap();
                let shown = c.text.contains("\nrenews = true\n");
                (
                    shown,
                    built.lock.renews,
                    built.exposure_plan().lock.renewed_unseen,
                )
            })
            .collect();
        assert_eq!(renews, [(false, false, false), (true, true, true)]);
    }

    #[test]
    fn a_library_row_whose_client_options_do_not_load_names_the_row_and_its_client_field() {
        let bad = library().replace("command = [\"python3\", \"./adapter.py\"]", "comand = []");
        let m = parse_matrix(Path::new("m.toml"), &bad).unwrap();
        let e = plan_matrix(&m).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "load matrix m.toml:8: field `row.client.comand`: row \"python-redis-lock\": "
            ),
            "{e}"
        );
        assert!(e.contains("unknown field"), "{e}");
        let empty = library().replace("command = [\"python3\", \"./adapter.py\"]", "command = []");
        let m = parse_matrix(Path::new("m.toml"), &empty).unwrap();
        let e = plan_matrix(&m).unwrap_err().to_string();
        assert!(
            e.starts_with("load matrix m.toml:8: field `row.client.command`: row \"python-redis-lock\": missing; allowed: the adapter's program and arguments"),
            "{e}"
        );
    }

    /// The shipped matrices' folder, and every matrix file in it.
    fn shipped_matrices() -> Vec<std::path::PathBuf> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/matrix");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "toml"))
            .collect();
        files.sort();
        assert!(files.len() >= 2, "{files:?}");
        files
    }

    #[test]
    fn every_shipped_cell_file_loads_back_into_the_scenario_the_matrix_built() {
        for path in shipped_matrices() {
            let m = crate::matrix::load_matrix(&path).unwrap();
            for cell in plan_matrix(&m).unwrap() {
                let at = format!("{} {} × {}", path.display(), cell.row, cell.column);
                let file = Path::new("/store/matrix/t/scenarios/x.toml");
                match (&cell.built, &cell.not_applicable) {
                    (Some(built), None) => {
                        let mut loaded = parse_scenario(file, &cell.text)
                            .unwrap_or_else(|e| panic!("{at}: {e}\n{}", cell.text));
                        for seed in 1..=3 {
                            let schedule = |s: &Scenario| {
                                build_schedule(s, seed, s.workload.duration_ms, s.workload.clients)
                            };
                            assert_eq!(schedule(built), schedule(&loaded), "{at} seed {seed}");
                        }
                        // Equal in every field but the file it names, the fault's line too.
                        loaded.path = built.path.clone();
                        assert_eq!(format!("{built:?}"), format!("{loaded:?}"), "{at}");
                    }
                    // The file of an n/a cell is refused by the loader for the same reason.
                    (None, Some(why)) => {
                        let e = parse_scenario(file, &cell.text).unwrap_err().to_string();
                        assert!(e.contains("field `nemesis.fault`: "), "{at}: {e}");
                        assert!(e.ends_with(why.why.as_str()), "{at}: {e}\n  wanted {why}");
                    }
                    (built, why) => panic!("{at}: built {}, n/a {why:?}", built.is_some()),
                }
            }
        }
    }

    /// A clock strobe sized entirely from the lease: its period, offset and length, when it
    /// starts and how often it comes back.
    const STROBE: &str = r#"
name = "t"
seeds = 1
[workload]
clients = 2
duration = "4x lease"

[[row]]
name = "short"
lock = "redis"
ttl_ms = 500
expect = { strobe = "invalid: expires early" }

[[row]]
name = "long"
lock = "redis"
ttl_ms = 1000
expect = { strobe = "invalid: expires early" }

[[column]]
name = "strobe"
about = "a strobing clock"
fault = "clock-strobe"
nodes = "all"
at_ms = ["0.2x lease", "0.5x lease + 10ms"]
every_ms = "2x lease"
count = 2
duration_ms = "1x lease"
offset_ms = "-1.5x lease"
period_ms = "0.1x lease"
"#;

    #[test]
    fn any_ms_field_of_the_fault_and_at_ms_may_be_relative_to_the_rows_lease() {
        let m = parse_matrix(Path::new("m.toml"), STROBE).unwrap();
        let cells = plan_matrix(&m).unwrap();
        let short = &cells[0];
        let ms = |c: &CellPlan, field: &str| {
            c.resolved
                .iter()
                .find(|r| r.field == field)
                .unwrap_or_else(|| panic!("{field}: {:?}", c.resolved))
                .ms
        };
        // In the fault's own field order, then the timing every fault has.
        let fields: Vec<&str> = short.resolved.iter().map(|r| r.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "workload.duration_ms",
                "nemesis.duration_ms",
                "nemesis.offset_ms",
                "nemesis.period_ms",
                "nemesis.at_ms[0]",
                "nemesis.at_ms[1]",
                "nemesis.every_ms"
            ]
        );
        for (cell, lease) in [(short, 500), (&cells[1], 1000)] {
            assert_eq!(ms(cell, "nemesis.period_ms"), lease / 10);
            assert_eq!(ms(cell, "nemesis.offset_ms"), -3 * lease / 2);
            assert_eq!(ms(cell, "nemesis.at_ms[1]"), lease / 2 + 10);
            let s = cell.built.as_ref().unwrap();
            let fault = &s.nemesis.faults[0];
            assert_eq!(
                fault.at_ms,
                crate::scenario::MsRange {
                    min: lease as u64 / 5,
                    max: lease as u64 / 2 + 10
                }
            );
            assert_eq!(
                fault.every_ms,
                Some(crate::scenario::MsRange::fixed(2 * lease as u64))
            );
            assert_eq!(fault.count, Some(2));
            assert_eq!(
                fault.spec.label(),
                format!("clock-strobe {} ms", -3 * lease / 2)
            );
            assert!(cell.text.contains(&format!("period_ms = {}\n", lease / 10)));
        }
        let asked = short
            .resolved
            .iter()
            .find(|r| r.field == "nemesis.at_ms[1]")
            .unwrap();
        assert_eq!(asked.asked, "0.5x lease + 10 ms");
        // Half a second flipping every 50 ms: ten flips and a reset, twice.
        let steps = build_schedule(short.built.as_ref().unwrap(), 1, 2000, 2);
        assert_eq!(steps.len(), 2 * (10 + 1), "{steps:?}");
    }

    #[track_caller]
    fn refused_at(e: MatrixError, line: usize, field: &str, needles: &[&str]) {
        let e = e.to_string();
        let head = format!("load matrix m.toml:{line}: field `{field}`: ");
        assert!(e.starts_with(&head), "{e}\n  wanted {head}");
        for needle in needles {
            assert!(e.contains(needle), "{e}\n  wanted {needle}");
        }
    }

    #[test]
    fn a_columns_fault_fields_are_refused_by_the_faults_own_rules_at_the_columns_line() {
        // Lines of STROBE: the column starts at 20, period_ms is on 30.
        let with = |from: &str, to: &str| {
            let text = STROBE.replace(from, to);
            assert_ne!(text, STROBE, "{from}");
            parse_matrix(Path::new("m.toml"), &text)
        };
        // Keys: the fault's field list, when the file is read.
        let e = with("period_ms =", "period =").unwrap_err();
        refused_at(
            e,
            30,
            "column.period",
            &[
                "unknown field `period`; allowed for fault \"clock-strobe\": at_ms, every_ms, count, duration_ms, nodes, offset_ms, period_ms",
                "a column also has: name, about, run, hold, hold_renewing, and the shorthands duration (for duration_ms)",
            ],
        );
        let e = with("nodes = \"all\"", "point = \"before-write\"").unwrap_err();
        refused_at(
            e,
            20,
            "column.point",
            &["not allowed for fault \"clock-strobe\""],
        );
        let e = with(
            "duration_ms = \"1x lease\"",
            "duration_ms = 1\nduration = 2",
        )
        .unwrap_err();
        refused_at(
            e,
            29,
            "column.duration",
            &["duration is the shorthand for duration_ms; give one of them"],
        );
        let e = with("fault = \"clock-strobe\"\n", "").unwrap_err();
        // The fault's first key, on line 24 now.
        refused_at(
            e,
            24,
            "column.at_ms",
            &["column \"strobe\" has no `fault`, so it takes no fault fields"],
        );
        let e = with("\"0.1x lease\"", "\"0.1x leese\"").unwrap_err();
        refused_at(e, 30, "column.period_ms", &["unknown basis \"leese\""]);
        // Values: the fault's rules, for each row once its sizes are resolved.
        let m = with("\"0.1x lease\"", "\"0.01x lease\"").unwrap();
        refused_at(
            plan_matrix(&m).unwrap_err(),
            30,
            "column.period_ms",
            &[
                "column \"strobe\" on row \"short\" (nemesis.period_ms = 0.01x lease = 5 ms for its lease of 500 ms): 5 is out of range; allowed: 10 to",
            ],
        );
        let m = with("\"1x lease\"", "\"-1x lease\"").unwrap();
        refused_at(
            plan_matrix(&m).unwrap_err(),
            28,
            "column.duration_ms",
            &["= -500 ms for its lease of 500 ms): milliseconds must not be negative"],
        );
        let m = with("nodes = \"all\"", "nodes = [\"n2\"]").unwrap();
        refused_at(
            plan_matrix(&m).unwrap_err(),
            24,
            "column.nodes",
            &["column \"strobe\" on row \"short\": unknown node \"n2\""],
        );
        let m = with("offset_ms = \"-1.5x lease\"\n", "").unwrap();
        refused_at(
            plan_matrix(&m).unwrap_err(),
            20,
            "column.offset_ms",
            &["fault \"clock-strobe\" needs offset_ms"],
        );
    }
}
