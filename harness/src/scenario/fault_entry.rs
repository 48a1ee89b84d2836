//! One `[[nemesis]]` entry of a scenario file: the fault it names, its fields, its timing.

use super::model::Fault;
use crate::fault::{fault_names, find_fault, Entry, RawEntry, FAULTS};
use crate::server::ServerKind;
use crate::vocab::rules::{MAX_FAULT_COUNT, MAX_RUN_MS};
use crate::vocab::{MsRange, ScenarioError, Source};

/// The fields every fault has, beside its own.
const COMMON_FIELDS: &[&str] = &["fault", "at_ms", "every_ms", "count"];

/// Reads one `[[nemesis]]` entry: the fault it names reads its own fields, then the timing
/// every fault has. Whether `server` can take it is the caller's to ask
/// ([`crate::fault::FaultSpec::cannot_run_on`]): a matrix makes its cell n/a where a scenario
/// file is refused.
pub(crate) fn read_fault(
    src: &Source,
    raw: &RawEntry,
    node_names: &[String],
    clients: usize,
    server: &dyn ServerKind,
) -> Result<Fault, ScenarioError> {
    let line = src.line_of(raw.span().start);
    let kind = fault_kind(src, raw)?;
    check_fields(src, raw, kind)?;
    let entry = Entry {
        src,
        raw,
        kind,
        node_names,
        clients,
        server,
    };
    let spec = kind.parse(&entry)?;
    let count = match entry.get::<u32>("count")? {
        Some(c) if (1..=MAX_FAULT_COUNT).contains(&c) => Some(c),
        Some(c) => {
            return Err(entry.at(
                "count",
                format!(
                    "{c} is out of range; allowed: 1 to {MAX_FAULT_COUNT} (0 would never run the fault)"
                ),
            ))
        }
        None => None,
    };
    Ok(Fault {
        spec,
        at_ms: match entry.get("at_ms")? {
            Some(a) => entry.ms_in_range("at_ms", a, 0, MAX_RUN_MS)?,
            None => MsRange::fixed(0),
        },
        every_ms: entry
            .get("every_ms")?
            .map(|e| entry.ms_in_range("every_ms", e, 1, MAX_RUN_MS))
            .transpose()?,
        count,
        line,
    })
}

/// The fault an entry names in `fault`.
fn fault_kind(
    src: &Source,
    raw: &RawEntry,
) -> Result<&'static dyn crate::fault::FaultKind, ScenarioError> {
    let table = raw.get_ref();
    let Some(name) = table.get("fault") else {
        return Err(src.error(
            raw.span(),
            "nemesis.fault",
            format!(
                "missing field `fault`; allowed: {}",
                fault_names().join(", ")
            ),
        ));
    };
    name.get_ref().as_str().and_then(find_fault).ok_or_else(|| {
        src.error(
            name.span(),
            "nemesis.fault",
            format!(
                "unknown fault {}; allowed: {}",
                name.get_ref(),
                fault_names().join(", ")
            ),
        )
    })
}

/// Refuses a key of `raw` that is neither common to every fault nor one of `kind`'s own,
/// saying which are allowed.
pub(crate) fn check_fields(
    src: &Source,
    raw: &RawEntry,
    kind: &'static dyn crate::fault::FaultKind,
) -> Result<(), ScenarioError> {
    let allowed = kind.fields();
    // The fields every fault has, then the fault's own.
    let allowed_here = ["at_ms", "every_ms", "count"]
        .iter()
        .chain(allowed)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    for (key, value) in raw.get_ref() {
        if COMMON_FIELDS.contains(&key.as_str()) || allowed.contains(&key.as_str()) {
            continue;
        }
        let known = FAULTS.iter().any(|f| f.fields().contains(&key.as_str()));
        return Err(if known {
            src.error(
                raw.span(),
                &format!("nemesis.{key}"),
                format!(
                    "not allowed for fault {:?}; allowed here: {allowed_here}",
                    kind.name(),
                ),
            )
        } else {
            let mut all: Vec<&str> = COMMON_FIELDS.to_vec();
            for name in FAULTS.iter().flat_map(|f| f.fields()) {
                if !all.contains(name) {
                    all.push(name);
                }
            }
            src.error(
                value.span(),
                &format!("nemesis.{key}"),
                format!(
                    "unknown field `{key}`; allowed for fault {:?}: {allowed_here}; fields of any fault: {}",
                    kind.name(),
                    all.join(", ")
                ),
            )
        });
    }
    Ok(())
}
