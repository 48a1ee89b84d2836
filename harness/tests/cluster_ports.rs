//! A cluster member whose port another process took before it bound it: the cluster start
//! reports it as retryable, stops every member, moves that attempt's folders aside, counts a
//! bind retry, and a new attempt with new ports in the same names starts.

use lockpick_harness::backends::etcd::EtcdOptions;
use lockpick_harness::processes::{reserve_port, MemberSpec, NodeKind, ProcessError, Supervisor};
use std::net::{SocketAddr, TcpListener};

fn member(name: &str) -> MemberSpec {
    let client = reserve_port().unwrap();
    let peer = reserve_port().unwrap();
    let peer_addr = SocketAddr::from(([127, 0, 0, 1], peer.port()));
    MemberSpec {
        name: name.to_owned(),
        kind: NodeKind::from(EtcdOptions::member(
            name,
            peer.port(),
            vec![(name.to_owned(), peer_addr)],
        )),
        client,
        other_ports: vec![peer],
    }
}

#[tokio::test]
async fn a_member_port_taken_by_another_process_is_retried_on_new_ports() {
    let run = tempfile::tempdir().unwrap();
    let mut sup = Supervisor::new(run.path());
    let mut taken = member("n1");
    // Another process binds the port after lockpick chose it, before etcd starts.
    taken.client.release();
    let thief = TcpListener::bind(("127.0.0.1", taken.client.port())).unwrap();
    let err = sup.start_cluster(vec![taken]).await.unwrap_err();
    assert!(
        matches!(err, ProcessError::ClusterPortTaken { .. }),
        "{err}"
    );
    assert_eq!(sup.bind_retries(), 1);
    assert!(run.path().join("nodes/n1.port-taken-1").is_dir());
    drop(thief);

    let started = sup.start_cluster(vec![member("n1")]).await.unwrap();
    assert_eq!(started.len(), 1);
    assert_eq!(sup.bind_retries(), 1);
}
