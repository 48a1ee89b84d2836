//! The embedded server against Toxiproxy 2.x's documented API behaviour, over real HTTP:
//! populate with host names, toxicity read-back, 405/400/403 answers, exact version and error
//! bodies, request ids, the noop toxic, and toxic attributes at the edges of Toxiproxy's
//! int64 range (accepted and survived, or refused with a 400 that names the attribute).

mod api_support;

use api_support::{echo, echo_on, http, request, Server};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Panics anywhere in this test binary: the server runs in-process, and a panicking
/// connection task would otherwise only show as a closed connection.
static PANICS: AtomicUsize = AtomicUsize::new(0);

fn count_panics() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.fetch_add(1, Ordering::SeqCst);
            previous(info);
        }));
    });
}

/// Creates proxy `name` in front of `upstream`; returns its listen address.
fn proxy(api: SocketAddr, name: &str, upstream: SocketAddr) -> SocketAddr {
    let body = format!(r#"{{"name":"{name}","listen":"127.0.0.1:0","upstream":"{upstream}"}}"#);
    let (status, created) = http(api, "POST", "/proxies", &body);
    assert_eq!(status, 201, "{created}");
    created["listen"].as_str().unwrap().parse().unwrap()
}

/// Sends `ping` through `listen` and waits up to `wait` for the echo; true if it came back.
fn echoes(listen: SocketAddr, wait: Duration) -> bool {
    let mut stream = TcpStream::connect(listen).unwrap();
    stream.set_read_timeout(Some(wait)).unwrap();
    stream.write_all(b"ping").unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 16];
    while got.len() < 4 {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return false,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    got == b"ping"
}

#[test]
fn populate_with_a_host_name_keeps_an_unchanged_proxy_and_its_toxics() {
    let server = Server::start();
    let api = server.api();
    let listen = proxy(api, "p", "127.0.0.1:9".parse().unwrap());
    let toxic = r#"{"type":"latency","attributes":{"latency":5}}"#;
    assert_eq!(http(api, "POST", "/proxies/p/toxics", toxic).0, 200);
    let by_name = format!(
        r#"[{{"name":"p","listen":"localhost:{}","upstream":"127.0.0.1:9"}}]"#,
        listen.port()
    );
    let (status, body) = http(api, "POST", "/populate", &by_name);
    assert_eq!(status, 201, "{body}");
    let kept = &body["proxies"][0];
    assert_eq!(kept["listen"], listen.to_string());
    assert_eq!(
        kept["toxics"].as_array().map(Vec::len),
        Some(1),
        "same address by another name: the proxy and its toxics stay ({body})"
    );
    assert_eq!(
        http(api, "GET", "/proxies/p/toxics", "")
            .1
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

#[test]
fn toxicity_reads_back_as_given() {
    let server = Server::start();
    let api = server.api();
    proxy(api, "p", "127.0.0.1:9".parse().unwrap());
    let toxic = r#"{"type":"latency","toxicity":0.2,"attributes":{"latency":1}}"#;
    let created = request(api, "POST", "/proxies/p/toxics", &[], toxic);
    assert!(
        created.body.contains(r#""toxicity":0.2,"#) || created.body.contains(r#""toxicity":0.2}"#),
        "{}",
        created.body
    );
    let updated = request(
        api,
        "PATCH",
        "/proxies/p/toxics/latency_downstream",
        &[],
        r#"{"toxicity":0.7}"#,
    );
    assert_eq!(
        updated.json()["toxicity"].as_f64(),
        Some(0.7),
        "{}",
        updated.body
    );
    let shown = request(api, "GET", "/proxies/p", &[], "");
    assert_eq!(shown.json()["toxics"][0]["toxicity"].as_f64(), Some(0.7));
}

#[test]
fn wrong_methods_get_405_and_unknown_paths_404() {
    let server = Server::start();
    let api = server.api();
    proxy(api, "p", "127.0.0.1:9".parse().unwrap());
    for (method, path) in [
        ("DELETE", "/version"),
        ("GET", "/reset"),
        ("GET", "/populate"),
        ("PUT", "/proxies"),
        ("PUT", "/proxies/p"),
        ("DELETE", "/proxies/p/toxics"),
        ("PUT", "/proxies/p/toxics/t"),
    ] {
        let answer = request(api, method, path, &[], "");
        assert_eq!(answer.status, 405, "{method} {path}");
        assert!(answer.header("allow").is_some(), "{method} {path}");
    }
    for path in [
        "/nothing",
        "/proxies/",
        "/proxies/p/toxics/t/x",
        "/proxies//toxics",
    ] {
        let answer = request(api, "GET", path, &[], "");
        assert_eq!(
            (answer.status, answer.body.as_str()),
            (404, "404 page not found\n"),
            "{path}"
        );
    }
}

#[test]
fn empty_bodies_are_a_400() {
    let server = Server::start();
    let api = server.api();
    proxy(api, "p", "127.0.0.1:9".parse().unwrap());
    let toxic = r#"{"type":"latency","attributes":{"latency":1}}"#;
    assert_eq!(http(api, "POST", "/proxies/p/toxics", toxic).0, 200);
    for (method, path) in [
        ("POST", "/proxies/p"),
        ("PATCH", "/proxies/p"),
        ("POST", "/proxies"),
        ("POST", "/proxies/p/toxics"),
        ("PATCH", "/proxies/p/toxics/latency_downstream"),
        ("POST", "/populate"),
    ] {
        let answer = request(api, method, path, &[], "");
        assert_eq!(answer.status, 400, "{method} {path}: {}", answer.body);
        assert_eq!(
            answer.json()["error"],
            "bad request body: EOF",
            "{method} {path}"
        );
    }
    // Reset takes no body.
    assert_eq!(http(api, "POST", "/reset", "").0, 204);
}

#[test]
fn version_and_error_bodies_are_toxiproxys() {
    let server = Server::start();
    let api = server.api();
    let version = request(api, "GET", "/version", &[], "");
    assert_eq!(version.status, 200);
    assert_eq!(version.body, "{\"version\": \"2.12.0\"}\n");
    assert_eq!(
        version.header("content-type"),
        Some("application/json;charset=utf-8")
    );

    for (method, path, body, expected) in [
        (
            "GET",
            "/proxies/nope",
            "",
            r#"{"error":"proxy not found","status":404}"#,
        ),
        (
            "POST",
            "/proxies",
            r#"{"upstream":"127.0.0.1:9"}"#,
            r#"{"error":"missing required field: name","status":400}"#,
        ),
        (
            "POST",
            "/proxies",
            r#"{"name":"q"}"#,
            r#"{"error":"missing required field: upstream","status":400}"#,
        ),
    ] {
        let answer = request(api, method, path, &[], body);
        assert_eq!(answer.body, format!("{expected}\n"), "{method} {path}");
    }
    let populate =
        r#"[{"name":"a","upstream":"127.0.0.1:9"},{"name":"","upstream":"127.0.0.1:9"}]"#;
    let answer = request(api, "POST", "/populate", &[], populate);
    assert_eq!(answer.status, 400);
    assert_eq!(
        answer.json()["error"],
        "missing required field: name at proxy 2"
    );
    assert_eq!(
        http(api, "GET", "/proxies", "").1,
        serde_json::json!({}),
        "nothing of a refused populate is applied"
    );
    proxy(api, "p", "127.0.0.1:9".parse().unwrap());
    for (body, expected) in [
        (
            r#"{"type":"nope"}"#,
            r#"{"error":"invalid toxic type","status":400}"#,
        ),
        (
            r#"{"type":"latency","stream":"sideways"}"#,
            r#"{"error":"stream was invalid, can be either upstream or downstream","status":400}"#,
        ),
    ] {
        let answer = request(api, "POST", "/proxies/p/toxics", &[], body);
        assert_eq!(answer.body, format!("{expected}\n"), "{body}");
    }
    let toxic = r#"{"type":"latency"}"#;
    assert_eq!(http(api, "POST", "/proxies/p/toxics", toxic).0, 200);
    let again = request(api, "POST", "/proxies/p/toxics", &[], toxic);
    assert_eq!(
        again.body,
        "{\"error\":\"toxic already exists\",\"status\":409}\n"
    );
    let missing = request(api, "GET", "/proxies/p/toxics/nope", &[], "");
    assert_eq!(
        missing.body,
        "{\"error\":\"toxic not found\",\"status\":404}\n"
    );
}

#[test]
fn every_answer_carries_a_request_id() {
    let server = Server::start();
    let api = server.api();
    let ids: Vec<String> = ["/version", "/proxies", "/proxies/nope"]
        .iter()
        .map(|path| {
            let answer = request(api, "GET", path, &[], "");
            answer
                .header("x-toxiproxy-request-id")
                .unwrap_or_else(|| panic!("no request id on {path}"))
                .to_string()
        })
        .collect();
    for id in &ids {
        assert_eq!(id.len(), 20, "{id}");
        assert!(id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'v').contains(&b)));
    }
    assert!(ids[0] != ids[1] && ids[1] != ids[2], "{ids:?}");
}

#[test]
fn the_noop_toxic_is_accepted_and_passes_data() {
    let server = Server::start();
    let api = server.api();
    let listen = proxy(api, "p", echo());
    let (status, body) = http(api, "POST", "/proxies/p/toxics", r#"{"type":"noop"}"#);
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["name"], "noop_downstream");
    assert_eq!(body["attributes"], serde_json::json!({}));
    assert!(echoes(listen, Duration::from_secs(5)));
}

#[test]
fn browser_user_agents_are_refused() {
    let server = Server::start();
    let api = server.api();
    let browser = "User-Agent: Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0";
    for (method, path, body) in [
        ("GET", "/proxies", ""),
        (
            "POST",
            "/proxies",
            r#"{"name":"p","upstream":"127.0.0.1:9"}"#,
        ),
        ("POST", "/reset", ""),
    ] {
        let answer = request(api, method, path, &[browser], body);
        assert_eq!(
            (answer.status, answer.body.as_str()),
            (403, "User agent not allowed\n"),
            "{method} {path}"
        );
    }
    assert_eq!(
        http(api, "GET", "/proxies", "").1,
        serde_json::json!({}),
        "nothing was created"
    );
    let curl = request(api, "GET", "/proxies", &["User-Agent: curl/8.5.0"], "");
    assert_eq!(curl.status, 200);
}

#[test]
fn attributes_past_int64_are_refused_naming_the_attribute() {
    let server = Server::start();
    let api = server.api();
    proxy(api, "p", "127.0.0.1:9".parse().unwrap());
    for (attribute, toxic, value) in [
        ("jitter", "latency", "9223372036854775808"),
        ("latency", "latency", "18446744073709551616"),
        ("latency", "latency", "1.5"),
        ("rate", "bandwidth", "1e30"),
        ("timeout", "timeout", "\"10\""),
        ("average_size", "slicer", "-9223372036854775809"),
        ("bytes", "limit_data", "true"),
        ("delay", "slow_close", "[1]"),
    ] {
        let body = format!(r#"{{"type":"{toxic}","attributes":{{"{attribute}":{value}}}}}"#);
        let (status, answer) = http(api, "POST", "/proxies/p/toxics", &body);
        assert_eq!(status, 400, "{body}: {answer}");
        let error = answer["error"].as_str().unwrap();
        assert!(
            error.contains(attribute) && error.contains("9223372036854775807"),
            "{body}: {error}"
        );
    }
    // Toxicity is a float32 to Toxiproxy: out of [0, 1] is taken, past float32 or not a
    // number is not.
    for toxicity in ["1e39", "\"1\"", "true"] {
        let body = format!(r#"{{"type":"latency","toxicity":{toxicity}}}"#);
        let (status, answer) = http(api, "POST", "/proxies/p/toxics", &body);
        assert_eq!(status, 400, "{body}");
        assert!(answer["error"].as_str().unwrap().contains("toxicity"));
    }
    assert_eq!(
        http(api, "GET", "/proxies/p/toxics", "").1,
        Value::Array(vec![]),
        "nothing refused was added"
    );
    // An update is checked the same way and leaves the toxic as it was.
    let ok = r#"{"type":"latency","attributes":{"latency":1}}"#;
    assert_eq!(http(api, "POST", "/proxies/p/toxics", ok).0, 200);
    let bad = r#"{"attributes":{"jitter":9223372036854775808}}"#;
    assert_eq!(
        http(api, "PATCH", "/proxies/p/toxics/latency_downstream", bad).0,
        400
    );
    let shown = http(api, "GET", "/proxies/p/toxics/latency_downstream", "").1;
    assert_eq!(shown["attributes"]["jitter"], 0);
}

#[test]
fn extreme_int64_attributes_are_accepted_and_never_panic() {
    count_panics();
    let server = Server::start();
    let api = server.api();
    let upstream = echo();
    let max = i64::MAX;
    // Toxics that must still pass data: huge values saturate, negatives mean "none".
    let passing = [
        r#"{"type":"latency","attributes":{"latency":-5,"jitter":-7}}"#.to_string(),
        format!(r#"{{"type":"bandwidth","attributes":{{"rate":{max}}}}}"#),
        format!(
            r#"{{"type":"slicer","attributes":{{"average_size":{max},"size_variation":{max},"delay":{max}}}}}"#
        ),
        format!(r#"{{"type":"limit_data","attributes":{{"bytes":{max}}}}}"#),
        format!(r#"{{"type":"slow_close","attributes":{{"delay":{max}}}}}"#),
        format!(r#"{{"type":"noop","attributes":{{"x":{max}}}}}"#),
    ];
    let listen = proxy(api, "p", upstream);
    for toxic in &passing {
        let (status, body) = http(api, "POST", "/proxies/p/toxics", toxic);
        assert_eq!(status, 200, "{toxic}: {body}");
    }
    let shown = http(api, "GET", "/proxies/p/toxics", "").1;
    assert_eq!(
        shown[0]["attributes"]["latency"], -5,
        "values read back as given"
    );
    assert_eq!(shown[1]["attributes"]["rate"], max);
    assert!(
        echoes(listen, Duration::from_secs(10)),
        "data passes through saturated toxics"
    );

    // Toxics that hold data as good as forever: nothing comes back, and the server lives.
    for (name, toxic) in [
        (
            "q",
            format!(r#"{{"type":"latency","attributes":{{"latency":{max}}}}}"#),
        ),
        (
            "r",
            format!(r#"{{"type":"latency","attributes":{{"latency":{max},"jitter":{max}}}}}"#),
        ),
        (
            "s",
            format!(r#"{{"type":"timeout","attributes":{{"timeout":{max}}}}}"#),
        ),
    ] {
        let listen = proxy(api, name, upstream);
        let path = format!("/proxies/{name}/toxics");
        let (status, body) = http(api, "POST", &path, &toxic);
        assert_eq!(status, 200, "{toxic}: {body}");
        assert!(
            !echoes(listen, Duration::from_millis(300)),
            "{toxic} let data through"
        );
    }
    // A jitter at i64::MAX over no latency: either way the connection must not take the
    // server down.
    let listen = proxy(api, "t", upstream);
    let jitter = format!(r#"{{"type":"latency","attributes":{{"jitter":{max}}}}}"#);
    assert_eq!(http(api, "POST", "/proxies/t/toxics", &jitter).0, 200);
    for _ in 0..4 {
        let _ = echoes(listen, Duration::from_millis(100));
    }
    assert_eq!(
        http(api, "GET", "/version", "").0,
        200,
        "the server still answers"
    );
    assert_eq!(http(api, "POST", "/reset", "").0, 204);
    assert!(echoes(listen, Duration::from_secs(10)), "reset heals it");
    drop(server);
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "the server panicked");
}

#[test]
fn bodies_past_the_limit_are_refused_unread() {
    let server = Server::start();
    let api = server.api();
    let mut stream = TcpStream::connect(api).unwrap();
    let size = (1 << 20) + 1024;
    write!(
        stream,
        "POST /proxies HTTP/1.1\r\nHost: x\r\nContent-Length: {size}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    // The body is written on the side: the server answers without reading it all.
    let mut writer = stream.try_clone().unwrap();
    std::thread::spawn(move || {
        let _ = writer.write_all(&vec![b' '; size]);
    });
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains(r#""status":413"#), "{answer}");
    assert_eq!(http(api, "GET", "/proxies", "").1, serde_json::json!({}));
}

#[test]
fn toxicity_outside_zero_to_one_is_taken_as_toxiproxy_takes_it() {
    let server = Server::start();
    let api = server.api();
    proxy(api, "p", "127.0.0.1:9".parse().unwrap());
    for (name, toxicity) in [("always", 1.5), ("never", -0.1)] {
        let body = format!(r#"{{"name":"{name}","type":"latency","toxicity":{toxicity}}}"#);
        let (status, answer) = http(api, "POST", "/proxies/p/toxics", &body);
        assert_eq!(status, 200, "{body}: {answer}");
        assert_eq!(answer["toxicity"].as_f64(), Some(toxicity));
        let (status, answer) = http(
            api,
            "PATCH",
            &format!("/proxies/p/toxics/{name}"),
            &format!(r#"{{"toxicity":{}}}"#, toxicity * 2.0),
        );
        assert_eq!(status, 200, "{answer}");
        assert_eq!(answer["toxicity"].as_f64(), Some(toxicity * 2.0));
    }
}

#[test]
fn a_duplicate_toxic_is_a_conflict_before_its_attributes_are_read() {
    let server = Server::start();
    let api = server.api();
    proxy(api, "p", "127.0.0.1:9".parse().unwrap());
    let ok = r#"{"name":"slow","type":"latency","attributes":{"latency":1}}"#;
    assert_eq!(http(api, "POST", "/proxies/p/toxics", ok).0, 200);
    // Toxiproxy looks the name up before it decodes the attributes: 409, not 400.
    let bad = r#"{"name":"slow","type":"latency","attributes":{"latency":"x"}}"#;
    let (status, answer) = http(api, "POST", "/proxies/p/toxics", bad);
    assert_eq!(status, 409, "{answer}");
    assert_eq!(answer["error"], "toxic already exists");
    // A bad type or stream is still a 400 first, as it is decoded before the name is looked up.
    let bad_type = r#"{"name":"slow","type":"nope"}"#;
    assert_eq!(http(api, "POST", "/proxies/p/toxics", bad_type).0, 400);
    let bad_stream = r#"{"name":"slow","type":"latency","stream":"sideways"}"#;
    assert_eq!(http(api, "POST", "/proxies/p/toxics", bad_stream).0, 400);
    // A new name with those attributes is a 400.
    let fresh = r#"{"name":"other","type":"latency","attributes":{"latency":"x"}}"#;
    assert_eq!(http(api, "POST", "/proxies/p/toxics", fresh).0, 400);
}

#[test]
fn a_populate_that_made_no_proxy_answers_null_proxies() {
    let server = Server::start();
    let api = server.api();
    // Refused before anything is made: Toxiproxy's nil slice is `null`.
    let refused = r#"[{"name":"","upstream":"127.0.0.1:9"}]"#;
    let answer = request(api, "POST", "/populate", &[], refused);
    assert_eq!(answer.status, 400);
    assert_eq!(answer.json()["proxies"], Value::Null, "{}", answer.body);
    // Nothing asked, nothing made: 201 with `null` too.
    let answer = request(api, "POST", "/populate", &[], "[]");
    assert_eq!(answer.status, 201);
    assert_eq!(answer.json(), serde_json::json!({ "proxies": null }));
    // Some made: the list.
    let one = r#"[{"name":"a","upstream":"127.0.0.1:9"}]"#;
    let answer = request(api, "POST", "/populate", &[], one);
    assert_eq!(answer.status, 201);
    assert_eq!(answer.json()["proxies"][0]["name"], "a");
}

/// A port bound but not listening: the kernel refuses connections to it until `listen`.
fn refusing_port() -> (tokio::net::TcpSocket, SocketAddr) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = socket.local_addr().unwrap();
    (socket, addr)
}

/// A client connected through `listen` that has sent `ping`, reading with a generous timeout
/// (a hang is a failure, not a wait without end).
fn ping_through(listen: SocketAddr) -> TcpStream {
    let mut client = TcpStream::connect(listen).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    client.write_all(b"ping").unwrap();
    client
}

#[test]
fn a_connection_to_an_upstream_that_is_not_listening_yet_waits_for_it() {
    // A network refuses a connect to a server that is not listening; a proxy has accepted it
    // already, so it waits for the server to listen, as a client retrying would.
    let server = Server::start();
    let (socket, upstream) = refusing_port();
    let mut client = ping_through(proxy(server.api(), "late", upstream));
    // Long enough that the proxy's first connect (a loopback one, right after its accept) has
    // been refused; well inside its wait.
    std::thread::sleep(Duration::from_millis(50));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap();
    let listener = {
        let _in = runtime.enter();
        socket.listen(16).unwrap().into_std().unwrap()
    };
    listener.set_nonblocking(false).unwrap();
    echo_on(listener);
    let mut got = [0u8; 4];
    client
        .read_exact(&mut got)
        .expect("the bytes sent before the upstream listened reach it and come back");
    assert_eq!(&got, b"ping");
}

#[test]
fn a_connection_to_an_upstream_that_never_listens_is_reset_not_closed() {
    let server = Server::start();
    let (_socket, upstream) = refusing_port();
    let mut client = ping_through(proxy(server.api(), "never", upstream));
    let mut buf = [0u8; 4];
    match client.read(&mut buf) {
        Err(e) => assert_eq!(
            e.kind(),
            std::io::ErrorKind::ConnectionReset,
            "a refusal passed on as a reset, not {e}"
        ),
        Ok(n) => panic!("read {n} byte(s) (0: an orderly close) where a reset was due"),
    }
}
