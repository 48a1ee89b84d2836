//! A cell's settings, and the two things made from them: the scenario as the loader's layout
//! (which the loader checks as any scenario's), and the scenario file a run of the cell repeats.

use super::column::Column;
use super::file::Matrix;
use super::row::{Expected, Row};
use super::size::Promise;
use crate::fault::RawEntry;
use crate::scenario::{
    RawCheck, RawClientKind, RawLock, RawResource, RawScenario, RawServer, RawWorkload,
};
use crate::vocab::MsRange;
use std::fmt::Write as _;
use toml::Spanned;

/// The settings of a cell beside its fault: the row's, or the matrix's where the row sets
/// none. Its scenario and its file are written from the same values, so they cannot disagree.
pub(super) struct CellSettings<'a> {
    pub(super) m: &'a Matrix,
    pub(super) row: &'a Row,
    pub(super) col: &'a Column,
    /// The row's lease, which the column's sizes are relative to.
    pub(super) promise: Promise,
    /// The scenario's name, `<matrix>-<row>-<column>`.
    pub(super) name: String,
    pub(super) description: String,
    /// `expected`, none for a cell expected n/a.
    pub(super) expected: Option<&'static str>,
    pub(super) clients: u64,
    /// The workload's length, resolved for the row.
    pub(super) duration_ms: i64,
    /// How long a holder keeps the lock: the column's `hold` resolved for the row, or the
    /// matrix's `hold_ms`.
    pub(super) hold_ms: MsRange,
    /// `[check] deadlock_ms` when the column's holds are long: above the longest hold plus a
    /// lease, so that a hold the workload asked for is not taken for a lock nobody gets.
    pub(super) deadlock_ms: Option<u64>,
    pub(super) acquire_timeout_ms: u64,
    pub(super) op_timeout_ms: u64,
    /// `[resource] mode` and `[check] property`: fenced for a fenced row.
    pub(super) mode: &'static str,
    pub(super) property: &'static str,
}

impl<'a> CellSettings<'a> {
    /// The settings of `row` × `col`, whose run lasts `duration_ms` for this row.
    pub(super) fn new(
        m: &'a Matrix,
        row: &'a Row,
        col: &'a Column,
        promise: Promise,
        duration_ms: i64,
        hold_ms: MsRange,
    ) -> Self {
        let expected = match row.expect[&col.name].verdict {
            Expected::Valid => Some("valid"),
            Expected::Invalid => Some("invalid"),
            Expected::Stuck => Some("stuck"),
            Expected::NotApplicable | Expected::NotInjectable => None,
        };
        let (mode, property) = if row.fenced {
            ("fenced", "fenced")
        } else {
            ("naive", "exclusive")
        };
        CellSettings {
            m,
            row,
            col,
            promise,
            name: format!("{}-{}-{}", m.name, row.name, col.name),
            description: format!("{} under {}: {}", row.name, col.name, col.about),
            expected,
            clients: row.clients.unwrap_or(m.clients),
            duration_ms,
            hold_ms,
            // The scenario's default is 3 TTLs, at least 3 s.
            deadlock_ms: (col.hold.is_some() || col.hold_renewing.is_some()).then(|| {
                (3 * row.ttl_ms)
                    .max(3000)
                    .max(hold_ms.max + promise.lease_ms)
            }),
            acquire_timeout_ms: row.acquire_timeout_ms.unwrap_or(m.acquire_timeout_ms),
            op_timeout_ms: row.op_timeout_ms.unwrap_or(m.op_timeout_ms),
            mode,
            property,
        }
    }

    /// The row's part of the scenario, as the loader's layout; every setting at the row's span,
    /// so what the loader refuses names the row's line. No `[[nemesis]]`: the column's entry is
    /// read apart.
    pub(super) fn raw(&self) -> RawScenario {
        let (m, row) = (self.m, self.row);
        let at = |v| Spanned::new(row.span.clone(), v);
        let text_at = |v: &str| at(v.to_owned());
        RawScenario {
            name: text_at(&self.name),
            description: Some(text_at(&self.description)),
            expected: self.expected.map(text_at),
            seed: m.first_seed,
            backend: None,
            server: Some(Spanned::new(
                row.span.clone(),
                RawServer {
                    kind: text_at(row.server.name()),
                    nodes: row.nodes.map(|n| Spanned::new(row.span.clone(), n)),
                    persistence: None,
                    version: row.version.clone(),
                    record: None,
                },
            )),
            client: Some(Spanned::new(
                row.span.clone(),
                RawClientKind {
                    kind: Some(text_at(row.client_kind.name())),
                    discipline: row
                        .client
                        .get("discipline")
                        .and_then(toml::Value::as_str)
                        .map(text_at),
                },
            )),
            lock: RawLock {
                name: None,
                ttl_ms: Some(Spanned::new(row.span.clone(), row.ttl_ms)),
                lease_ms: row.lease_ms.map(|l| Spanned::new(row.span.clone(), l)),
                acquire_timeout_ms: Some(Spanned::new(row.span.clone(), self.acquire_timeout_ms)),
                retry_delay_ms: None,
                op_timeout_ms: Some(Spanned::new(row.span.clone(), self.op_timeout_ms)),
                watchdog: row.watchdog,
                renews: row.renews,
            },
            workload: RawWorkload {
                kind: text_at("fenced-write"),
                clients: Spanned::new(row.span.clone(), self.clients),
                duration_ms: Spanned::new(row.span.clone(), self.duration_ms as u64),
                hold_ms: Some(Spanned::new(row.span.clone(), self.hold_ms)),
                think_ms: Some(Spanned::new(row.span.clone(), m.think_ms)),
                locks: None,
            },
            resource: RawResource {
                mode: Some(text_at(self.mode)),
            },
            check: RawCheck {
                property: Some(text_at(self.property)),
                deadlock_ms: self
                    .deadlock_ms
                    .map(|ms| Spanned::new(row.span.clone(), ms)),
            },
            nemesis: Vec::new(),
        }
    }

    /// The row's `[client]` options, with its client kind, as a TOML `[client]` table, and the
    /// cell's `[resource]`: for the client kind to read as it reads a scenario's.
    pub(super) fn client_text(&self) -> String {
        let mut client = self.row.client.clone();
        client.insert("kind".into(), self.row.client_kind.name().into());
        // With the cell's resource: a client's use of the lock may depend on it (a documented
        // holder's token is checked only by a fenced resource).
        let resource = toml::Table::from_iter([("mode".to_owned(), self.mode.into())]);
        toml::to_string(&toml::Table::from_iter([
            ("client".to_owned(), toml::Value::Table(client)),
            ("resource".to_owned(), toml::Value::Table(resource)),
        ]))
        .expect("a TOML table prints")
    }

    /// The scenario file's text, from the same values as [`CellSettings::raw`] and `entry`,
    /// the column's fault entry resolved for the row; and the line of the `[[nemesis]]` entry
    /// in it (0 without one), which is the scenario's fault line.
    pub(super) fn text(&self, lease_from: &str, entry: Option<&RawEntry>) -> (String, usize) {
        let (m, row) = (self.m, self.row);
        let mut t = String::new();
        let _ = writeln!(
            t,
            "# Generated by `lockpick matrix` from {}: row {:?} × column {:?}.",
            m.path.display(),
            row.name,
            self.col.name
        );
        let _ = writeln!(
            t,
            "# Sizes relative to the row's lease ({} ms, from {lease_from}).",
            self.promise.lease_ms
        );
        let _ = writeln!(t, "name = {}", quote(&self.name));
        let _ = writeln!(t, "description = {}", quote(&self.description));
        if let Some(v) = self.expected {
            let _ = writeln!(t, "expected = {}", quote(v));
        }
        let _ = writeln!(t, "seed = {}", m.first_seed);
        let _ = writeln!(t, "\n[server]\nkind = {}", quote(row.server.name()));
        if let Some(n) = row.nodes {
            let _ = writeln!(t, "nodes = {n}");
        }
        if let Some(v) = &row.version {
            let _ = writeln!(t, "version = {}", quote(v.get_ref()));
        }
        let _ = writeln!(t, "\n[client]\nkind = {}", quote(row.client_kind.name()));
        for (k, v) in &row.client {
            let _ = writeln!(t, "{} = {}", quote(k), inline(v));
        }
        let _ = writeln!(
            t,
            "\n[lock]\nttl_ms = {}\nacquire_timeout_ms = {}\nop_timeout_ms = {}\nwatchdog = {}",
            row.ttl_ms, self.acquire_timeout_ms, self.op_timeout_ms, row.watchdog
        );
        if let Some(lease) = row.lease_ms {
            let _ = writeln!(t, "lease_ms = {lease}");
        }
        if row.renews {
            // The library's renewals are not in the history: exposure must know they happen.
            let _ = writeln!(t, "renews = true");
        }
        let _ = writeln!(
            t,
            "\n[workload]\nkind = \"fenced-write\"\nclients = {}\nduration_ms = {}\nhold_ms = {}\nthink_ms = {}",
            self.clients,
            self.duration_ms,
            range(self.hold_ms),
            range(m.think_ms)
        );
        let _ = writeln!(
            t,
            "\n[resource]\nmode = \"{}\"\n\n[check]\nproperty = \"{}\"",
            self.mode, self.property
        );
        if let Some(ms) = self.deadlock_ms {
            let _ = writeln!(t, "deadlock_ms = {ms}");
        }
        let mut fault_line = 0;
        if let Some(entry) = entry {
            t.push('\n');
            fault_line = t.lines().count() + 1;
            t.push_str("[[nemesis]]\n");
            let table = entry.get_ref();
            // `fault` first, for the reader.
            for (k, v) in table
                .iter()
                .filter(|(k, _)| *k == "fault")
                .chain(table.iter().filter(|(k, _)| *k != "fault"))
            {
                let _ = writeln!(t, "{k} = {}", inline(v.get_ref()));
            }
        }
        (t, fault_line)
    }
}

fn quote(s: &str) -> String {
    // A JSON string is a valid TOML basic string.
    serde_json::to_string(s).expect("strings serialize")
}

fn range(r: crate::scenario::MsRange) -> String {
    format!("[{}, {}]", r.min, r.max)
}

/// A TOML value on one line.
fn inline(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => quote(s),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => format!("{f:?}"),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Datetime(d) => d.to_string(),
        toml::Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(inline).collect();
            format!("[{}]", parts.join(", "))
        }
        toml::Value::Table(t) => {
            let parts: Vec<String> = t
                .iter()
                .map(|(k, v)| format!("{} = {}", quote(k), inline(v)))
                .collect();
            format!("{{ {} }}", parts.join(", "))
        }
    }
}
