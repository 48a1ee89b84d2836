//! `serve` over real sockets: each test starts a server on a free loopback port and speaks
//! raw HTTP/1 to it, so that what is asserted is what a client gets.

use super::*;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
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

/// An answer's status code, its header lines (lower-cased) and its body.
fn parts(answer: &str) -> (u16, Vec<String>, &str) {
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((answer, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {answer:?}"));
    (status, lines.map(str::to_ascii_lowercase).collect(), body)
}

fn header<'a>(headers: &'a [String], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find_map(|h| h.strip_prefix(name)?.strip_prefix(": "))
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
fn paths_out_of_the_store_are_not_served() {
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    std::fs::write(&secret, "top secret").unwrap();
    let store = outside.path().join("store");
    std::fs::create_dir(&store).unwrap();
    let addr = start(&store, Limits::default());
    let absolute = secret.display().to_string();
    let encoded = absolute.replace('/', "%2f");
    for target in [
        "/../secret.txt",
        "/%2e%2e/secret.txt",
        "/..%2fsecret.txt",
        "/store/../../secret.txt",
        "http://x/../secret.txt",
        &format!("/{absolute}"),
        &format!("/{encoded}"),
        &encoded,
    ] {
        let answer = get(addr, target);
        let (status, _, body) = parts(&answer);
        assert!(status == 404 || status == 400, "{target}: {answer}");
        assert!(!body.contains("top secret"), "{target}: {answer}");
    }
}

#[test]
fn files_are_served_with_their_content_type() {
    let store = tempfile::tempdir().unwrap();
    let files = [
        ("report.html", "text/html; charset=utf-8"),
        ("results.json", "application/json"),
        ("chart.svg", "image/svg+xml"),
        ("shot.png", "image/png"),
        ("history.jsonl", "text/plain; charset=utf-8"),
        ("scenario.toml", "text/plain; charset=utf-8"),
    ];
    for (name, _) in files {
        std::fs::write(store.path().join(name), format!("content of {name}")).unwrap();
    }
    let addr = start(store.path(), Limits::default());
    for (name, ctype) in files {
        let answer = get(addr, &format!("/{name}"));
        let (status, headers, body) = parts(&answer);
        assert_eq!(status, 200, "{answer}");
        assert_eq!(header(&headers, "content-type"), Some(ctype), "{answer}");
        assert_eq!(body, format!("content of {name}"));
        let length = body.len().to_string();
        assert_eq!(
            header(&headers, "content-length"),
            Some(&*length),
            "{answer}"
        );
        assert_eq!(header(&headers, "connection"), Some("close"), "{answer}");
        assert!(answer.contains("\r\nContent-Type: "), "{answer}");
    }
    // HEAD: the same head, no body.
    let answer = exchange(addr, b"HEAD /history.jsonl HTTP/1.1\r\n\r\n");
    let (status, headers, body) = parts(&answer);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(header(&headers, "content-length"), Some("24"), "{answer}");
    assert_eq!(body, "", "{answer}");
    // A folder is not a file.
    std::fs::create_dir(store.path().join("run")).unwrap();
    assert_eq!(parts(&get(addr, "/run")).0, 404);
    assert_eq!(parts(&get(addr, "/run/")).0, 404);
}

#[test]
fn only_get_and_head_are_answered() {
    let store = tempfile::tempdir().unwrap();
    std::fs::write(store.path().join("results.json"), "{}").unwrap();
    let addr = start(store.path(), Limits::default());
    for method in ["POST", "PUT", "DELETE", "OPTIONS"] {
        let request = format!("{method} /results.json HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
        let answer = exchange(addr, request.as_bytes());
        let (status, headers, body) = parts(&answer);
        assert_eq!(status, 405, "{method}: {answer}");
        assert_eq!(body, "only GET\n");
        assert_eq!(header(&headers, "allow"), Some("get, head"), "{answer}");
    }
    assert!(std::fs::read_to_string(store.path().join("results.json")).unwrap() == "{}");
}

/// A stored run without its report: `<store>/scen/<id>/` with a history and results.
fn stored_run(store: &Path) -> PathBuf {
    use lockpick_checker::history::Event;
    use lockpick_checker::lock::{check_locks, LockCheckParams, Property};
    use lockpick_checker::results::{RunResults, RESULTS_VERSION};
    let run = store.join("scen/20260101T000000Z-seed7");
    std::fs::create_dir_all(&run).unwrap();
    let history = concat!(
        r#"{"v":1,"index":0,"time_ns":1000000,"process":0,"type":"invoke","f":"acquire","lock":"l"}"#,
        "\n",
        r#"{"v":1,"index":1,"time_ns":2000000,"process":0,"type":"ok","f":"acquire","lock":"l","value":{"token":1}}"#,
        "\n",
    );
    std::fs::write(run.join("history.jsonl"), history).unwrap();
    let events: Vec<Event> = history
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let lock = check_locks(
        &events,
        &LockCheckParams {
            property: Property::Exclusive,
            deadlock_ms: 0,
        },
    );
    let results = RunResults {
        v: RESULTS_VERSION,
        scenario: "scen".to_owned(),
        backend: "redis".to_owned(),
        seed: 7,
        verdict: lock.verdict,
        expected: None,
        interrupted: false,
        workload_ms: 2,
        ops: 1,
        history: "history.jsonl".to_owned(),
        reproduce: "cargo run -- scenario scen --seed 7".to_owned(),
        lock,
        linearizability: None,
        not_exposed: None,
        exposed_by: None,
        exposures: None,
        server: None,
        discipline: None,
        library: Some("redis-py 5.2.1".to_owned()),
        description: None,
    };
    std::fs::write(
        run.join("results.json"),
        serde_json::to_string(&results).unwrap(),
    )
    .unwrap();
    run
}

#[test]
fn the_index_lists_runs_and_a_missing_report_is_made_on_first_view() {
    let store = tempfile::tempdir().unwrap();
    let run = stored_run(store.path());
    let addr = start(store.path(), Limits::default());
    for path in ["/", "/index.html", "/?sort=time"] {
        let answer = get(addr, path);
        let (status, headers, body) = parts(&answer);
        assert_eq!(status, 200, "{path}: {answer}");
        let ctype = header(&headers, "content-type");
        assert_eq!(ctype, Some("text/html; charset=utf-8"), "{answer}");
        // The links as a browser follows them (the template escapes `/` in a run's path).
        let body = body.replace("&#x2f;", "/");
        assert!(
            body.contains(r#"href="/scen/20260101T000000Z-seed7/history.jsonl""#),
            "{body}"
        );
        // No report yet: no link to one.
        assert!(!body.contains(r#"class="report""#), "{body}");
        // The library the adapter named, beside the lock (issue 38).
        assert!(
            body.contains(r#"<span class="library">redis-py 5.2.1</span> on redis"#),
            "{body}"
        );
    }
    assert!(!run.join("report.html").exists());
    let answer = get(addr, "/scen/20260101T000000Z-seed7/report.html");
    let (status, _, body) = parts(&answer);
    assert_eq!(status, 200, "{answer}");
    assert!(body.contains(r#"id="verdict""#), "{body}");
    assert!(run.join("report.html").is_file());
    // The history page the report's marks link to, made with it.
    assert!(run.join("history.html").is_file());
    std::fs::remove_file(run.join("history.html")).unwrap();
    let answer = get(addr, "/scen/20260101T000000Z-seed7/history.html");
    let (status, _, body) = parts(&answer);
    assert_eq!(status, 200, "{answer}");
    assert!(body.contains(r#"<tr id="h-0""#), "{body}");
    let index = get(addr, "/").replace("&#x2f;", "/");
    let link = r#"<a class="report" href="/scen/20260101T000000Z-seed7/report.html">"#;
    assert!(parts(&index).2.contains(link), "{index}");
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

#[test]
fn a_client_that_stops_reading_is_dropped() {
    let store = tempfile::tempdir().unwrap();
    // Sparse: far more than the socket buffers hold, without the disk space.
    let len = 64 << 20;
    let big = std::fs::File::create(store.path().join("big.jsonl")).unwrap();
    big.set_len(len).unwrap();
    let limits = Limits {
        connections: 1,
        write_timeout: Duration::from_secs(1),
        ..Limits::default()
    };
    let addr = start(store.path(), limits);
    let mut stalled = connect(addr);
    stalled
        .write_all(b"GET /big.jsonl HTTP/1.1\r\n\r\n")
        .unwrap();
    // It holds the only place until the server gives up on it.
    until_served(addr);
    let got = std::io::copy(&mut stalled, &mut std::io::sink()).unwrap_or(0);
    assert!(got < len, "{got} bytes: the whole file");
}

#[test]
fn a_request_whose_body_never_comes_is_answered_and_closed() {
    let store = tempfile::tempdir().unwrap();
    // Longer than `exchange` waits: the connection must end because the answer is complete,
    // not because a timeout ran out.
    let limits = Limits {
        head_timeout: Duration::from_secs(600),
        ..Limits::default()
    };
    let addr = start(store.path(), limits);
    for announced in ["Content-Length: 100000", "Transfer-Encoding: chunked"] {
        let request = format!("GET / HTTP/1.1\r\n{announced}\r\n\r\n");
        let answer = exchange(addr, request.as_bytes());
        assert!(answer.starts_with("HTTP/1.1 200"), "{announced}: {answer}");
    }
}

#[test]
fn empty_lines_before_the_request_line_are_skipped() {
    let store = tempfile::tempdir().unwrap();
    let addr = start(store.path(), Limits::default());
    let answer = exchange(addr, b"\r\n\r\nGET / HTTP/1.1\r\n\r\n");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}
