//! `serve` over real sockets: each test starts a server on a free loopback port and speaks
//! raw HTTP/1 to it, so that what is asserted is what a client gets.

use super::*;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// A server on a free loopback port, on a thread that lives as long as the test binary.
fn start(store: &Path, limits: Limits) -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let store = store.to_path_buf();
    std::thread::spawn(move || {
        crate::run_args::runtime().block_on(async {
            serve_on(TcpListener::from_std(listener).unwrap(), &store, limits).await;
        });
    });
    addr
}

fn connect(addr: SocketAddr) -> std::net::TcpStream {
    let stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream
}

/// Sends `request` as is and returns the whole answer (status line first), read until the
/// server closes the connection, which it must.
fn exchange(addr: SocketAddr, request: &[u8]) -> String {
    let mut stream = connect(addr);
    let _ = stream.write_all(request);
    let mut answer = Vec::new();
    stream
        .read_to_end(&mut answer)
        .unwrap_or_else(|e| panic!("the server did not close the connection: {e}"));
    String::from_utf8_lossy(&answer).into_owned()
}

fn get(addr: SocketAddr, path: &str) -> String {
    exchange(
        addr,
        format!("GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes(),
    )
}

#[test]
fn symlinks_out_of_the_store_are_not_followed() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "top secret").unwrap();
    std::fs::write(outside.path().join("results.json"), "{}").unwrap();
    let store = tempfile::tempdir().unwrap();
    let run = store.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::write(run.join("history.jsonl"), "{}\n").unwrap();
    use std::os::unix::fs::symlink as link;
    link(outside.path().join("secret.txt"), run.join("passwd")).unwrap();
    link(outside.path(), store.path().join("evil")).unwrap();
    link(&run, store.path().join("latest")).unwrap();

    let addr = start(store.path(), Limits::default());
    for path in ["/run/passwd", "/evil/secret.txt", "/evil/results.json"] {
        let answer = get(addr, path);
        assert!(answer.starts_with("HTTP/1.1 403"), "{path}: {answer}");
        assert!(answer.contains("out of the store"), "{path}: {answer}");
        assert!(!answer.contains("top secret"), "{path}");
    }
    let answer = get(addr, "/evil/report.html");
    assert!(answer.starts_with("HTTP/1.1 40"), "{answer}");
    assert!(
        !outside.path().join("report.html").exists(),
        "no report written outside the store"
    );
    // Links that stay inside (a run's `latest`) still work.
    let answer = get(addr, "/latest/history.jsonl");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("{}\n"), "{answer}");
    assert!(get(addr, "/run/missing").starts_with("HTTP/1.1 404"));
}

#[test]
fn long_request_lines_and_headers_are_refused() {
    let store = tempfile::tempdir().unwrap();
    let addr = start(store.path(), Limits::default());
    // No newline ever comes: the answer must not wait for one.
    let mut line = b"GET /".to_vec();
    line.resize(MAX_HEAD + 100, b'a');
    let answer = exchange(addr, &line);
    assert!(answer.starts_with("HTTP/1.1 414"), "{answer}");
    assert!(
        answer.ends_with("request line longer than 8 KiB\n"),
        "{answer}"
    );

    let header = format!("X-Filler: {}\r\n", "b".repeat(200));
    let request = format!("GET / HTTP/1.1\r\n{}\r\n", header.repeat(60));
    let answer = exchange(addr, request.as_bytes());
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    assert!(
        answer.ends_with("request headers larger than 8 KiB\n"),
        "{answer}"
    );

    // Just under the limit is fine.
    let request = format!("GET / HTTP/1.1\r\n{}\r\n", header.repeat(35));
    assert!(request.len() < MAX_HEAD);
    let answer = exchange(addr, request.as_bytes());
    assert!(answer.starts_with("HTTP/1.1 200"), "{}", &answer[..80]);
}

#[test]
fn connections_are_capped_and_slow_clients_time_out() {
    let store = tempfile::tempdir().unwrap();
    let limits = Limits {
        connections: 2,
        head_timeout: Duration::from_secs(3),
        ..Limits::default()
    };
    let addr = start(store.path(), limits);
    // Two clients that connect and send nothing (or only empty lines, which are no request)
    // take both places.
    let mut idle: Vec<std::net::TcpStream> = (0..2).map(|_| connect(addr)).collect();
    idle[1].write_all(b"\r\n\r\n").unwrap();
    let answer = get(addr, "/");
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.ends_with("busy: too many connections, try again\n"));
    // They are cut off at the head timeout, with a 408, and free their places.
    for mut stream in idle {
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(answer.ends_with("request not received in time\n"));
    }
    until_served(addr);
}

/// Waits until `/` is answered 200: a place was freed.
fn until_served(addr: SocketAddr) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let answer = get(addr, "/");
        if answer.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(Instant::now() < deadline, "places never freed: {answer}");
        std::thread::sleep(Duration::from_millis(50));
    }
}
