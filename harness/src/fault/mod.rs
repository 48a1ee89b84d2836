//! Faults, one module each, as a Jepsen nemesis package: a fault's `[[nemesis]]` parameters,
//! the servers that can take it, the steps it adds to a schedule, how each step is carried out
//! and healed, its history verb, its label and how explore draws it all live in its module. Adding a fault is one new
//! module plus one line in [`FAULTS`].

mod act;
mod budget;
mod clock;
mod ctx;
mod drawing;
mod entry;
mod error;
mod links;
mod member_fault;
mod members;
mod plan;
mod step;
mod targets;

mod client_crash;
mod client_pause;
mod clock_jump;
mod clock_rate;
mod clock_strobe;
mod failover;
mod isolate;
mod latency;
mod node_crash;
mod node_pause;
mod partition;

pub use crate::vocab::PausePoint;
pub use budget::{check_schedule_size, max_steps};
pub use ctx::NemesisCtx;
pub use drawing::{Aim, Drawing, Sign};
pub use entry::{Entry, RawEntry};
pub use error::NemesisError;
pub use members::Members;
pub use plan::Plan;
pub use step::{Heal, OpenFaults, Step, StepAction, StepFuture};
pub use targets::Targets;

use crate::server::{ServerKind, Support};
use crate::vocab::MsRange;
use crate::vocab::ScenarioError;
use lockpick_checker::history::F;
use std::fmt;
use std::sync::Arc;

/// Every fault a scenario can name, one line each.
pub static FAULTS: &[&dyn FaultKind] = &[
    &client_pause::ClientPause,
    &client_crash::ClientCrash,
    &latency::Latency,
    &partition::Partition,
    &isolate::Isolate,
    &node_pause::NodePause,
    &node_crash::NodeCrash,
    &clock_jump::ClockJump,
    &clock_rate::ClockRate,
    &clock_strobe::ClockStrobe,
    &failover::Failover,
];

/// The fault named `name`, if there is one.
pub fn find_fault(name: &str) -> Option<&'static dyn FaultKind> {
    FAULTS.iter().copied().find(|f| f.name() == name)
}

/// The names of every fault, in registration order.
pub fn fault_names() -> Vec<&'static str> {
    FAULTS.iter().map(|f| f.name()).collect()
}

/// A kind of fault: its name and the `[[nemesis]]` fields it reads.
pub trait FaultKind: Sync {
    /// The name as a scenario file writes it (`fault = "…"`).
    fn name(&self) -> &'static str;
    /// Its own fields, beside `fault`, `at_ms`, `every_ms` and `count`, which every fault has.
    fn fields(&self) -> &'static [&'static str];
    /// Reads its fields from a `[[nemesis]]` entry, with errors naming file, line and field.
    fn parse(&self, entry: &Entry<'_>) -> Result<Arc<dyn FaultSpec>, ScenarioError>;
    /// The history verbs it records, whatever its fields.
    fn verbs(&self) -> Verbs;
    /// The rule by which the checker judges whether an instance of it opened a window for a
    /// violation (docs/exposure.md): a run none of whose instances did is not exposed.
    fn exposure(&self) -> lockpick_checker::exposure::Rule;
    /// How explore draws it and writes the drawn numbers into its fields.
    fn drawing(&self) -> Drawing;
    /// A `[[nemesis]]` body it takes and a backend that can take it: what its tests (every
    /// fault parses, schedules within its bound, records its verbs) run it with.
    fn example(&self) -> Example;
    /// What a run with it leaves of the servers once it is healed: whether the next run may
    /// keep them (reset) or must start its own. Every fault decides.
    fn after_run(&self) -> AfterRun;
}

/// A fault's own example ([`FaultKind::example`]).
#[derive(Debug, Clone, Copy)]
pub struct Example {
    /// A lock preset (`redlock`, `etcd`), or `server-kind/client-kind`.
    pub backend: &'static str,
    /// Its fields beside `fault`, `at_ms` and `every_ms`/`count`, one per line.
    pub body: &'static str,
}

/// Whether servers a fault hit can serve the next run after a reset ([`FaultKind::after_run`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterRun {
    /// Once healed, the servers differ from fresh ones only in what a reset clears (keys,
    /// sessions, proxies' toxics).
    Reset,
    /// Once healed, some members may still be catching up or voting (they were stopped, cut
    /// off, or killed and restarted); why, in words. The servers are kept only by a kind that
    /// can wait until its members agree again ([`crate::server::Reset::settle`]), and the next
    /// run's reset waits for that first; any other kind starts afresh, as after
    /// [`AfterRun::Restart`].
    Settle(&'static str),
    /// The fault changed the servers in a way no reset undoes; why, in words.
    Restart(&'static str),
}

/// The history verbs a fault records and what it aims them at, declared once per fault: the
/// checker's fault table ([`lockpick_checker::fault_verbs`]) says how the windows they open
/// end, and the tests check that the two agree and that a fault records no other verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verbs {
    /// Recorded when the fault starts.
    pub opens: F,
    /// Recorded when it is healed; `None` for a fault nothing heals.
    pub heals: Option<F>,
    /// Whether it is aimed at nodes or at a client.
    pub target: lockpick_checker::fault_verbs::Target,
}

impl Verbs {
    /// A fault on nodes, opened by `opens` and healed by `heals`.
    pub const fn nodes(opens: F, heals: Option<F>) -> Verbs {
        Verbs {
            opens,
            heals,
            target: lockpick_checker::fault_verbs::Target::Nodes,
        }
    }

    /// A fault on a client, opened by `opens` and healed by `heals`.
    pub const fn client(opens: F, heals: Option<F>) -> Verbs {
        Verbs {
            opens,
            heals,
            target: lockpick_checker::fault_verbs::Target::Client,
        }
    }
}

/// One fault as a scenario configured it.
pub trait FaultSpec: fmt::Debug + Send + Sync {
    fn kind(&self) -> &'static dyn FaultKind;
    /// The fault's label in comparisons and reports: its name with what distinguishes it.
    fn label(&self) -> String;
    /// The nemesis verb under which the history records its start.
    fn verb(&self) -> F {
        self.kind().verbs().opens
    }
    /// Why a server of kind `server` cannot take it (from the server's capabilities), or
    /// `None` when it can.
    fn cannot_run_on(&self, server: &dyn ServerKind) -> Option<Refusal>;
    /// Why it cannot run on servers lockpick did not start (`--external`), if it cannot.
    fn needs_own_nodes(&self) -> Option<&'static str>;
    /// Whether it moves nodes' clocks, so the nodes must run under libfaketime.
    fn moves_clocks(&self) -> bool;
    /// What a run with it leaves of the servers: its kind's [`FaultKind::after_run`] unless
    /// its fields change that (a network fault on peer links restarts).
    fn after_run(&self) -> AfterRun {
        self.kind().after_run()
    }
    /// The client it is aimed at, if it names one (client faults).
    fn aimed_at_client(&self) -> Option<usize> {
        None
    }
    /// Whether it stops clients inside their requests (`client-pause` at `during-op`), which
    /// only an adapter process can take.
    fn inside_requests(&self) -> bool {
        false
    }
    /// The longest client pause it can arm, in milliseconds, if it pauses clients.
    fn max_client_pause_ms(&self) -> Option<u64> {
        None
    }
    /// An upper bound on the steps one start adds to a schedule of `duration_ms`.
    fn steps_per_start(&self, duration_ms: u64) -> u64;
    /// Pushes the steps of one start at `at` ms, drawing what it draws from the plan's seed.
    fn schedule(&self, plan: &mut Plan<'_>, at: u64);
    /// The field to change when a fault that does not recur takes too many steps.
    fn size_field(&self) -> &'static str {
        "nemesis.every_ms"
    }
    fn name(&self) -> &'static str {
        self.kind().name()
    }
}

/// One scheduled fault, possibly recurring.
#[derive(Debug, Clone)]
pub struct Fault {
    pub spec: Arc<dyn FaultSpec>,
    /// When it first starts, from the start of the workload.
    pub at_ms: MsRange,
    /// If set, it starts again this long after each start.
    pub every_ms: Option<MsRange>,
    /// How many times at most (default: once, or until the run ends when `every_ms` is set).
    pub count: Option<u32>,
    /// Line of the `[[nemesis]]` table, for messages.
    pub line: usize,
}

/// Why a fault cannot run on a server, and whether only this machine is the reason (the
/// lock could meet the fault, lockpick cannot bring it here): a matrix shows the first as
/// `n/a` and the second as `not injectable here`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Refusal {
    pub why: String,
    pub not_here: bool,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.why)
    }
}

/// The refusal of a fault `name` that a server cannot take because it lacks `support`
/// (`what` says what the fault needs it for), or `None` when it has it.
pub(crate) fn unsupported(
    name: &str,
    server: &dyn ServerKind,
    what: &str,
    support: Support,
) -> Option<Refusal> {
    support.err().map(|cannot| Refusal {
        why: format!(
            "{name} cannot run on server {:?} ({what}): {cannot}",
            server.name()
        ),
        not_here: cannot.not_here(),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::scenario::parse_scenario;
    use std::path::Path;

    #[test]
    fn faults_that_promote_or_move_the_clock_restart_the_servers_and_that_kill_or_stop_members_settle_them(
    ) {
        use lockpick_checker::fault_verbs::Target;
        for f in FAULTS {
            let verbs = f.verbs();
            let on_nodes = verbs.target == Target::Nodes;
            // A moved clock leaves timers a reset does not reach (see `clock::AFTER_RUN`); a
            // promoted replica stays the primary.
            if on_nodes && matches!(verbs.opens, F::Failover | F::Clock) {
                assert!(
                    matches!(f.after_run(), AfterRun::Restart(_)),
                    "{} changes the servers past any reset but lets the next run reuse them",
                    f.name()
                );
            }
            // A killed, stopped or cut member may still be catching up when the run ends.
            let stops_or_cuts_members =
                matches!(verbs.opens, F::Crash | F::Pause) || f.name() == "isolate";
            if on_nodes && stops_or_cuts_members {
                assert!(
                    matches!(f.after_run(), AfterRun::Settle(_)),
                    "{} leaves members behind but does not wait for them: {:?}",
                    f.name(),
                    f.after_run()
                );
            }
            if verbs.target == Target::Client {
                assert_eq!(f.after_run(), AfterRun::Reset, "{}", f.name());
            }
        }
    }

    #[test]
    fn network_faults_on_client_links_reset_and_on_peer_links_settle() {
        for fault in ["partition", "latency"] {
            let extra = if fault == "latency" {
                "\nlatency_ms = 100"
            } else {
                ""
            };
            let clients = scenario(
                "etcd",
                fault,
                &format!("nodes = [\"n1\"]\nduration_ms = 300{extra}"),
            )
            .unwrap();
            assert_eq!(clients.nemesis.faults[0].spec.after_run(), AfterRun::Reset);
            let peers = scenario(
                "etcd",
                fault,
                &format!("links = [\"n1-to-n2\"]\nduration_ms = 300{extra}"),
            )
            .unwrap();
            assert!(
                matches!(
                    peers.nemesis.faults[0].spec.after_run(),
                    AfterRun::Settle(_)
                ),
                "{fault} on peer links"
            );
        }
    }

    /// A valid `[[nemesis]]` body of fault `name` and the backend that can take it, as the
    /// fault declares them.
    pub(crate) fn sample(name: &str) -> (&'static str, &'static str) {
        let example = find_fault(name).expect("a registered fault").example();
        (example.backend, example.body)
    }

    /// Faults that happen once and refuse `every_ms`.
    fn once(fault: &str) -> bool {
        find_fault(fault).is_some_and(|f| f.drawing().aim == Aim::Once)
    }

    pub(crate) fn scenario(
        server: &str,
        fault: &str,
        body: &str,
    ) -> Result<crate::scenario::Scenario, String> {
        // `server/client`, or a lock preset for the `[backend]` shorthand; both take 2 lines.
        let backend = match server.split_once('/') {
            Some((server, client)) => {
                format!("server = {{ kind = \"{server}\" }}\nclient = {{ kind = \"{client}\" }}")
            }
            None => format!("[backend]\nkind = \"{server}\""),
        };
        // A fault that happens once (failover) refuses every_ms; the line stays, for the
        // line numbers below.
        let every = if once(fault) {
            "count = 1"
        } else {
            "every_ms = [400, 900]"
        };
        let text = format!(
            "name = \"t\"\n{backend}\n[workload]\nkind = \"fenced-write\"\nclients = 3\nduration_ms = 5000\n[[nemesis]]\nfault = \"{fault}\"\nat_ms = [0, 200]\n{every}\n{body}\n"
        );
        parse_scenario(Path::new("t.toml"), &text).map_err(|e| e.to_string())
    }

    /// The code outside `fault/` (and `proxy/`) that is not test code: each file up to its test
    /// module.
    fn code_outside_faults() -> Vec<(std::path::PathBuf, String)> {
        fn walk(dir: &Path, out: &mut Vec<(std::path::PathBuf, String)>) {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    // The faults' own modules, and the proxy, whose words are Toxiproxy's
                    // (its toxic types `latency`, `timeout`), not lockpick's faults.
                    if !path.ends_with("fault") && !path.ends_with("proxy") {
                        walk(&path, out);
                    }
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    let code = match text.find("#[cfg(test)]") {
                        Some(i) => text[..i].to_owned(),
                        None => text,
                    };
                    out.push((path, code));
                }
            }
        }
        let mut out = Vec::new();
        walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut out);
        out
    }

    #[test]
    fn no_code_outside_a_faults_module_decides_by_its_name() {
        // What explore, the matrix and the runner do with a fault is its declaration's
        // (`FaultKind`, `FaultSpec`, `Drawing`): a match arm or a comparison on a fault's name
        // elsewhere is a place a new fault would have to be added by hand.
        let files = code_outside_faults();
        assert!(files.len() > 50, "read {} files", files.len());
        for f in FAULTS {
            let quoted = format!("\"{}\"", f.name());
            let forms = [
                format!("{quoted} =>"),
                format!("{quoted} |"),
                format!("| {quoted}"),
                format!("== {quoted}"),
                format!("!= {quoted}"),
                format!("contains(&{quoted})"),
            ];
            for (path, code) in &files {
                for form in &forms {
                    assert!(
                        !code.contains(form.as_str()),
                        "{} decides by the name of fault {:?} ({form}): declare it in the fault's module instead",
                        path.display(),
                        f.name()
                    );
                }
            }
        }
    }

    #[test]
    fn every_fault_is_listed_in_docs_exposure_under_the_rule_it_declares() {
        // The docs' table has a row per rule naming its faults; a fault whose rule changes, or
        // a new fault, must move or join its row, so the page cannot go stale.
        let docs = include_str!("../../../docs/exposure.md");
        for f in FAULTS {
            let rule = f.exposure().name();
            let row = docs
                .lines()
                .find(|l| l.starts_with(&format!("| `{rule}` |")))
                .unwrap_or_else(|| panic!("docs/exposure.md has no row for {rule}"));
            let faults = row.split('|').nth(2).unwrap_or("");
            assert!(
                faults
                    .split(',')
                    .any(|x| x.split_whitespace().next() == Some(f.name())),
                "docs/exposure.md's row for {rule} does not name {}: {row}",
                f.name()
            );
        }
    }

    #[test]
    fn fault_names_are_unique_and_fields_are_their_own() {
        let names = fault_names();
        for (i, n) in names.iter().enumerate() {
            assert!(!names[..i].contains(n), "{n} registered twice");
            assert_eq!(find_fault(n).map(|f| f.name()), Some(*n));
        }
        for f in FAULTS {
            for field in f.fields() {
                assert!(
                    !["fault", "at_ms", "every_ms", "count"].contains(field),
                    "{}: {field} is common to every fault",
                    f.name()
                );
            }
        }
    }

    #[test]
    fn every_fault_declares_verbs_the_checker_table_pairs_as_opener_and_healer() {
        use lockpick_checker::fault_verbs::{opener, role, Ends, Role};
        for f in FAULTS {
            let v = f.verbs();
            let o = opener(v.opens)
                .unwrap_or_else(|| panic!("{}: {} opens no window", f.name(), v.opens));
            match (o.ends(v.target), v.heals) {
                (Ends::HealedBy(closer), Some(heal)) => assert_eq!(
                    closer,
                    heal,
                    "{}: the table heals {} on {:?} with {closer}",
                    f.name(),
                    v.opens,
                    v.target
                ),
                (Ends::Instant | Ends::Never, None) => {}
                (ends, heals) => panic!(
                    "{}: declares healer {heals:?}, the table says {} on {:?} ends {ends:?}",
                    f.name(),
                    v.opens,
                    v.target
                ),
            }
            if let Some(heal) = v.heals {
                assert_eq!(role(heal), Role::Closes, "{}: {heal}", f.name());
            }
        }
    }

    #[test]
    fn a_field_of_another_fault_or_of_none_is_refused_with_what_is_allowed() {
        for f in FAULTS {
            let (server, body) = sample(f.name());
            let other = FAULTS
                .iter()
                .flat_map(|g| g.fields())
                .find(|field| !f.fields().contains(field))
                .expect("some field is not this fault's");
            let err = scenario(server, f.name(), &format!("{body}\n{other} = 1")).unwrap_err();
            assert!(
                err.contains(&format!(
                    "field `nemesis.{other}`: not allowed for fault {:?}; allowed here: {}",
                    f.name(),
                    ["at_ms", "every_ms", "count"]
                        .iter()
                        .chain(f.fields())
                        .copied()
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
                "{err}"
            );
            let err = scenario(server, f.name(), &format!("{body}\nbogus = 1")).unwrap_err();
            // The key's own line: 11 lines before the body, then the body (an empty body
            // still takes its line).
            let line = 12 + body.split('\n').count();
            assert!(
                err.contains(&format!(
                    ":{line}: field `nemesis.bogus`: unknown field `bogus`"
                )),
                "{err}"
            );
        }
        let err = scenario("redis", "nope", "").unwrap_err();
        assert!(
            err.contains(&format!(
                "unknown fault \"nope\"; allowed: {}",
                fault_names().join(", ")
            )),
            "{err}"
        );
    }
}
