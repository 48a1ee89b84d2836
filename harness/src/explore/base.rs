//! The scenario an exploration starts from, and each drawn schedule written as an ordinary
//! scenario file on top of it: the base file's tables as they are, its `[[nemesis]]` replaced
//! by the drawn faults, `workload.clients` and `duration_ms` set, and the adapter's relative
//! paths made absolute so that the file runs from the store. The file is read back with the
//! scenario loader, so a run of the search is a run of a file `lockpick scenario` takes.

use super::draw::{drawing, Drawn, DrawnExt, Schedule, Space};
use super::workload::{BaseShape, Workload};
use crate::fault::FAULTS;
use crate::scenario::{parse_scenario, Scenario, ScenarioError};
use crate::vocab::PausePoint;
use std::path::{Path, PathBuf};

/// The scenario explored.
#[derive(Debug, Clone)]
pub struct Base {
    /// Its name, which the search's scenarios start with.
    pub name: String,
    /// Its file.
    pub path: PathBuf,
    /// Its tables without `[[nemesis]]`, adapter paths absolute.
    table: toml::Table,
    /// As loaded, with its own faults.
    pub scenario: Scenario,
}

pub use lockpick_store::explore::LeftOut;

/// `path` with `.` and `..` folded away, without touching the file system.
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => out.push(c),
        }
    }
    out
}

impl Base {
    /// The base from a scenario file's text; `path` is where it was read.
    pub fn new(path: &Path, text: &str) -> Result<Base, ScenarioError> {
        let scenario = parse_scenario(path, text)?;
        let mut table: toml::Table = toml::from_str(text).map_err(|e| {
            ScenarioError::Invalid(crate::vocab::Located {
                path: path.to_owned(),
                line: 1,
                field: "(file)".into(),
                message: e.to_string(),
            })
        })?;
        table.remove("nemesis");
        let folder = path.parent().unwrap_or(Path::new("."));
        let folder = std::path::absolute(folder).unwrap_or_else(|_| folder.to_owned());
        if let Some(toml::Value::Array(command)) = table
            .get_mut("client")
            .and_then(|c| c.as_table_mut())
            .and_then(|c| c.get_mut("command"))
        {
            for part in command.iter_mut() {
                if let toml::Value::String(s) = part {
                    if s.starts_with("./") || s.starts_with("../") {
                        *s = lexical(&folder.join(&*s)).display().to_string();
                    }
                }
            }
        }
        Ok(Base {
            name: scenario.name.clone(),
            path: path.to_owned(),
            table,
            scenario,
        })
    }

    /// The base of one matrix cell: its planned scenario, relative paths resolved against
    /// `folder` (the matrix file's), named `<matrix>-<row>`, or `<matrix>-<row>--<column>`
    /// when the column was asked for.
    pub fn of_cell(
        folder: &Path,
        matrix: &str,
        cell: &crate::matrix::CellPlan,
        with_column: bool,
    ) -> Result<Base, ScenarioError> {
        let mut base = Base::new(&folder.join("matrix.toml"), &cell.text)?;
        base.name = if with_column {
            format!("{matrix}-{}--{}", cell.row, cell.column)
        } else {
            format!("{matrix}-{}", cell.row)
        };
        Ok(base)
    }

    /// The lease the sizes are relative to: the lock's TTL.
    pub fn lease_ms(&self) -> u64 {
        self.scenario.lock.ttl_ms
    }

    /// The scenario file of `schedule`: `comment` lines first (each prefixed `# `), then
    /// the base's tables with `name`, `expected` and `seed`, and the schedule's faults.
    pub fn render(
        &self,
        schedule: &Schedule,
        name: &str,
        comment: &[String],
        expected: Option<&str>,
        seed: u64,
    ) -> String {
        let mut t = self.table.clone();
        t.insert("name".into(), name.into());
        match expected {
            Some(e) => t.insert("expected".into(), e.into()),
            None => t.remove("expected"),
        };
        t.insert("seed".into(), toml::Value::Integer(seed as i64));
        // The base's description told what the base found; this file is about its faults.
        if let Some(first) = comment.first() {
            t.insert("description".into(), first.clone().into());
        }
        let int = |v: u64| toml::Value::Integer(v.min(i64::MAX as u64) as i64);
        let range = |[lo, hi]: [u64; 2]| toml::Value::Array(vec![int(lo), int(hi)]);
        if let Some(w) = t.get_mut("workload").and_then(|w| w.as_table_mut()) {
            w.insert("clients".into(), (schedule.clients as i64).into());
            w.insert("duration_ms".into(), int(schedule.duration_ms));
            if let Some(shape) = &schedule.workload {
                w.insert("hold_ms".into(), range(shape.hold_ms));
                w.insert("think_ms".into(), range(shape.think_ms));
            }
        }
        if let Some(shape) = &schedule.workload {
            // Written only when it differs from the base's, so a file without a watchdog
            // keeps no `watchdog = false` line it never had.
            let lock = t
                .entry("lock")
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            if let Some(lock) = lock.as_table_mut() {
                if shape.watchdog || lock.contains_key("watchdog") {
                    lock.insert("watchdog".into(), shape.watchdog.into());
                }
            }
        }
        if !schedule.faults.is_empty() {
            let entries = schedule
                .faults
                .iter()
                .map(|d| toml::Value::Table(d.entry()))
                .collect();
            t.insert("nemesis".into(), toml::Value::Array(entries));
        }
        let mut out = String::new();
        for line in comment {
            for l in line.lines() {
                out.push_str("# ");
                out.push_str(l);
                out.push('\n');
            }
        }
        out.push_str(&toml::to_string(&t).expect("a TOML table prints"));
        out
    }

    /// The scenario's own workload shape.
    pub fn shape(&self) -> Workload {
        let w = &self.scenario.workload;
        Workload {
            hold_ms: [w.hold_ms.min, w.hold_ms.max],
            think_ms: [w.think_ms.min, w.think_ms.max],
            watchdog: self.scenario.lock.watchdog,
        }
    }

    /// What the draw may choose from: every fault (of `only`, if given) whose sample the
    /// scenario loader accepts on this lock's servers, and those left out with why; the
    /// workload's shape is drawn too unless `fixed_workload`.
    pub fn space(
        &self,
        only: Option<&[String]>,
        fixed_workload: bool,
    ) -> Result<(Space, Vec<LeftOut>), String> {
        let names: Vec<&'static str> = FAULTS.iter().map(|f| f.name()).collect();
        if let Some(only) = only {
            for o in only {
                if !names.contains(&o.as_str()) {
                    return Err(format!(
                        "unknown fault {o:?}; allowed: {}",
                        names.join(", ")
                    ));
                }
            }
        }
        let s = &self.scenario;
        let mut space = Space {
            faults: Vec::new(),
            nodes: s.node_names(),
            clients: s.workload.clients,
            lease_ms: self.lease_ms(),
            duration_ms: s.workload.duration_ms,
            pause_points: PausePoint::ALL.to_vec(),
            crash_points: PausePoint::ALL.to_vec(),
            // Samples of single faults below run with the scenario's own shape.
            shape: BaseShape {
                workload: self.shape(),
                clients: s.workload.clients,
                drawn: false,
            },
        };
        let mut left_out = Vec::new();
        for name in names {
            if only.is_some_and(|o| !o.iter().any(|x| x == name)) {
                left_out.push(LeftOut {
                    fault: name.into(),
                    reason: "not in --faults".into(),
                });
                continue;
            }
            // At a point every client kind takes: which points a client fault may use is
            // decided below, point by point, and must not decide here whether it is drawn.
            let sample = Space {
                faults: vec![name],
                pause_points: vec![PausePoint::AfterAcquire],
                crash_points: vec![PausePoint::AfterAcquire],
                ..space.clone()
            };
            let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(0);
            let drawn: Drawn = super::draw::draw(&mut rng, &sample).faults.remove(0);
            let schedule = Schedule {
                faults: vec![drawn],
                clients: space.clients,
                duration_ms: space.duration_ms,
                workload: None,
            };
            let text = self.render(&schedule, &self.name, &[], None, 0);
            match parse_scenario(&self.path, &text) {
                Ok(parsed) => match parsed.nemesis.faults.first() {
                    Some(f) => match f.spec.cannot_run_on(parsed.server) {
                        None => space.faults.push(name),
                        Some(why) => left_out.push(LeftOut {
                            fault: name.into(),
                            reason: why.why,
                        }),
                    },
                    None => left_out.push(LeftOut {
                        fault: name.into(),
                        reason: "left out by the loader".into(),
                    }),
                },
                Err(e) => left_out.push(LeftOut {
                    fault: name.into(),
                    reason: e.to_string(),
                }),
            }
        }
        // A client fault joins the draw at the points the loader takes for this client kind
        // only (`during-op` stops inside an adapter's requests; no crash is taken there).
        let template = space.clone();
        let client_faults: Vec<&'static str> = (space.faults.iter().copied())
            .filter(|f| drawing(f).is_some_and(|d| d.aim.at_client()))
            .collect();
        for kind in client_faults {
            let aim = drawing(kind).map(|d| d.aim);
            let Some(points) = space.points_mut(aim) else {
                continue;
            };
            let mut refused = Vec::new();
            points.retain(|&point| {
                let sample = Space {
                    faults: vec![kind],
                    pause_points: vec![point],
                    crash_points: vec![point],
                    ..template.clone()
                };
                let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(0);
                let schedule = super::draw::draw(&mut rng, &sample);
                let text = self.render(&schedule, &self.name, &[], None, 0);
                match parse_scenario(&self.path, &text) {
                    Ok(_) => true,
                    Err(e) => {
                        refused.push(format!("{}: {e}", point.name()));
                        false
                    }
                }
            });
            if points.is_empty() {
                space.faults.retain(|f| *f != kind);
                left_out.push(LeftOut {
                    fault: kind.into(),
                    reason: refused.join("; "),
                });
            }
        }
        if space.faults.is_empty() {
            return Err(format!(
                "explore {}: no fault can be drawn for this lock: {}",
                self.name,
                left_out
                    .iter()
                    .map(|l| format!("{} ({})", l.fault, l.reason))
                    .collect::<Vec<_>>()
                    .join("; ")
            ));
        }
        space.shape.drawn = !fixed_workload;
        Ok((space, left_out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOY: &str = r#"# a comment
name = "toy"
expected = "valid"
seed = 1
[server]
kind = "redis"
[client]
kind = "process"
command = ["python3", "../clients/python/toys/get_then_del.py"]
[lock]
ttl_ms = 1000
[workload]
kind = "fenced-write"
clients = 4
duration_ms = 5000
[[nemesis]]
fault = "client-pause"
point = "before-write"
duration_ms = 100
"#;

    #[test]
    fn a_schedule_renders_into_a_file_the_loader_reads_back_with_those_faults() {
        let base = Base::new(Path::new("/x/scenarios/toy.toml"), TOY).unwrap();
        assert_eq!(base.lease_ms(), 1000);
        let (space, left_out) = base.space(None, false).unwrap();
        assert!(space.faults.contains(&"latency"), "{left_out:?}");
        assert!(space.faults.contains(&"client-pause"));
        assert!(
            left_out.iter().any(|l| l.fault == "failover"),
            "one redis-server has no replica: {left_out:?}"
        );
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(9);
        for _ in 0..30 {
            let s = super::super::draw::draw(&mut rng, &space);
            let text = base.render(&s, "toy-explore", &["why".into()], Some("invalid"), 7);
            assert!(text.starts_with("# why\n"), "{text}");
            assert!(text.contains("description = \"why\""), "{text}");
            assert!(
                text.contains("/x/clients/python/toys/get_then_del.py"),
                "{text}"
            );
            let back = parse_scenario(Path::new("/store/e/r.toml"), &text)
                .unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert_eq!(back.nemesis.faults.len(), s.faults.len(), "{text}");
            assert_eq!(back.seed, 7);
            assert_eq!(back.name, "toy-explore");
            // The drawn shape is the file's: holds, thinks, clients, watchdog.
            let shape = s.workload.as_ref().expect("a drawn schedule has a shape");
            assert_eq!(
                [back.workload.hold_ms.min, back.workload.hold_ms.max],
                shape.hold_ms,
                "{text}"
            );
            assert_eq!(
                [back.workload.think_ms.min, back.workload.think_ms.max],
                shape.think_ms
            );
            assert_eq!(back.workload.clients, s.clients);
            assert_eq!(back.lock.watchdog, shape.watchdog);
            assert!(!shape.watchdog, "the base does not renew: never drawn");
        }
        let (_, left) = base.space(Some(&["latency".into()]), false).unwrap();
        assert!(left
            .iter()
            .any(|l| l.fault == "client-pause" && l.reason == "not in --faults"));
        let err = base.space(Some(&["nope".into()]), false).unwrap_err();
        assert!(
            err.contains("unknown fault \"nope\"; allowed: client-pause"),
            "{err}"
        );
    }

    #[test]
    fn a_built_in_client_is_paused_at_its_loops_points_and_never_inside_a_request() {
        let text = r#"
name = "builtin"
[server]
kind = "redis"
[client]
kind = "redis-lock"
[lock]
ttl_ms = 300
[workload]
kind = "fenced-write"
clients = 4
duration_ms = 2000
"#;
        let base = Base::new(Path::new("/x/scenarios/builtin.toml"), text).unwrap();
        // Whichever point the sample of the fault happens to draw, the pause is drawn at the
        // points this client takes.
        let (space, left_out) = base.space(Some(&["client-pause".into()]), true).unwrap();
        assert_eq!(space.faults, ["client-pause"], "{left_out:?}");
        assert_eq!(
            space.pause_points,
            [
                PausePoint::AfterAcquire,
                PausePoint::BeforeWrite,
                PausePoint::BeforeRelease
            ]
        );
    }
}
