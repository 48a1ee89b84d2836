//! Faults through the facade on real sockets: latency, partition, down and heal, measured
//! with round trips through a proxy to a small echo server.

mod proxy_support;

use lockpick_harness::proxy::{EmbeddedToxiproxy, FaultProxies};
use proxy_support::{echo_server, OnFin, Setup};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A proxy named `name` in front of an echo server.
async fn setup(name: &str) -> Setup {
    proxy_support::setup(name, OnFin::KeepOpen, None).await
}

/// One 5-byte round trip; `None` if no full answer came within `limit`.
async fn round_trip(stream: &mut TcpStream, msg: &[u8; 5], limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    stream.write_all(msg).await.ok()?;
    let mut buf = [0u8; 5];
    match tokio::time::timeout(limit, stream.read_exact(&mut buf)).await {
        Ok(Ok(_)) => {
            assert_eq!(&buf, msg, "the echo answers what was sent");
            Some(start.elapsed())
        }
        _ => None,
    }
}

/// A new connection to `addr`, asserted to carry one round trip of `msg` within 2 s.
async fn answering(addr: SocketAddr, msg: &[u8; 5]) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    assert!(round_trip(&mut stream, msg, Duration::from_secs(2))
        .await
        .is_some());
    stream
}

/// Median of a few round trips, to keep one scheduling hiccup out of the figure.
async fn median_rtt(stream: &mut TcpStream) -> Duration {
    let mut samples = Vec::new();
    for _ in 0..5 {
        samples.push(
            round_trip(stream, b"ping!", Duration::from_secs(5))
                .await
                .expect("answer"),
        );
    }
    samples.sort();
    samples[2]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latency_delays_round_trips_on_new_and_open_connections() {
    let s = setup("n1").await;
    let mut open = TcpStream::connect(s.listen).await.unwrap();
    let base = median_rtt(&mut open).await;

    s.proxies.slow("n1", 200, 0).await.unwrap();
    let mut fresh = TcpStream::connect(s.listen).await.unwrap();
    let slow_fresh = median_rtt(&mut fresh).await;
    let slow_open = median_rtt(&mut open).await;
    // 200 ms each way: a round trip grows by about 400 ms.
    for (what, rtt) in [("new", slow_fresh), ("open", slow_open)] {
        assert!(
            rtt >= base + Duration::from_millis(380) && rtt < Duration::from_millis(1500),
            "{what} connection: {rtt:?} with latency 200 ms each way, {base:?} without"
        );
    }

    // A changed latency applies to the open connection as well.
    s.proxies.slow("n1", 50, 0).await.unwrap();
    let changed = median_rtt(&mut open).await;
    assert!(
        changed >= Duration::from_millis(95) && changed < Duration::from_millis(300),
        "open connection after latency 200 -> 50 ms: {changed:?}"
    );

    s.proxies.heal("n1").await.unwrap();
    let healed = median_rtt(&mut open).await;
    assert!(healed < Duration::from_millis(90), "after heal: {healed:?}");
    eprintln!(
        "round trips: no toxic {base:?}; latency 200 ms each way: new connection {slow_fresh:?}, \
         open connection {slow_open:?}; changed to 50 ms: {changed:?}; healed: {healed:?}"
    );
    s.server.shutdown().await;
}

/// True when the peer closed `stream` (EOF or reset) within `limit`.
async fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    let mut buf = [0u8; 16];
    matches!(
        tokio::time::timeout(limit, stream.read(&mut buf)).await,
        Ok(Ok(0) | Err(_))
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partition_blackholes_until_heal() {
    let s = setup("n1").await;
    let mut open = answering(s.listen, b"hello").await;

    s.proxies.partition("n1").await.unwrap();
    let limit = Duration::from_millis(500);
    assert_eq!(
        round_trip(&mut open, b"lost1", limit).await,
        None,
        "an open connection gets no answer"
    );
    let mut during = TcpStream::connect(s.listen).await.unwrap();
    assert_eq!(
        round_trip(&mut during, b"lost2", limit).await,
        None,
        "a new connection gets no answer"
    );
    // Partitioning twice is harmless, and the link stays cut for longer than one probe.
    s.proxies.partition("n1").await.unwrap();
    assert_eq!(round_trip(&mut open, b"lost3", limit).await, None);

    s.proxies.heal("n1").await.unwrap();
    // As in Toxiproxy, the partition dropped data, so healing closes the connections it
    // was on rather than let them carry a corrupt stream.
    assert!(
        closed_within(&mut open, limit).await,
        "open connection closed on heal"
    );
    assert!(closed_within(&mut during, limit).await);
    let _after = answering(s.listen, b"again").await;
    s.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn down_refuses_and_closes_until_heal() {
    let s = setup("n1").await;
    let mut open = answering(s.listen, b"hello").await;

    s.proxies.down("n1").await.unwrap();
    let err = TcpStream::connect(s.listen).await.unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::ConnectionRefused);
    assert!(
        closed_within(&mut open, Duration::from_millis(500)).await,
        "the open connection is closed promptly"
    );

    s.proxies.heal("n1").await.unwrap();
    let _after = answering(s.listen, b"again").await;
    s.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_heals_every_proxy_and_shutdown_closes_them() {
    let echo = echo_server(OnFin::KeepOpen).await;
    let server = EmbeddedToxiproxy::start("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let proxies = FaultProxies::new(server.api_addr()).expect("client thread");
    let a = proxies.create("a", echo.addr).await.unwrap();
    let b = proxies.create("b", echo.addr).await.unwrap();
    proxies.partition("a").await.unwrap();
    proxies.down("b").await.unwrap();
    proxies.reset().await.unwrap();
    for addr in [a, b] {
        let _stream = answering(addr, b"reset").await;
    }
    let mut open = TcpStream::connect(a).await.unwrap();
    server.shutdown().await;
    assert!(
        TcpStream::connect(a).await.is_err(),
        "shutdown stops the proxies"
    );
    assert!(
        closed_within(&mut open, Duration::from_millis(500)).await,
        "shutdown closes open connections"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_name_the_proxy_and_operation() {
    let s = setup("n1").await;
    let err = s.proxies.partition("ghost").await.unwrap_err().to_string();
    assert!(
        err.contains("partition") && err.contains("ghost") && err.contains("proxy not found"),
        "{err}"
    );
    eprintln!("partition of an unknown proxy: {err}");
    let err = s.proxies.down("ghost").await.unwrap_err().to_string();
    assert!(err.contains("ghost"), "{err}");

    // Nothing listens at this API address.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = closed.local_addr().unwrap();
    drop(closed);
    let err = FaultProxies::new(addr)
        .expect("client thread")
        .heal("n1")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains(&addr.to_string()), "{err}");
    eprintln!("heal with no server: {err}");
    s.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_during_a_partition_keeps_the_partition() {
    let s = setup("n1").await;
    s.proxies.slow("n1", 30, 0).await.unwrap();
    s.proxies.partition("n1").await.unwrap();
    // Replacing the latency has to delete every toxic and re-add the timeouts.
    s.proxies.slow("n1", 60, 10).await.unwrap();
    let mut stream = TcpStream::connect(s.listen).await.unwrap();
    assert_eq!(
        round_trip(&mut stream, b"lost!", Duration::from_millis(500)).await,
        None,
        "still partitioned"
    );
    s.proxies.heal("n1").await.unwrap();
    let mut stream = TcpStream::connect(s.listen).await.unwrap();
    let rtt = median_rtt(&mut stream).await;
    assert!(rtt < Duration::from_millis(50), "healed: {rtt:?}");
    s.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heal_releases_data_held_by_latency() {
    let s = setup("n1").await;
    let mut stream = TcpStream::connect(s.listen).await.unwrap();
    s.proxies.slow("n1", 5_000, 0).await.unwrap();
    let start = Instant::now();
    stream.write_all(b"held!").await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    s.proxies.heal("n1").await.unwrap();
    let mut buf = [0u8; 5];
    tokio::time::timeout(Duration::from_secs(2), stream.read_exact(&mut buf))
        .await
        .expect("answer soon after the heal, not after 10 s")
        .unwrap();
    assert_eq!(&buf, b"held!");
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    s.server.shutdown().await;
}

/// A server that greets every connection with `greeting` and keeps it open.
async fn greeter(greeting: &'static [u8; 5]) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((mut stream, _)) = listener.accept().await {
            let _ = stream.write_all(greeting).await;
            open.push(stream);
        }
    });
    (addr, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repoint_sends_new_connections_to_the_new_upstream_on_the_same_address() {
    let s = setup("n1").await;
    let mut before = answering(s.listen, b"echo!").await;
    let (other, task) = greeter(b"two!!").await;

    s.proxies.repoint("n1", other).await.unwrap();

    // The same listen address now reaches the other server.
    let mut after = TcpStream::connect(s.listen).await.unwrap();
    let mut buf = [0u8; 5];
    tokio::time::timeout(Duration::from_secs(5), after.read_exact(&mut buf))
        .await
        .expect("greeting within 5 s")
        .unwrap();
    assert_eq!(&buf, b"two!!");
    // The connection to the old upstream was closed with the old proxy.
    assert!(closed_within(&mut before, Duration::from_secs(5)).await);
    // Faults still apply to the re-pointed proxy.
    s.proxies.partition("n1").await.unwrap();
    s.proxies.heal("n1").await.unwrap();
    task.abort();
    s.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repoint_of_an_unknown_proxy_names_it() {
    let s = setup("n1").await;
    let err = s
        .proxies
        .repoint("nope", s.listen)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("nope") && err.contains("re-point"), "{err}");
    s.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxies_towards_a_down_port_refuse_and_keep_their_toxics() {
    let s = setup("n1").await;
    let other = echo_server(OnFin::KeepOpen).await;
    let peer = s.proxies.create("n2-to-n1", s.echo_addr()).await.unwrap();
    let elsewhere = s.proxies.create("n2", other.addr).await.unwrap();
    // Another run's proxy towards the same port, in a namespace of its own: not this run's.
    let foreign = FaultProxies::new(s.server.api_addr())
        .unwrap()
        .in_namespace("other-run/");
    let foreign_addr = foreign.create("n1", s.echo_addr()).await.unwrap();
    s.proxies.partition("n2-to-n1").await.unwrap();

    let off = s
        .proxies
        .set_enabled_towards(&[s.echo_addr().port()], false)
        .await
        .unwrap();
    assert_eq!(
        off,
        ["n1", "n2-to-n1"],
        "only this facade's proxies towards the port"
    );
    for addr in [s.listen, peer] {
        let err = TcpStream::connect(addr).await.unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::ConnectionRefused, "{addr}");
    }
    let _still = answering(elsewhere, b"other").await;
    let _theirs = answering(foreign_addr, b"their").await;

    let on = s
        .proxies
        .set_enabled_towards(&[s.echo_addr().port()], true)
        .await
        .unwrap();
    assert_eq!(on, ["n1", "n2-to-n1"]);
    let _back = answering(s.listen, b"again").await;
    // The partition on the peer link is still there: connected, but no answer.
    let mut cut = TcpStream::connect(peer).await.unwrap();
    assert!(round_trip(&mut cut, b"drops", Duration::from_millis(300))
        .await
        .is_none());
    s.server.shutdown().await;
}
