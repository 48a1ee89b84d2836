//! Every fault records in the history exactly the verbs it declares ([`crate::fault::Verbs`]): each
//! step of its schedule, and each heal it leaves for the end of the run, is carried out and
//! what the history got is compared with the declaration.

use super::{build_schedule, NemesisCtx};
use crate::client::{Interrupt, PausePoints};
use crate::cluster::ClusterNet;
use crate::fault::tests::{sample, scenario};
use crate::fault::{OpenFaults, PausePoint, FAULTS};
use crate::processes::Supervisor;
use crate::proxy::FaultProxies;
use crate::recorder::Recorder;
use lockpick_checker::history::{read_history, Process, F};
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

const CLIENTS: usize = 3;

/// What a client records when it takes `interrupt` (`Driver::interrupt`, `client/driver.rs`):
/// the nemesis acts on a client only by arming it.
fn client_records(interrupt: Interrupt) -> &'static [F] {
    match interrupt {
        Interrupt::Pause { .. } | Interrupt::PauseInside(_) => &[F::Pause, F::Resume],
        Interrupt::Crash => &[F::Crash],
    }
}

/// A context in which every act fails at once: nothing answers at the Toxiproxy API (port 1),
/// the supervisor has no node, and the cluster's members have no link proxies. A failed act is
/// recorded all the same (with its error), under the verb a working one records.
fn failing_ctx(history: &Path) -> NemesisCtx {
    let api = SocketAddr::from(([127, 0, 0, 1], 1));
    let proxies = FaultProxies::new(api).expect("a client thread");
    let dir = history.parent().expect("a folder");
    NemesisCtx {
        cluster: Some(Arc::new(ClusterNet::without_links(
            &["n1", "n2", "n3"],
            &proxies,
        ))),
        proxies,
        recorder: Arc::new(Recorder::create(history).expect("a history file")),
        points: (0..CLIENTS).map(|_| Arc::default()).collect(),
        start: Instant::now(),
        stop: CancellationToken::new(),
        supervisor: Arc::new(tokio::sync::Mutex::new(Supervisor::new(dir))),
    }
}

/// Takes whatever a step armed on the clients.
fn take_armed(points: &[Arc<PausePoints>]) -> Vec<Interrupt> {
    points
        .iter()
        .flat_map(|p| PausePoint::ALL.iter().filter_map(|&at| p.take(at)))
        .collect()
}

#[tokio::test]
async fn every_fault_records_exactly_the_verbs_it_declares() {
    for f in FAULTS {
        let (server, body) = sample(f.name());
        // No server runs here to say who leads: aim a leader fault at a named member.
        let body = body.replace("\"leader\"", "[\"n1\"]");
        let s = scenario(server, f.name(), &body).unwrap_or_else(|e| panic!("{e}"));
        let dir = tempfile::tempdir().unwrap();
        let history = dir.path().join("history.jsonl");
        let ctx = failing_ctx(&history);
        let mut open = OpenFaults::default();
        let mut recorded = BTreeSet::new();
        for step in build_schedule(&s, 1, 5000, CLIENTS) {
            let _failed = step.action.apply(&ctx, &mut open).await;
            for interrupt in take_armed(&ctx.points) {
                recorded.extend(client_records(interrupt).iter().map(|f| f.name()));
            }
        }
        for heal in open.take_all() {
            let _failed = heal.heal(&ctx).await;
        }
        ctx.recorder.finish().unwrap();
        let events = read_history(&history).unwrap_or_else(|e| panic!("{}: {e}", f.name()));
        for e in &events {
            assert_eq!(e.process, Process::Nemesis, "{}: {e:?}", f.name());
            recorded.insert(e.f.name());
        }
        let v = f.verbs();
        let declared: BTreeSet<&str> = [Some(v.opens), v.heals]
            .into_iter()
            .flatten()
            .map(|f| f.name())
            .collect();
        assert_eq!(recorded, declared, "{}", f.name());
    }
}
