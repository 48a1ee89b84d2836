//! Clock faults (clock-jump, clock-rate, clock-strobe): setting nodes' libfaketime control
//! files, and putting them back to real time.

use super::act::{nodes_value, perform};
use super::plan::Plan;
use super::step::{json, Heal, OpenFaults, StepAction, StepFuture};
use super::targets::{TargetRule, Targets};
use super::Refusal;
use super::{AfterRun, FaultKind, FaultSpec, Verbs};
use super::{NemesisCtx, NemesisError};
use crate::processes::faketime::{control_file, set_clock, ClockSetting};
use crate::server::ServerKind;
use crate::vocab::MsRange;
use lockpick_checker::history::{Value, F};
use std::fmt;

/// Every clock fault's verbs: the clock moved, then reset.
pub(crate) const VERBS: Verbs = Verbs::nodes(F::Clock, Some(F::ClockReset));

/// The nemesis puts every clock it moved back to real time when the run ends, but a server
/// whose clock went ahead and came back keeps timers and timestamps taken on the moved clock,
/// which no reset of keys and sessions reaches: a MariaDB that had run a clock jump or rate
/// granted GET_LOCK to several clients at once on its next run (killing their connections),
/// while fresh servers under the same schedule were valid. So the servers start afresh.
pub(crate) const AFTER_RUN: AfterRun = AfterRun::Restart(
    "a server's clock was moved: timers and timestamps it took on the moved clock outlive the reset",
);

/// What a clock fault's spec says of itself; the rest of its [`FaultSpec`] (which servers take
/// it, that it needs servers lockpick started and moves clocks) is every clock fault's.
pub(crate) trait ClockSpec: fmt::Debug + Send + Sync {
    fn kind(&self) -> &'static dyn FaultKind;
    fn label(&self) -> String;
    /// As [`FaultSpec::steps_per_start`]: a move and a reset unless it moves more often.
    fn steps_per_start(&self, _duration_ms: u64) -> u64 {
        2
    }
    /// As [`FaultSpec::size_field`].
    fn size_field(&self) -> &'static str {
        "nemesis.every_ms"
    }
    fn schedule(&self, plan: &mut Plan<'_>, at: u64);
}

impl<T: ClockSpec> FaultSpec for T {
    fn kind(&self) -> &'static dyn FaultKind {
        ClockSpec::kind(self)
    }
    fn label(&self) -> String {
        ClockSpec::label(self)
    }
    fn cannot_run_on(&self, server: &dyn ServerKind) -> Option<Refusal> {
        let clock = server.capabilities().clock;
        super::unsupported(self.name(), server, "it moves clocks", clock)
    }
    fn needs_own_nodes(&self) -> Option<&'static str> {
        Some("it moves clocks through libfaketime, under which lockpick starts its own servers")
    }
    fn moves_clocks(&self) -> bool {
        true
    }
    fn steps_per_start(&self, duration_ms: u64) -> u64 {
        ClockSpec::steps_per_start(self, duration_ms)
    }
    fn size_field(&self) -> &'static str {
        ClockSpec::size_field(self)
    }
    fn schedule(&self, plan: &mut Plan<'_>, at: u64) {
        ClockSpec::schedule(self, plan, at)
    }
}

/// Sets the wall clock of `nodes`: `offset_ms` from real time, running at `rate_milli / 1000`
/// times real speed if set. `id` is the fault it belongs to (not in the schedule file).
#[derive(Debug)]
pub(crate) struct SetClock {
    pub nodes: Vec<String>,
    pub offset_ms: i64,
    pub rate_milli: Option<u64>,
    pub id: usize,
}

impl StepAction for SetClock {
    fn tag(&self) -> &'static str {
        "set-clock"
    }
    fn fields(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![
            ("nodes", json(&self.nodes)),
            ("offset_ms", json(self.offset_ms)),
            ("rate_milli", json(self.rate_milli)),
        ]
    }
    fn apply<'a>(&'a self, ctx: &'a NemesisCtx, open: &'a mut OpenFaults) -> StepFuture<'a> {
        let setting = ClockSetting {
            offset_ms: self.offset_ms,
            rate_milli: self.rate_milli,
        };
        let value = Value {
            nodes: self.nodes.clone(),
            offset_ms: Some(self.offset_ms),
            note: Some(format!("libfaketime {}", setting.spec())),
            ..Value::default()
        };
        open.open(self.id, Box::new(ClockHeal(self.nodes.clone())));
        Box::pin(perform(ctx, F::Clock, value, async move {
            set_clocks(ctx, &self.nodes, setting).await
        }))
    }
}

/// Puts the clocks of `nodes` back to real time, ending fault `id`.
#[derive(Debug)]
pub(crate) struct ResetClock {
    pub nodes: Vec<String>,
    pub id: usize,
}

impl StepAction for ResetClock {
    fn tag(&self) -> &'static str {
        "reset-clock"
    }
    fn fields(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![("nodes", json(&self.nodes))]
    }
    fn apply<'a>(&'a self, ctx: &'a NemesisCtx, open: &'a mut OpenFaults) -> StepFuture<'a> {
        Box::pin(async move {
            ClockHeal(self.nodes.clone()).heal(ctx).await?;
            // Left open on failure: the nemesis tries again at the end of the run.
            open.close(self.id);
            Ok(())
        })
    }
}

/// The heal of a clock fault: these nodes' clocks back to real time.
struct ClockHeal(Vec<String>);

impl Heal for ClockHeal {
    fn heal<'a>(&'a self, ctx: &'a NemesisCtx) -> StepFuture<'a> {
        Box::pin(perform(
            ctx,
            F::ClockReset,
            nodes_value(&self.0, None),
            set_clocks(ctx, &self.0, ClockSetting::REAL),
        ))
    }
}

/// Writes `setting` to the libfaketime control file of each node.
async fn set_clocks(
    ctx: &NemesisCtx,
    nodes: &[String],
    setting: ClockSetting,
) -> Result<(), NemesisError> {
    let sup = ctx.supervisor.lock().await;
    for node in nodes {
        let info = sup
            .node(node)
            .ok_or_else(|| NemesisError::UnknownNode { node: node.clone() })?;
        let path = control_file(&info.dir);
        set_clock(&path, setting).map_err(|source| NemesisError::Clock {
            node: node.clone(),
            path,
            source,
        })?;
    }
    Ok(())
}

/// What clock faults allow in `nodes`: any node or all, never the leader.
pub(crate) const TARGETS: TargetRule = TargetRule {
    members: false,
    all: true,
};

/// One clock setting on `targets` for `duration`, then real time again.
pub(crate) fn window(
    plan: &mut Plan<'_>,
    at: u64,
    targets: &Targets,
    duration: MsRange,
    offset_ms: i64,
    rate_milli: Option<u64>,
) {
    let id = plan.id();
    let nodes = plan.nodes(targets);
    let ms = plan.draw(duration);
    plan.window(
        at,
        ms,
        SetClock {
            nodes: nodes.clone(),
            offset_ms,
            rate_milli,
            id,
        },
        ResetClock { nodes, id },
    );
}
