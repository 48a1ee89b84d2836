//! Each toxic type of the embedded engine on real sockets, set through toxiproxy_rust, plus
//! latency in front of a real redis-server.

mod proxy_support;

use proxy_support::{OnFin, Setup};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use toxiproxy_rust::client::Client;
use toxiproxy_rust::proxy::Proxy;

/// The proxy `p` in front of `upstream`, or of an echo server that closes its side after the
/// client's FIN.
async fn setup(upstream: Option<SocketAddr>) -> Setup {
    proxy_support::setup("p", OnFin::Close, upstream).await
}

/// Adds toxics to proxy `p` with the blocking client, off the async threads.
async fn with_proxy(api: SocketAddr, f: impl FnOnce(&Proxy) + Send + 'static) {
    tokio::task::spawn_blocking(move || {
        let client = Client::new(api);
        f(&client.find_proxy("p").unwrap());
    })
    .await
    .unwrap();
}

/// Reads until EOF (or reset) or `limit`; returns the bytes and when the read ended.
async fn read_to_end(stream: &mut TcpStream, limit: Duration) -> (Vec<u8>, Duration, bool) {
    let start = Instant::now();
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout_at(
            tokio::time::Instant::from_std(start + limit),
            stream.read(&mut buf),
        )
        .await
        {
            Err(_) => return (data, start.elapsed(), false),
            Ok(Ok(0) | Err(_)) => return (data, start.elapsed(), true),
            Ok(Ok(n)) => data.extend_from_slice(&buf[..n]),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limit_data_closes_after_the_byte_budget() {
    let s = setup(None).await;
    with_proxy(s.server.api_addr(), |p| {
        p.with_limit_data("downstream".into(), 10, 1.0);
    })
    .await;
    let mut stream = TcpStream::connect(s.listen).await.unwrap();
    stream.write_all(b"0123456789abcdefghij").await.unwrap();
    let (data, _, closed) = read_to_end(&mut stream, Duration::from_secs(2)).await;
    assert_eq!(data, b"0123456789");
    assert!(closed);
    s.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bandwidth_limits_throughput() {
    let s = setup(None).await;
    with_proxy(s.server.api_addr(), |p| {
        p.with_bandwidth("downstream".into(), 50, 1.0);
    })
    .await;
    let mut stream = TcpStream::connect(s.listen).await.unwrap();
    let payload = vec![7u8; 25_000];
    let start = Instant::now();
    stream.write_all(&payload).await.unwrap();
    let mut back = vec![0u8; payload.len()];
    stream.read_exact(&mut back).await.unwrap();
    let elapsed = start.elapsed();
    // 25 KB at 50 KB/s: about 500 ms.
    assert!(
        elapsed >= Duration::from_millis(400) && elapsed < Duration::from_secs(3),
        "25 KB at 50 KB/s took {elapsed:?}"
    );
    assert_eq!(back, payload);
    s.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_closes_after_its_delay_and_passes_nothing() {
    let s = setup(None).await;
    let mut stream = TcpStream::connect(s.listen).await.unwrap();
    with_proxy(s.server.api_addr(), |p| {
        p.with_timeout("upstream".into(), 300, 1.0);
    })
    .await;
    stream.write_all(b"hello").await.unwrap();
    let (data, after, closed) = read_to_end(&mut stream, Duration::from_secs(3)).await;
    assert!(data.is_empty(), "nothing gets through: {data:?}");
    assert!(closed, "the connection is closed");
    assert!(
        after >= Duration::from_millis(200) && after < Duration::from_millis(1500),
        "closed after {after:?} with timeout 300 ms"
    );
    s.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slicer_splits_and_spaces_writes() {
    let s = setup(None).await;
    with_proxy(s.server.api_addr(), |p| {
        // 10-byte slices, 30 ms apart.
        p.with_slicer("downstream".into(), 10, 0, 30_000, 1.0);
    })
    .await;
    let mut stream = TcpStream::connect(s.listen).await.unwrap();
    let start = Instant::now();
    stream.write_all(&[1u8; 50]).await.unwrap();
    let mut reads = 0;
    let mut got = 0;
    let mut buf = [0u8; 64];
    while got < 50 {
        let n = stream.read(&mut buf).await.unwrap();
        assert!(n > 0 && n <= 10, "slices of at most 10 bytes, got {n}");
        got += n;
        reads += 1;
    }
    let elapsed = start.elapsed();
    assert!(reads >= 5);
    assert!(
        elapsed >= Duration::from_millis(110),
        "5 slices 30 ms apart took {elapsed:?}"
    );
    s.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_close_delays_the_fin() {
    let s = setup(None).await;
    with_proxy(s.server.api_addr(), |p| {
        p.with_slow_close("downstream".into(), 300, 1.0);
    })
    .await;
    let mut stream = TcpStream::connect(s.listen).await.unwrap();
    stream.write_all(b"bye").await.unwrap();
    stream.shutdown().await.unwrap();
    let (data, after, closed) = read_to_end(&mut stream, Duration::from_secs(3)).await;
    assert_eq!(data, b"bye");
    assert!(closed);
    assert!(
        after >= Duration::from_millis(280),
        "FIN after {after:?}, slow_close 300 ms"
    );
    s.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn toxicity_zero_leaves_connections_alone() {
    let s = setup(None).await;
    with_proxy(s.server.api_addr(), |p| {
        p.with_latency("downstream".into(), 500, 0, 0.0);
    })
    .await;
    let mut stream = TcpStream::connect(s.listen).await.unwrap();
    let start = Instant::now();
    stream.write_all(b"quick").await.unwrap();
    let mut buf = [0u8; 5];
    stream.read_exact(&mut buf).await.unwrap();
    assert!(
        start.elapsed() < Duration::from_millis(250),
        "{:?}",
        start.elapsed()
    );
    s.server.shutdown().await;
}

/// A redis-server on a free port, killed when dropped.
struct Redis {
    addr: SocketAddr,
    child: std::process::Child,
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_redis() -> Redis {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = std::process::Command::new("/usr/bin/redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("start /usr/bin/redis-server");
    Redis {
        addr: SocketAddr::from(([127, 0, 0, 1], port)),
        child,
    }
}

async fn ping(stream: &mut TcpStream) -> Duration {
    let start = Instant::now();
    stream.write_all(b"PING\r\n").await.unwrap();
    let mut buf = [0u8; 7];
    stream.read_exact(&mut buf).await.unwrap();
    assert_eq!(&buf, b"+PONG\r\n");
    start.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn latency_in_front_of_redis() {
    let redis = start_redis();
    let deadline = Instant::now() + Duration::from_secs(5);
    while TcpStream::connect(redis.addr).await.is_err() {
        assert!(Instant::now() < deadline, "redis-server did not come up");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let s = setup(Some(redis.addr)).await;
    let mut stream = TcpStream::connect(s.listen).await.unwrap();
    let base = ping(&mut stream).await;
    s.proxies.slow("p", 100, 0).await.unwrap();
    let slow = ping(&mut stream).await;
    assert!(
        slow >= base + Duration::from_millis(190) && slow < Duration::from_secs(1),
        "PING {slow:?} with 100 ms each way, {base:?} without"
    );
    eprintln!(
        "redis PING through the proxy: {base:?} without toxic, {slow:?} with 100 ms each way"
    );
    s.server.shutdown().await;
}
