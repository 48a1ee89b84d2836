//! What the harness uses: one named proxy per node, driven through the blocking
//! `toxiproxy_rust` client on a thread of its own, against any Toxiproxy API address.
//!
//! The client ignores HTTP status codes on most calls, so every operation reads the proxy
//! back and fails with [`ProxyError::Unexpected`] when the server did not do what was asked.

use super::api_worker::ApiWorker;
use super::error::ProxyError;
use crate::processes::{reserve_port, ReservedPort};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use toxiproxy_rust::client::Client;
use toxiproxy_rust::proxy::{Proxy, ProxyPack};
use toxiproxy_rust::toxic::ToxicPack;

const STREAMS: [&str; 2] = ["upstream", "downstream"];

/// How many fresh ports `create` tries: between choosing a port and the server binding it,
/// another process may take it, and the client cannot tell that refusal from others.
const CREATE_TRIES: usize = 3;

/// Why an operation failed inside the blocking worker.
enum Failure {
    Client(String),
    Unexpected(String),
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure::Client(message)
    }
}

/// Fault proxies behind one Toxiproxy API (embedded or external).
#[derive(Clone, Debug)]
pub struct FaultProxies {
    api: SocketAddr,
    /// Put before every proxy name on the server (see [`FaultProxies::in_namespace`]).
    namespace: String,
    worker: Arc<ApiWorker>,
    /// Listen ports of the proxies created here, leased until the proxy is deleted so that no
    /// node of this process is given one (a node's ports are chosen before it binds them, and
    /// a proxy listening on `:0` could take one in between).
    ports: Arc<Mutex<HashMap<String, ReservedPort>>>,
}

impl FaultProxies {
    /// Talks to the Toxiproxy API at `api_addr`; nothing is contacted until the first call.
    /// Starts the thread that owns the client (see `api_worker`).
    pub fn new(api_addr: SocketAddr) -> Result<FaultProxies, ProxyError> {
        let worker = ApiWorker::start(api_addr).map_err(ProxyError::ClientThread)?;
        Ok(FaultProxies {
            api: api_addr,
            namespace: String::new(),
            worker: Arc::new(worker),
            ports: Arc::default(),
        })
    }

    /// Names this facade's proxies `<namespace><name>` on the server, so that runs sharing
    /// one Toxiproxy (a user's, or CI's) neither replace nor delete each other's proxies.
    /// Callers keep using the short names.
    pub fn in_namespace(mut self, namespace: impl Into<String>) -> FaultProxies {
        self.namespace = namespace.into();
        self
    }

    /// The name of proxy `name` on the server.
    pub fn full_name(&self, name: &str) -> String {
        format!("{}{name}", self.namespace)
    }

    /// The Toxiproxy API address.
    pub fn api_addr(&self) -> SocketAddr {
        self.api
    }

    /// Runs `f` with this facade's client on its client thread.
    async fn run<T, F>(&self, proxy: &str, op: &'static str, f: F) -> Result<T, ProxyError>
    where
        T: Send + 'static,
        F: FnOnce(&Client) -> Result<T, Failure> + Send + 'static,
    {
        let api = self.api;
        let proxy = proxy.to_string();
        match self.worker.call(f).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(Failure::Client(message))) => Err(ProxyError::Client {
                api,
                proxy,
                op,
                message,
            }),
            Ok(Err(Failure::Unexpected(answer))) => Err(ProxyError::Unexpected {
                api,
                proxy,
                op,
                answer,
            }),
            Err(message) => Err(ProxyError::Worker { proxy, op, message }),
        }
    }

    /// Creates (or replaces) proxy `name` listening on 127.0.0.1:<free port> in front of
    /// `upstream`; returns the listen address. The port is leased to this proxy until
    /// [`FaultProxies::delete`].
    pub async fn create(&self, name: &str, upstream: SocketAddr) -> Result<SocketAddr, ProxyError> {
        let name = &self.full_name(name);
        let mut tries = 0;
        loop {
            tries += 1;
            let mut lease = reserve_port().map_err(|source| ProxyError::Port {
                proxy: name.to_string(),
                source,
            })?;
            let listen = SocketAddr::from(([127, 0, 0, 1], lease.port()));
            // The proxy server binds it now.
            lease.release();
            match self.create_at(name, listen, upstream).await {
                Ok(addr) => {
                    self.leases().insert(name.to_string(), lease);
                    return Ok(addr);
                }
                Err(ProxyError::Client { .. }) if tries < CREATE_TRIES => continue,
                Err(e) => return Err(e),
            }
        }
    }

    fn leases(&self) -> std::sync::MutexGuard<'_, HashMap<String, ReservedPort>> {
        self.ports.lock().unwrap_or_else(|p| p.into_inner())
    }

    async fn create_at(
        &self,
        name: &str,
        listen: SocketAddr,
        upstream: SocketAddr,
    ) -> Result<SocketAddr, ProxyError> {
        let name_owned = name.to_string();
        self.run(name, "create", move |client| {
            let pack = ProxyPack::new(name_owned.clone(), listen.to_string(), upstream.to_string());
            let created = client.populate(vec![pack])?;
            let proxy = created
                .iter()
                .find(|p| p.proxy_pack.name == name_owned)
                .ok_or_else(|| {
                    Failure::Unexpected("no such proxy in the populate answer".into())
                })?;
            let actual: SocketAddr = proxy.proxy_pack.listen.parse().map_err(|_| {
                Failure::Unexpected(format!("listen address {:?}", proxy.proxy_pack.listen))
            })?;
            if actual != listen || !proxy.proxy_pack.enabled {
                return Err(Failure::Unexpected(describe(&proxy.proxy_pack)));
            }
            Ok(actual)
        })
        .await
    }

    /// Points proxy `name` at a new `upstream`, on the same listen address (a failover: the
    /// clients' address now reaches another server). The client library has no call for
    /// `POST /proxies/{name}` with an upstream, so this populates the proxy again with the new
    /// upstream: Toxiproxy (and the embedded proxy) then replace it on the same address,
    /// closing its open connections and dropping its toxics. The answer is read back.
    pub async fn repoint(&self, name: &str, upstream: SocketAddr) -> Result<(), ProxyError> {
        let name = &self.full_name(name);
        let name_owned = name.to_string();
        self.run(name, "re-point", move |client| {
            let before = find(client, &name_owned)?;
            let listen = before.proxy_pack.listen.clone();
            let pack = ProxyPack::new(name_owned.clone(), listen.clone(), upstream.to_string());
            client.populate(vec![pack])?;
            let after = find(client, &name_owned)?;
            let upstream_now: Option<SocketAddr> = after.proxy_pack.upstream.parse().ok();
            if after.proxy_pack.listen != listen
                || upstream_now != Some(upstream)
                || !after.proxy_pack.enabled
            {
                return Err(Failure::Unexpected(describe(&after.proxy_pack)));
            }
            Ok(())
        })
        .await
    }

    /// Cuts the link both ways (timeout toxics, timeout 0, both streams): open connections
    /// and new ones (still accepted) get no answer for as long as the partition lasts. As in
    /// Toxiproxy 2.x, the bytes sent meanwhile are dropped, not queued, and removing the
    /// toxics (heal, reset) closes the connections they were on.
    pub async fn partition(&self, name: &str) -> Result<(), ProxyError> {
        let name = &self.full_name(name);
        let name_owned = name.to_string();
        self.run(name, "partition", move |client| {
            let proxy = find(client, &name_owned)?;
            let present = proxy.toxics()?;
            for stream in STREAMS {
                if !present
                    .iter()
                    .any(|t| t.name == format!("timeout_{stream}"))
                {
                    proxy.with_timeout(stream.to_string(), 0, 1.0);
                }
            }
            let toxics = proxy.toxics()?;
            for stream in STREAMS {
                let ok = toxics.iter().any(|t| {
                    t.r#type == "timeout"
                        && t.stream == stream
                        && t.toxicity >= 1.0
                        && t.attributes.get("timeout") == Some(&0)
                });
                if !ok {
                    return Err(Failure::Unexpected(format!(
                        "no timeout 0 toxic on {stream}: {}",
                        describe_toxics(&toxics)
                    )));
                }
            }
            Ok(())
        })
        .await
    }

    /// Adds `latency_ms` (± `jitter_ms`) in each direction, so a round trip grows by about
    /// twice that. Replaces latency set before; the client can only delete toxics all at
    /// once, so the other toxics are re-added right after (timeouts first), which leaves
    /// them briefly absent and, if a partition was among them, closes the connections it
    /// was on.
    pub async fn slow(
        &self,
        name: &str,
        latency_ms: u64,
        jitter_ms: u64,
    ) -> Result<(), ProxyError> {
        let name = &self.full_name(name);
        let name_owned = name.to_string();
        self.run(name, "slow", move |client| {
            let latency = u32::try_from(latency_ms)
                .map_err(|_| Failure::Unexpected(format!("latency {latency_ms} ms too large")))?;
            let jitter = u32::try_from(jitter_ms)
                .map_err(|_| Failure::Unexpected(format!("jitter {jitter_ms} ms too large")))?;
            let proxy = find(client, &name_owned)?;
            let present = proxy.toxics()?;
            if present.iter().any(|t| t.r#type == "latency") {
                proxy.delete_all_toxics()?;
                let mut others: Vec<&ToxicPack> =
                    present.iter().filter(|t| t.r#type != "latency").collect();
                others.sort_by_key(|t| t.r#type != "timeout");
                for toxic in others {
                    re_add(&proxy, toxic);
                }
            }
            for stream in STREAMS {
                proxy.with_latency(stream.to_string(), latency, jitter, 1.0);
            }
            let toxics = proxy.toxics()?;
            for stream in STREAMS {
                let ok = toxics.iter().any(|t| {
                    t.r#type == "latency"
                        && t.stream == stream
                        && t.attributes.get("latency") == Some(&latency)
                        && t.attributes.get("jitter") == Some(&jitter)
                });
                if !ok {
                    return Err(Failure::Unexpected(format!(
                        "no latency {latency} ms on {stream}: {}",
                        describe_toxics(&toxics)
                    )));
                }
            }
            Ok(())
        })
        .await
    }

    /// Takes the proxy down (enabled=false): connections refused and open ones closed.
    pub async fn down(&self, name: &str) -> Result<(), ProxyError> {
        let name = &self.full_name(name);
        let name_owned = name.to_string();
        self.run(name, "take down", move |client| {
            find(client, &name_owned)?.disable()?;
            let after = find(client, &name_owned)?;
            if after.proxy_pack.enabled {
                return Err(Failure::Unexpected(describe(&after.proxy_pack)));
            }
            Ok(())
        })
        .await
    }

    /// Turns off (`enabled = false`) or back on every proxy this facade created whose upstream is
    /// 127.0.0.1 on one of `ports`, leaving their toxics as they are; returns their short names.
    /// While a node is down its proxies are off, so a client connecting to it is refused at once,
    /// as by the real server's host, rather than accepted and closed (Toxiproxy's answer when it
    /// cannot reach the upstream, which some client libraries take for a server that answers
    /// and then hangs up, and wait on).
    pub async fn set_enabled_towards(
        &self,
        ports: &[u16],
        enabled: bool,
    ) -> Result<Vec<String>, ProxyError> {
        let namespace = self.namespace.clone();
        let ours: Vec<String> = self.leases().keys().cloned().collect();
        let ports = ports.to_vec();
        let op = if enabled { "enable" } else { "disable" };
        self.run("*", op, move |client| {
            let mut changed = Vec::new();
            let mut all: Vec<(String, Proxy)> = client.all()?.into_iter().collect();
            all.sort_by(|a, b| a.0.cmp(&b.0));
            for (name, proxy) in all {
                let Some(short) = name
                    .strip_prefix(namespace.as_str())
                    .filter(|_| ours.contains(&name))
                else {
                    continue;
                };
                let upstream: Option<SocketAddr> = proxy.proxy_pack.upstream.parse().ok();
                let towards =
                    upstream.is_some_and(|u| u.ip().is_loopback() && ports.contains(&u.port()));
                if !towards || proxy.proxy_pack.enabled == enabled {
                    continue;
                }
                if enabled {
                    proxy.enable()?;
                } else {
                    proxy.disable()?;
                }
                let after = find(client, &name)?;
                if after.proxy_pack.enabled != enabled {
                    return Err(Failure::Unexpected(describe(&after.proxy_pack)));
                }
                changed.push(short.to_string());
            }
            Ok(changed)
        })
        .await
    }

    /// Removes every toxic (one by one, both streams) and enables the proxy. Connections that
    /// lived through a partition are closed by this (see [`FaultProxies::partition`]).
    pub async fn heal(&self, name: &str) -> Result<(), ProxyError> {
        let name = &self.full_name(name);
        let name_owned = name.to_string();
        self.run(name, "heal", move |client| {
            let proxy = find(client, &name_owned)?;
            proxy.delete_all_toxics()?;
            proxy.enable()?;
            let after = find(client, &name_owned)?;
            if !after.proxy_pack.enabled || !after.proxy_pack.toxics.is_empty() {
                return Err(Failure::Unexpected(describe(&after.proxy_pack)));
            }
            Ok(())
        })
        .await
    }

    /// Deletes proxy `name`, closing its listener and connections. A proxy that is already
    /// gone is not an error: this is teardown, and it must be safe to repeat.
    pub async fn delete(&self, name: &str) -> Result<(), ProxyError> {
        let name = &self.full_name(name);
        let name_owned = name.to_string();
        self.run(name, "delete", move |client| {
            if !client.all()?.contains_key(&name_owned) {
                return Ok(());
            }
            find(client, &name_owned)?.delete()?;
            if client.all()?.contains_key(&name_owned) {
                return Err(Failure::Unexpected(
                    "proxy still listed after delete".into(),
                ));
            }
            Ok(())
        })
        .await?;
        self.leases().remove(name);
        Ok(())
    }

    /// Heals every proxy (POST /reset).
    pub async fn reset(&self) -> Result<(), ProxyError> {
        self.run("*", "reset", move |client| {
            client.reset()?;
            for proxy in client.all()?.values() {
                if !proxy.proxy_pack.enabled || !proxy.proxy_pack.toxics.is_empty() {
                    return Err(Failure::Unexpected(describe(&proxy.proxy_pack)));
                }
            }
            Ok(())
        })
        .await
    }
}

/// Finds a proxy, telling "not found" apart from other failures (the client reports a 404
/// only as a body it could not decode).
fn find(client: &Client, name: &str) -> Result<Proxy, Failure> {
    client
        .find_proxy(name)
        .map_err(|message| match client.all() {
            Ok(all) if !all.contains_key(name) => Failure::Unexpected("proxy not found".into()),
            _ => Failure::Client(message),
        })
}

/// Re-creates a toxic read from the server through the client's typed calls.
fn re_add(proxy: &Proxy, toxic: &ToxicPack) {
    let a = |key: &str| toxic.attributes.get(key).copied().unwrap_or(0);
    let stream = toxic.stream.clone();
    let toxicity = toxic.toxicity;
    match toxic.r#type.as_str() {
        "timeout" => proxy.with_timeout(stream, a("timeout"), toxicity),
        "bandwidth" => proxy.with_bandwidth(stream, a("rate"), toxicity),
        "slow_close" => proxy.with_slow_close(stream, a("delay"), toxicity),
        "slicer" => proxy.with_slicer(
            stream,
            a("average_size"),
            a("size_variation"),
            a("delay"),
            toxicity,
        ),
        "limit_data" => proxy.with_limit_data(stream, a("bytes"), toxicity),
        "latency" => proxy.with_latency(stream, a("latency"), a("jitter"), toxicity),
        _ => proxy,
    };
}

fn describe(pack: &ProxyPack) -> String {
    format!(
        "listen={} upstream={} enabled={} toxics=[{}]",
        pack.listen,
        pack.upstream,
        pack.enabled,
        describe_toxics(&pack.toxics)
    )
}

fn describe_toxics(toxics: &[ToxicPack]) -> String {
    toxics
        .iter()
        .map(|t| format!("{}({} {} {:?})", t.name, t.r#type, t.stream, t.attributes))
        .collect::<Vec<_>>()
        .join(", ")
}
