//! The real toxiproxy_rust client, and raw HTTP for the status codes it hides, against the
//! embedded Toxiproxy-compatible server.

mod api_support;

use api_support::{http, Server};
use serde_json::Value;
use std::net::{SocketAddr, TcpListener, TcpStream};
use toxiproxy_rust::client::Client;
use toxiproxy_rust::proxy::ProxyPack;

fn refused(addr: &str) -> bool {
    TcpStream::connect(addr).is_err()
}

#[test]
fn client_populates_lists_and_finds_proxies() {
    let server = Server::start();
    let client = Client::new(server.api());
    assert!(client.is_running());
    let version: Value = serde_json::from_str(&client.version().unwrap()).unwrap();
    assert!(version["version"].as_str().unwrap().starts_with("2."));

    let upstream = TcpListener::bind("127.0.0.1:0").unwrap();
    let upstream = upstream.local_addr().unwrap().to_string();
    let created = client
        .populate(vec![
            ProxyPack::new("a".into(), "127.0.0.1:0".into(), upstream.clone()),
            ProxyPack::new("b".into(), "127.0.0.1:0".into(), upstream.clone()),
        ])
        .unwrap();
    assert_eq!(created.len(), 2);
    for proxy in &created {
        let listen: SocketAddr = proxy.proxy_pack.listen.parse().unwrap();
        assert_ne!(listen.port(), 0, "the bound port is reported");
        assert!(proxy.proxy_pack.enabled);
        assert_eq!(proxy.proxy_pack.upstream, upstream);
        assert!(!refused(&proxy.proxy_pack.listen));
    }

    let all = client.all().unwrap();
    let mut names: Vec<_> = all.keys().cloned().collect();
    names.sort();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(
        client.find_proxy("a").unwrap().proxy_pack.listen,
        created[0].proxy_pack.listen
    );
    assert!(client.find_proxy("missing").is_err());

    // Same listen and upstream keeps the proxy; a new upstream replaces it.
    let a_listen = created[0].proxy_pack.listen.clone();
    let again = client
        .populate(vec![ProxyPack::new(
            "a".into(),
            a_listen.clone(),
            upstream.clone(),
        )])
        .unwrap();
    assert_eq!(again[0].proxy_pack.listen, a_listen);
    let replaced = client
        .populate(vec![ProxyPack::new(
            "a".into(),
            a_listen.clone(),
            "127.0.0.1:1".into(),
        )])
        .unwrap();
    assert_eq!(replaced[0].proxy_pack.upstream, "127.0.0.1:1");

    client.find_proxy("b").unwrap().delete().unwrap();
    assert!(client.find_proxy("b").is_err());
    assert!(
        refused(&created[1].proxy_pack.listen),
        "a deleted proxy stops listening"
    );
}

#[test]
fn client_adds_lists_and_deletes_toxics() {
    let server = Server::start();
    let client = Client::new(server.api());
    client
        .populate(vec![ProxyPack::new(
            "p".into(),
            "127.0.0.1:0".into(),
            "127.0.0.1:9".into(),
        )])
        .unwrap();
    let proxy = client.find_proxy("p").unwrap();
    proxy
        .with_latency("downstream".into(), 100, 10, 1.0)
        .with_timeout("upstream".into(), 0, 0.5)
        .with_bandwidth("upstream".into(), 64, 1.0)
        .with_slow_close("downstream".into(), 20, 1.0)
        .with_slicer("downstream".into(), 64, 8, 100, 1.0)
        .with_limit_data("upstream".into(), 4096, 1.0);

    let toxics = proxy.toxics().unwrap();
    let names: Vec<&str> = toxics.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "latency_downstream",
            "timeout_upstream",
            "bandwidth_upstream",
            "slow_close_downstream",
            "slicer_downstream",
            "limit_data_upstream"
        ]
    );
    let latency = &toxics[0];
    assert_eq!(latency.r#type, "latency");
    assert_eq!(latency.stream, "downstream");
    assert_eq!(latency.attributes["latency"], 100);
    assert_eq!(latency.attributes["jitter"], 10);
    assert_eq!(toxics[1].toxicity, 0.5);
    assert_eq!(toxics[4].attributes["size_variation"], 8);
    assert_eq!(toxics[5].attributes["bytes"], 4096);
    // The proxy listing carries the toxics too.
    assert_eq!(client.find_proxy("p").unwrap().proxy_pack.toxics.len(), 6);

    proxy.delete_all_toxics().unwrap();
    assert!(proxy.toxics().unwrap().is_empty());
}

#[test]
fn client_disables_enables_and_resets() {
    let server = Server::start();
    let client = Client::new(server.api());
    let created = client
        .populate(vec![ProxyPack::new(
            "p".into(),
            "127.0.0.1:0".into(),
            "127.0.0.1:9".into(),
        )])
        .unwrap();
    let listen = created[0].proxy_pack.listen.clone();
    let proxy = client.find_proxy("p").unwrap();

    proxy.disable().unwrap();
    assert!(!client.find_proxy("p").unwrap().proxy_pack.enabled);
    assert!(refused(&listen), "a disabled proxy refuses connections");
    proxy.enable().unwrap();
    let enabled = client.find_proxy("p").unwrap().proxy_pack;
    assert!(enabled.enabled);
    assert_eq!(enabled.listen, listen, "enabled again on the same address");
    assert!(!refused(&listen));

    proxy.with_latency("upstream".into(), 10, 0, 1.0);
    proxy.disable().unwrap();
    client.reset().unwrap();
    let after = client.find_proxy("p").unwrap().proxy_pack;
    assert!(after.enabled);
    assert!(after.toxics.is_empty());
    assert!(!refused(&listen));
}

#[test]
fn api_answers_with_toxiproxy_status_codes() {
    let server = Server::start();
    let api = server.api();
    let proxy = r#"{"name":"p","listen":"127.0.0.1:0","upstream":"127.0.0.1:9"}"#;
    let (status, body) = http(api, "POST", "/proxies", proxy);
    assert_eq!(status, 201);
    assert_eq!(body["enabled"], true);
    assert_eq!(body["toxics"], Value::Array(vec![]));
    let (status, body) = http(api, "POST", "/proxies", proxy);
    assert_eq!(status, 409);
    assert_eq!(body["error"], "proxy already exists");
    assert_eq!(body["status"], 409);
    assert_eq!(http(api, "POST", "/proxies", r#"{"name":"q"}"#).0, 400);
    assert_eq!(http(api, "POST", "/proxies", "{not json").0, 400);
    assert_eq!(
        http(
            api,
            "POST",
            "/proxies",
            r#"{"name":"r","listen":"0.0.0.0:0","upstream":"x:1"}"#
        )
        .0,
        400,
        "non-loopback listen addresses are refused"
    );
    let (status, body) = http(api, "GET", "/proxies/nope", "");
    assert_eq!(
        (status, body["error"].as_str()),
        (404, Some("proxy not found"))
    );

    let toxic = r#"{"type":"latency","attributes":{"latency":50}}"#;
    let (status, body) = http(api, "POST", "/proxies/p/toxics", toxic);
    assert_eq!(status, 200);
    assert_eq!(body["name"], "latency_downstream");
    assert_eq!(body["stream"], "downstream");
    assert_eq!(body["toxicity"], 1.0);
    assert_eq!(body["attributes"]["jitter"], 0);
    assert_eq!(http(api, "POST", "/proxies/p/toxics", toxic).0, 409);
    assert_eq!(
        http(api, "POST", "/proxies/p/toxics", r#"{"type":"nope"}"#).0,
        400
    );
    assert_eq!(
        http(
            api,
            "POST",
            "/proxies/p/toxics",
            r#"{"type":"latency","stream":"sideways"}"#
        )
        .0,
        400
    );
    assert_eq!(http(api, "POST", "/proxies/nope/toxics", toxic).0, 404);

    let (status, body) = http(
        api,
        "POST",
        "/proxies/p/toxics/latency_downstream",
        r#"{"attributes":{"jitter":5}}"#,
    );
    assert_eq!(status, 200);
    assert_eq!(
        body["attributes"]["latency"], 50,
        "unmentioned attributes stay"
    );
    assert_eq!(body["attributes"]["jitter"], 5);
    let (status, body) = http(api, "GET", "/proxies/p/toxics/latency_downstream", "");
    assert_eq!(
        (status, body["attributes"]["jitter"].as_u64()),
        (200, Some(5))
    );
    assert_eq!(http(api, "GET", "/proxies/p/toxics/nope", "").0, 404);
    assert_eq!(
        http(api, "DELETE", "/proxies/p/toxics/latency_downstream", "").0,
        204
    );
    assert_eq!(
        http(api, "DELETE", "/proxies/p/toxics/latency_downstream", "").0,
        404
    );

    let (status, body) = http(api, "POST", "/proxies/p", r#"{"enabled":false}"#);
    assert_eq!((status, body["enabled"].as_bool()), (200, Some(false)));
    let (status, body) = http(api, "PATCH", "/proxies/p", r#"{"enabled":true}"#);
    assert_eq!((status, body["enabled"].as_bool()), (200, Some(true)));

    let (status, body) = http(api, "POST", "/populate", r#"[{"name":"q"}]"#);
    assert_eq!(status, 400);
    // Toxiproxy's nil list of proxies made.
    assert_eq!(body["proxies"], Value::Null);
    assert_eq!(http(api, "POST", "/reset", "").0, 204);
    assert_eq!(http(api, "DELETE", "/proxies/p", "").0, 204);
    assert_eq!(http(api, "DELETE", "/proxies/p", "").0, 404);
    assert_eq!(http(api, "GET", "/nothing", "").0, 404);
}
