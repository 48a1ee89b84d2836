//! `kill_all_children`, the emergency stop for SIGINT/SIGTERM. In its own test binary because
//! it shuts down spawning for the whole process.

mod processes_support;

use lockpick_harness::backends::redis::RedisOptions;
use lockpick_harness::processes::{kill_all_children, NodeState, ProcessError, Supervisor};
use processes_support::proc_state;

#[tokio::test]
async fn kill_all_children_kills_nodes_of_every_supervisor_and_refuses_new_ones() {
    let run_a = tempfile::tempdir().unwrap();
    let run_b = tempfile::tempdir().unwrap();
    let mut a = Supervisor::new(run_a.path());
    let mut b = Supervisor::new(run_b.path());
    let one = a.start_redis("one", RedisOptions::default()).await.unwrap();
    let two = b.start_redis("two", RedisOptions::default()).await.unwrap();
    b.pause("two").unwrap();

    kill_all_children();

    // It returns once the children are reaped: no process, no zombie.
    assert_eq!(proc_state(one.pid), None);
    assert_eq!(proc_state(two.pid), None);
    assert!(matches!(
        a.node("one").unwrap().state,
        NodeState::Crashed(_)
    ));
    let err = a.start_redis("three", RedisOptions::default()).await;
    assert!(
        matches!(err, Err(ProcessError::ShuttingDown { .. })),
        "{err:?}"
    );
    let err = b.restart("two").await;
    assert!(
        matches!(err, Err(ProcessError::ShuttingDown { .. })),
        "{err:?}"
    );
    kill_all_children(); // idempotent
}
