//! A bounded fuzz loop (proptest, a fixed number of cases: seconds in CI) over the embedded
//! Toxiproxy API on real HTTP: random methods, paths and JSON bodies that create, update and
//! delete proxies and toxics, with attribute values across and past int64. The server must
//! never panic, keep answering, and every answer must be Toxiproxy-shaped: a known status, a
//! JSON error `{"error": "...", "status": <the status>}` for failures, and proxy and toxic
//! objects of Toxiproxy's shape for successes.

mod api_support;

use api_support::{echo, request, Server};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{json, Map, Value};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

static PANICS: AtomicUsize = AtomicUsize::new(0);

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        (0i64..5000).prop_map(Value::from),
        Just(json!(i64::MAX)),
        Just(json!(i64::MIN)),
        Just(json!(u64::MAX)),
        (i64::MAX as u64..=u64::MAX).prop_map(Value::from),
        any::<f64>()
            .prop_filter("JSON has no NaN or infinity", |f| f.is_finite())
            .prop_map(Value::from),
        (0.0f64..=1.0).prop_map(Value::from),
        Just(json!(1e300)),
        Just(json!(-0.0)),
    ]
}

/// Any JSON value, a few levels deep.
fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        number(),
        "[a-z_]{0,8}".prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => Just("t".to_string()),
        2 => Just("latency_downstream".to_string()),
        1 => Just("p".to_string()),
        1 => "[a-z_]{1,6}",
    ]
}

/// A field that is there 4 times in 5.
/// A toxic's name: mostly one that creates and updates share.
fn toxic_name() -> impl Strategy<Value = String> {
    prop_oneof![4 => Just("t".to_string()), 1 => name()]
}

fn field(
    key: &'static str,
    strategy: BoxedStrategy<Value>,
) -> BoxedStrategy<Option<(String, Value)>> {
    prop::option::weighted(0.8, strategy.prop_map(move |v| (key.to_string(), v))).boxed()
}

/// Mostly a good value, sometimes any JSON at all.
fn mostly(good: impl Strategy<Value = Value> + 'static) -> BoxedStrategy<Value> {
    prop_oneof![6 => good.boxed(), 1 => value().boxed()].boxed()
}

fn object(fields: Vec<BoxedStrategy<Option<(String, Value)>>>) -> impl Strategy<Value = Value> {
    fields.prop_map(|fields| Value::Object(fields.into_iter().flatten().collect::<Map<_, _>>()))
}

/// A proxy body: mostly the right fields, with plausible and wrong values.
fn proxy_body() -> impl Strategy<Value = Value> {
    let listen = prop_oneof![
        Just(json!("127.0.0.1:0")),
        Just(json!("localhost:0")),
        Just(json!("")),
        Just(json!("0.0.0.0:0")),
        Just(json!("[::1]:0")),
        Just(json!("not an address")),
    ];
    let upstream = prop_oneof![4 => Just(json!("127.0.0.1:9")), 1 => Just(json!(""))];
    object(vec![
        field("name", mostly(name().prop_map(Value::from))),
        field("listen", mostly(listen)),
        field("upstream", mostly(upstream)),
        field("enabled", mostly(any::<bool>().prop_map(Value::from))),
    ])
}

/// A toxic body: a known or unknown type, attributes of every toxic with any number.
fn toxic_body() -> impl Strategy<Value = Value> {
    let kind = prop_oneof![
        Just("latency"),
        Just("timeout"),
        Just("bandwidth"),
        Just("slow_close"),
        Just("slicer"),
        Just("limit_data"),
        Just("noop"),
        Just("nope"),
    ]
    .prop_map(Value::from);
    let attribute_names = prop::sample::subsequence(
        vec![
            "latency",
            "jitter",
            "timeout",
            "rate",
            "delay",
            "average_size",
            "size_variation",
            "bytes",
        ],
        0..=4,
    );
    let attributes =
        (attribute_names, prop::collection::vec(number(), 4)).prop_map(|(names, values)| {
            Value::Object(
                names
                    .into_iter()
                    .zip(values)
                    .map(|(n, v)| (n.to_string(), v))
                    .collect(),
            )
        });
    let stream = prop_oneof![Just(json!("upstream")), Just(json!("downstream"))];
    let toxicity = prop_oneof![3 => (0.0f64..=1.0).prop_map(Value::from), 1 => number()];
    object(vec![
        field("type", mostly(kind)),
        field("name", mostly(toxic_name().prop_map(Value::from))),
        field("stream", mostly(stream)),
        field("toxicity", mostly(toxicity)),
        field("attributes", mostly(attributes)),
    ])
}

/// One request: method, path and raw body, mostly an API operation with its own kind of body.
fn call() -> impl Strategy<Value = (String, String, String)> {
    let proxy = prop_oneof![Just("p"), Just("q")];
    let update = prop_oneof![Just("POST"), Just("PATCH")];
    let any_method = prop_oneof![
        Just("GET"),
        Just("POST"),
        Just("PATCH"),
        Just("DELETE"),
        Just("PUT")
    ];
    let any_path = prop_oneof![
        Just("/proxies".to_string()),
        Just("/populate".to_string()),
        Just("/reset".to_string()),
        Just("/version".to_string()),
        proxy.clone().prop_map(|p| format!("/proxies/{p}")),
        proxy.clone().prop_map(|p| format!("/proxies/{p}/toxics")),
        (proxy.clone(), name()).prop_map(|(p, t)| format!("/proxies/{p}/toxics/{t}")),
        "/[a-z%/]{0,12}",
    ];
    let any_body = prop_oneof![
        value().prop_map(|v| v.to_string()),
        ".{0,16}",
        Just(String::new()),
    ];
    let s = |v: Value| v.to_string();
    prop_oneof![
        2 => proxy_body().prop_map(move |b| ("POST".into(), "/proxies".into(), s(b))),
        1 => prop::collection::vec(proxy_body(), 0..3)
            .prop_map(move |v| ("POST".into(), "/populate".into(), s(Value::from(v)))),
        2 => (update.clone(), proxy.clone(), proxy_body())
            .prop_map(move |(m, p, b)| (m.into(), format!("/proxies/{p}"), s(b))),
        5 => (proxy.clone(), toxic_body())
            .prop_map(move |(p, b)| ("POST".into(), format!("/proxies/{p}/toxics"), s(b))),
        4 => (update, proxy.clone(), toxic_name(), toxic_body()).prop_map(move |(m, p, t, b)| {
            (m.into(), format!("/proxies/{p}/toxics/{t}"), s(b))
        }),
        1 => (proxy.clone(), toxic_name())
            .prop_map(|(p, t)| ("DELETE".into(), format!("/proxies/{p}/toxics/{t}"), String::new())),
        1 => proxy.prop_map(|p| ("DELETE".into(), format!("/proxies/{p}"), String::new())),
        1 => Just(("POST".into(), "/reset".into(), String::new())),
        3 => (any_method, any_path, any_body).prop_map(|(m, p, b)| (m.into(), p, b)),
    ]
}

fn is_proxy(v: &Value) -> bool {
    v["name"].is_string()
        && v["listen"].is_string()
        && v["upstream"].is_string()
        && v["enabled"].is_boolean()
        && v["toxics"]
            .as_array()
            .is_some_and(|t| t.iter().all(is_toxic))
}

fn is_toxic(v: &Value) -> bool {
    v["name"].is_string()
        && v["type"].is_string()
        && matches!(v["stream"].as_str(), Some("upstream" | "downstream"))
        // Any float32, as Toxiproxy takes it.
        && v["toxicity"]
            .as_f64()
            .is_some_and(|t| t.abs() <= f64::from(f32::MAX))
        && v["attributes"]
            .as_object()
            .is_some_and(|a| a.values().all(|n| n.is_i64()))
}

/// Checks one answer's shape; `Err` says what is wrong.
fn check(method: &str, path: &str, status: u16, body: &str) -> Result<(), String> {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let ok = match status {
        404 if body == "404 page not found\n" => true,
        405 => body.is_empty(),
        400 | 404 | 409 | 413 | 500 => parsed.as_ref().is_some_and(|v| {
            v["error"].as_str().is_some_and(|e| !e.is_empty())
                && v["status"].as_u64() == Some(u64::from(status))
        }),
        204 => body.is_empty(),
        200 if path == "/version" => body == "{\"version\": \"2.12.0\"}\n",
        200 | 201 => parsed.as_ref().is_some_and(|v| {
            is_proxy(v)
                || is_toxic(v)
                || v.as_array().is_some_and(|a| a.iter().all(is_toxic))
                || v["proxies"]
                    .as_array()
                    .is_some_and(|a| !a.is_empty() && a.iter().all(is_proxy))
                // A populate that made none: Go's nil list.
                || v.as_object().is_some_and(|m| m.len() == 1 && m["proxies"].is_null())
                || v.as_object().is_some_and(|m| m.values().all(is_proxy))
        }),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{method} {path} answered {status} {body:?}"))
    }
}

/// Sends a few bytes through proxy `p` if it listens, and waits briefly for the echo: the
/// engine then runs the case's toxics on a real connection.
fn poke(api: SocketAddr) {
    let shown = request(api, "GET", "/proxies/p", &[], "").json();
    let Some(listen) = shown["listen"]
        .as_str()
        .and_then(|l| l.parse::<SocketAddr>().ok())
    else {
        return;
    };
    if shown["enabled"] != true {
        return;
    }
    if let Ok(mut stream) = TcpStream::connect(listen) {
        let _ = stream.set_read_timeout(Some(Duration::from_millis(20)));
        let _ = stream.write_all(b"lockpick");
        let _ = stream.read(&mut [0u8; 16]);
    }
}

fn run(
    api: SocketAddr,
    upstream: SocketAddr,
    calls: &[(String, String, String)],
) -> Result<(), TestCaseError> {
    // Start from proxies p and q in front of the echo server (kept with their toxics if
    // they are still there).
    let both = format!(
        r#"[{{"name":"p","upstream":"{upstream}"}},{{"name":"q","upstream":"{upstream}"}}]"#
    );
    request(api, "POST", "/populate", &[], &both);
    for (method, path, body) in calls {
        let answer = request(api, method, path, &[], body);
        check(method, path, answer.status, &answer.body)
            .map_err(|e| TestCaseError::fail(format!("{e} (body sent: {body})")))?;
    }
    poke(api);
    let version = request(api, "GET", "/version", &[], "");
    prop_assert_eq!(version.status, 200, "the server stopped answering");
    prop_assert_eq!(PANICS.load(Ordering::SeqCst), 0, "the server panicked");
    Ok(())
}

#[test]
fn random_api_calls_never_panic_and_answer_like_toxiproxy() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, Ordering::SeqCst);
        previous(info);
    }));
    let server = Server::start();
    let api = server.api();
    let upstream = echo();
    // Fixed seed and case count: the same few seconds of work in every CI run; set
    // PROPTEST_CASES to search longer locally.
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(200);
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new_with_rng(
        config,
        proptest::test_runner::TestRng::from_seed(
            proptest::test_runner::RngAlgorithm::ChaCha,
            &[7; 32],
        ),
    );
    let result = runner.run(&prop::collection::vec(call(), 1..12), |calls| {
        run(api, upstream, &calls)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
