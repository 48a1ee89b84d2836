//! A matrix column: a fault (or none, the baseline) with its sizes relative to each row's
//! lease, read from a `[[column]]` table whose keys, beside the column's own, are the fault's
//! `[[nemesis]]` entry.

use super::error::MatrixError;
use super::size::{size_field, Size};
use crate::fault::RawEntry;
use crate::fault::{fault_names, find_fault, FaultKind};
use crate::scenario::{rules, ScenarioError, Source};
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

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
    /// The workload's length for this column (e.g. long enough after a partition heals for a
    /// lost release to show as a deadlock), instead of the matrix's.
    pub run: Option<Size>,
    /// How long a holder keeps the lock in this column's runs (`hold = [min, max]`, sizes),
    /// instead of the matrix's `hold_ms`: long enough for a hold to span the fault (a crash and
    /// the restart, a cut past the lease), so that the runs are exposed (docs/exposure.md).
    pub hold: Option<[Size; 2]>,
    /// The hold of the rows whose lock renews itself (`watchdog = true` or `renews = true`: a session or a
    /// watchdog keeps it while its holder lives), instead of `hold`: only such a holder may
    /// keep the lock past one lease, as a cut past its session needs (`hold_renewing`).
    pub hold_renewing: Option<[Size; 2]>,
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
const COLUMN_KEYS: &[&str] = &["name", "about", "run", "hold", "hold_renewing"];

/// Shorthands a column may write for a fault's size field (the names the first matrices used).
const SHORTHANDS: &[(&str, &str)] = &[
    ("duration", "duration_ms"),
    ("latency", "latency_ms"),
    ("jitter", "jitter_ms"),
    ("offset", "offset_ms"),
];

/// When a column does not say `at_ms`: early enough for every row's workload.
pub(super) const DEFAULT_AT_MS: [i64; 2] = [300, 800];

/// Reads one `[[column]]`: its own keys, then the rest as the fault's `[[nemesis]]` entry,
/// whose keys the fault's own field list checks now (they are the same for every row) and
/// whose values the fault reads for each row.
fn column(src: &Source, raw: &RawEntry) -> Result<Column, MatrixError> {
    let own = own_keys(src, raw)?;
    let (entry, written) = fault_entry(src, raw)?;
    let mut column = Column {
        name: own.name,
        about: own.about,
        fault: own.fault.map(|f| f.name().to_owned()),
        entry,
        sizes: Vec::new(),
        written,
        run: own.run,
        hold: own.hold,
        hold_renewing: own.hold_renewing,
        line: src.line_of(raw.span().start),
    };
    let Some(kind) = own.fault else {
        refuse_baseline_fields(src, &column)?;
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
    column.sizes = sizes(src, &column, kind)?;
    Ok(column)
}

/// The keys of a `[[column]]` that are the column's own ([`COLUMN_KEYS`]), checked.
struct OwnKeys {
    name: String,
    about: String,
    /// `None` for the baseline.
    fault: Option<&'static dyn FaultKind>,
    run: Option<Size>,
    hold: Option<[Size; 2]>,
    hold_renewing: Option<[Size; 2]>,
}

/// Reads the column's own keys, in order: `name` (required, a plain name), `about`
/// (required), `fault` (one lockpick knows), `run` (a size).
fn own_keys(src: &Source, raw: &RawEntry) -> Result<OwnKeys, MatrixError> {
    let table = raw.get_ref();
    let text = |key: &str| -> Result<Option<Spanned<String>>, MatrixError> {
        match table.get(key) {
            None => Ok(None),
            Some(v) => match v.get_ref() {
                toml::Value::String(s) => Ok(Some(Spanned::new(v.span(), s.clone()))),
                other => Err(MatrixError::at(
                    src,
                    v.span(),
                    &format!("column.{key}"),
                    format!("a {} is not text; allowed: a string", other.type_str()),
                )),
            },
        }
    };
    let name = text("name")?.ok_or_else(|| {
        MatrixError::at(
            src,
            raw.span(),
            "column.name",
            "missing; every column needs a name (what its row's `expect` entries name)".into(),
        )
    })?;
    rules::check_name(name.get_ref())
        .map_err(|why| MatrixError::at(src, name.span(), "column.name", why))?;
    let about = text("about")?.ok_or_else(|| {
        MatrixError::at(
            src,
            raw.span(),
            "column.about",
            "missing; allowed: one sentence on what the fault does".into(),
        )
    })?;
    let fault = match text("fault")? {
        Some(f) => Some(find_fault(f.get_ref()).ok_or_else(|| {
            MatrixError::at(
                src,
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
    if let Some(v) = table.get("must_outlast_lease") {
        // Gone: each fault's exposure rule now says when a run counts, for every column.
        return Err(MatrixError::at(
            src,
            v.span(),
            "column.must_outlast_lease",
            "no longer a column key: every run is judged by its fault's exposure rule (docs/exposure.md); remove it".to_owned(),
        ));
    }
    let run = table
        .get("run")
        .map(|v| size_field(src, src.path, "column.run", v))
        .transpose()?;
    let hold = (table.get("hold"))
        .map(|v| hold_field(src, "column.hold", v))
        .transpose()?;
    let hold_renewing = (table.get("hold_renewing"))
        .map(|v| hold_field(src, "column.hold_renewing", v))
        .transpose()?;
    Ok(OwnKeys {
        name: name.into_inner(),
        about: about.into_inner(),
        fault,
        run,
        hold,
        hold_renewing,
    })
}

/// `hold = [min, max]` (or `hold_renewing`): two sizes.
fn hold_field(
    src: &Source,
    field: &str,
    v: &Spanned<toml::Value>,
) -> Result<[Size; 2], MatrixError> {
    let wrong = || {
        MatrixError::at(
            src,
            v.span(),
            field,
            "allowed: [min, max], two sizes such as [\"0.6x lease\", \"0.8x lease\"] or [500, 800]"
                .to_owned(),
        )
    };
    let toml::Value::Array(items) = v.get_ref() else {
        return Err(wrong());
    };
    let [min, max] = items.as_slice() else {
        return Err(wrong());
    };
    let size = |item: &toml::Value| {
        size_field(src, src.path, field, &Spanned::new(v.span(), item.clone()))
    };
    Ok([size(min)?, size(max)?])
}

/// The keys of a `[[column]]` that are not the column's own, as the fault's entry: each
/// shorthand renamed to its `_ms` key (refused beside that key), with what the column wrote
/// for each renamed key.
fn fault_entry(
    src: &Source,
    raw: &RawEntry,
) -> Result<(RawEntry, BTreeMap<String, String>), MatrixError> {
    let table = raw.get_ref();
    let mut entry = BTreeMap::new();
    let mut written = BTreeMap::new();
    for (key, value) in table {
        if COLUMN_KEYS.contains(&key.as_str()) {
            continue;
        }
        let full = match SHORTHANDS.iter().find(|(short, _)| short == key) {
            Some((short, full)) => {
                if table.contains_key(*full) {
                    return Err(MatrixError::at(
                        src,
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
    Ok((Spanned::new(raw.span(), entry), written))
}

/// The baseline (a column without `fault`) takes no fault field: one would be ignored, so it
/// is refused.
fn refuse_baseline_fields(src: &Source, column: &Column) -> Result<(), MatrixError> {
    let Some((key, value)) = column.entry.get_ref().iter().next() else {
        return Ok(());
    };
    Err(MatrixError::at(
        src,
        value.span(),
        &format!("column.{}", column.written(key)),
        format!(
            "column {:?} has no `fault`, so it takes no fault fields; allowed: {}",
            column.name,
            COLUMN_KEYS.join(", ")
        ),
    ))
}

/// Every size field `kind` takes that the column gives, in the fault's field order, then the
/// timing every fault has (`at_ms`, `every_ms`): one size or a range of them. A value that is
/// not a size is left for the fault to refuse, saying what it wants there.
fn sizes(
    src: &Source,
    column: &Column,
    kind: &'static dyn FaultKind,
) -> Result<Vec<(String, ColumnSize)>, MatrixError> {
    let order: Vec<&str> = kind
        .fields()
        .iter()
        .copied()
        .chain(["at_ms", "every_ms"])
        .filter(|k| k.ends_with("_ms"))
        .collect();
    let mut sizes = Vec::new();
    for key in order {
        let Some(value) = column.entry.get_ref().get(key) else {
            continue;
        };
        let field = format!("column.{}", column.written(key));
        let one = |v: &toml::Value| {
            size_field(
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
        sizes.push((key.to_owned(), sized));
    }
    Ok(sizes)
}

/// Reads every `[[column]]` in order: two of one name are refused at the second, and a file
/// without columns is refused.
pub(super) fn read_columns(src: &Source, raw: &[RawEntry]) -> Result<Vec<Column>, MatrixError> {
    let mut columns: Vec<Column> = Vec::new();
    for c in raw {
        let col = column(src, c)?;
        if columns.iter().any(|k| k.name == col.name) {
            let span = c.get_ref().get("name").map_or(c.span(), Spanned::span);
            return Err(MatrixError::at(
                src,
                span,
                "column.name",
                format!("column {:?} is named twice; each column once", col.name),
            ));
        }
        columns.push(col);
    }
    if columns.is_empty() {
        return Err(MatrixError::none_given(src, "column"));
    }
    Ok(columns)
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
