//! One `[[nemesis]]` entry as the file holds it, and typed reads of its fields with errors
//! that name the file, the line and the field.

use super::targets::{TargetRule, Targets};
use super::FaultKind;
use crate::server::ServerKind;
use crate::vocab::rules::{MAX_CLOCK_OFFSET_MS, MAX_FAULT_MS};
use crate::vocab::PausePoint;
use crate::vocab::{MsRange, ScenarioError, Source};
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::ops::Range;
use toml::Spanned;

/// A `[[nemesis]]` table: every key with where its value is, for the fault to read.
pub type RawEntry = Spanned<BTreeMap<String, Spanned<toml::Value>>>;

/// A `[[nemesis]]` entry being read by the fault it names.
pub struct Entry<'a> {
    pub(crate) src: &'a Source<'a>,
    pub raw: &'a RawEntry,
    pub kind: &'static dyn FaultKind,
    /// `n1` … `nN`.
    pub node_names: &'a [String],
    pub clients: usize,
    pub server: &'a dyn ServerKind,
}

impl Entry<'_> {
    /// An error about `field` located at the entry's header.
    pub fn here(&self, field: &str, message: impl Into<String>) -> ScenarioError {
        self.src.error(self.raw.span(), field, message)
    }

    /// An error about `key` located at its value.
    pub fn at(&self, key: &str, message: impl Into<String>) -> ScenarioError {
        let span = self.span(key).unwrap_or_else(|| self.raw.span());
        self.src.error(span, &format!("nemesis.{key}"), message)
    }

    /// Where `key`'s value is, if it is set.
    pub fn span(&self, key: &str) -> Option<Range<usize>> {
        self.raw.get_ref().get(key).map(Spanned::span)
    }

    /// `key` read as a `T`, if it is set.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, ScenarioError> {
        let Some(value) = self.raw.get_ref().get(key) else {
            return Ok(None);
        };
        T::deserialize(value.get_ref().clone())
            .map(Some)
            .map_err(|e| self.at(key, e.message().trim().to_owned()))
    }

    /// `key`, which this fault needs; `what` says what it holds.
    pub fn need<T: DeserializeOwned>(&self, key: &str, what: &str) -> Result<T, ScenarioError> {
        self.get(key)?.ok_or_else(|| {
            self.here(
                &format!("nemesis.{key}"),
                format!("fault {:?} needs {key}{what}", self.kind.name()),
            )
        })
    }

    /// Checks `lo <= value <= hi`.
    pub fn in_range(&self, key: &str, v: u64, lo: u64, hi: u64) -> Result<u64, ScenarioError> {
        if (lo..=hi).contains(&v) {
            Ok(v)
        } else {
            Err(self.at(key, format!("{v} is out of range; allowed: {lo} to {hi}")))
        }
    }

    /// Checks that both ends of a millisecond range are within `lo..=hi`.
    pub fn ms_in_range(
        &self,
        key: &str,
        v: MsRange,
        lo: u64,
        hi: u64,
    ) -> Result<MsRange, ScenarioError> {
        if lo <= v.min && v.max <= hi {
            Ok(v)
        } else {
            Err(self.at(
                key,
                format!("{v} is out of range; allowed: {lo} to {hi} ms"),
            ))
        }
    }

    /// `duration_ms`, which every lasting fault needs.
    pub fn duration(&self) -> Result<MsRange, ScenarioError> {
        let d = self.need("duration_ms", " (milliseconds or [min, max])")?;
        self.ms_in_range("duration_ms", d, 0, MAX_FAULT_MS)
    }

    /// `offset_ms` of a clock fault: how far the clock jumps (negative: back).
    pub fn offset(&self) -> Result<i64, ScenarioError> {
        let o: i64 = self.need("offset_ms", " (milliseconds, negative: back)")?;
        if o.unsigned_abs() <= MAX_CLOCK_OFFSET_MS.unsigned_abs() {
            Ok(o)
        } else {
            Err(self.at(
                "offset_ms",
                format!(
                    "{o} is out of range; allowed: -{MAX_CLOCK_OFFSET_MS} to {MAX_CLOCK_OFFSET_MS} ms"
                ),
            ))
        }
    }

    /// `point` of a client fault (default: right after the acquire).
    pub fn point(&self) -> Result<PausePoint, ScenarioError> {
        let Some(name) = self.get::<String>("point")? else {
            return Ok(PausePoint::AfterAcquire);
        };
        PausePoint::ALL
            .iter()
            .copied()
            .find(|p| p.name() == name)
            .ok_or_else(|| {
                self.at(
                    "point",
                    format!(
                        "unknown value {name:?}; allowed: {}",
                        PausePoint::NAMES.join(", ")
                    ),
                )
            })
    }

    /// `client` of a client fault: its index, from 0; `None`: drawn with the seed.
    pub fn client(&self) -> Result<Option<usize>, ScenarioError> {
        self.get::<u64>("client")?
            .map(|c| {
                self.in_range("client", c, 0, self.clients as u64 - 1)
                    .map(|v| v as usize)
            })
            .transpose()
    }

    /// `nodes` of a fault on nodes: `"all"`, `"random-one"`, `"leader"` (if `rule` allows it)
    /// or a list of node names.
    pub fn targets(&self, rule: TargetRule) -> Result<Targets, ScenarioError> {
        let Some(nodes) = self.raw.get_ref().get("nodes") else {
            return Ok(if rule.members {
                Targets::RandomOne
            } else {
                Targets::All
            });
        };
        let bad = |msg: String| self.at("nodes", msg);
        let leader = if rule.members { "\"leader\", " } else { "" };
        let allowed = format!(
            "allowed: \"all\", \"random-one\", {leader}or a list of node names from {}",
            self.node_names.join(", ")
        );
        match nodes.get_ref() {
            // Cut off from nobody: an isolation of every member would change nothing.
            toml::Value::String(s) if s == "all" && !rule.all => Err(bad(format!(
                "\"all\" isolates every member from nobody; {allowed}"
            ))),
            toml::Value::String(s) if s == "all" => Ok(Targets::All),
            toml::Value::String(s) if s == "random-one" => Ok(Targets::RandomOne),
            toml::Value::String(s) if s == "leader" && rule.members => Ok(Targets::Leader),
            toml::Value::Array(items) => {
                let mut names: Vec<String> = Vec::new();
                for item in items {
                    match item.as_str() {
                        // Twice in one fault would crash (or pause) one node twice at once.
                        Some(n) if names.iter().any(|k| k == n) => {
                            return Err(bad(format!(
                                "node {item} is listed twice; each node at most once"
                            )))
                        }
                        Some(n) if self.node_names.iter().any(|k| k == n) => {
                            names.push(n.to_owned())
                        }
                        _ => return Err(bad(format!("unknown node {item}; {allowed}"))),
                    }
                }
                if names.is_empty() {
                    return Err(bad(format!("empty node list; {allowed}")));
                }
                Ok(Targets::Nodes(names))
            }
            other => Err(bad(format!("unknown value {other}; {allowed}"))),
        }
    }
}
