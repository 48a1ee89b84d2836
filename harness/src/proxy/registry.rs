//! The proxies of the embedded server and the operations of Toxiproxy's HTTP API on them,
//! answering with Toxiproxy 2.x's JSON shapes and status codes.

use super::link::ToxicList;
use super::listener::Listening;
use super::toxic::{ApiError, Toxic};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::{watch, Mutex};

/// A successful answer: status code and JSON body (`None` for 204).
pub type Answer = (u16, Option<Value>);

struct ProxyEntry {
    name: String,
    /// The requested address until the first bind, then the bound one, so that enabling
    /// again listens on the same port.
    listen: String,
    upstream: String,
    toxics: Vec<Toxic>,
    toxics_tx: watch::Sender<ToxicList>,
    listening: Option<Listening>,
}

impl ProxyEntry {
    fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "listen": self.listen,
            "upstream": self.upstream,
            "enabled": self.listening.is_some(),
            "toxics": self.toxics.iter().map(Toxic::to_json).collect::<Vec<_>>(),
        })
    }

    fn publish_toxics(&self) {
        self.toxics_tx.send_replace(Arc::new(self.toxics.clone()));
    }

    async fn enable(&mut self) -> Result<(), ApiError> {
        if self.listening.is_some() {
            return Ok(());
        }
        let addr = resolve_listen(&self.listen).await?;
        let listening = Listening::start(addr, self.upstream.clone(), self.toxics_tx.subscribe())
            .await
            .map_err(|e| ApiError::new(500, format!("listen tcp {addr}: {e}")))?;
        self.listen = listening.addr.to_string();
        self.listening = Some(listening);
        Ok(())
    }

    async fn disable(&mut self) {
        if let Some(listening) = self.listening.take() {
            listening.stop().await;
        }
    }
}

/// Resolves a listen address and keeps it on loopback; empty means any free loopback port.
/// A host name takes its first IPv4 address if it has one, as Go's resolver does for "tcp"
/// (so `localhost:P` is `127.0.0.1:P`, where Toxiproxy would listen).
async fn resolve_listen(listen: &str) -> Result<SocketAddr, ApiError> {
    let listen = if listen.is_empty() {
        "127.0.0.1:0"
    } else {
        listen
    };
    let addr = match listen.parse::<SocketAddr>() {
        Ok(addr) => addr,
        Err(_) => {
            let addrs = tokio::net::lookup_host(listen).await.map_err(|e| {
                ApiError::bad_request(format!("invalid listen address {listen}: {e}"))
            })?;
            crate::addr::pick_resolved(addrs)
                .ok_or_else(|| ApiError::bad_request(format!("invalid listen address {listen}")))?
        }
    };
    if !addr.ip().is_loopback() {
        return Err(ApiError::bad_request(format!(
            "listen address {addr} is not loopback; this server only listens on loopback"
        )));
    }
    Ok(addr)
}

fn proxy_not_found() -> ApiError {
    ApiError::new(404, "proxy not found")
}

fn toxic_not_found() -> ApiError {
    ApiError::new(404, "toxic not found")
}

/// Fields of a proxy in a create, populate or update body.
struct ProxyInput {
    name: Option<String>,
    listen: Option<String>,
    upstream: Option<String>,
    enabled: Option<bool>,
}

impl ProxyInput {
    fn parse(body: &Value) -> Result<ProxyInput, ApiError> {
        let bad = |field: &str| ApiError::bad_request(format!("bad request body: {field}"));
        let obj = body.as_object().ok_or_else(|| bad("expected an object"))?;
        let string = |field: &str| -> Result<Option<String>, ApiError> {
            match obj.get(field) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(bad(&format!("{field} must be a string"))),
            }
        };
        let enabled = match obj.get("enabled") {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => return Err(bad("enabled must be a boolean")),
        };
        Ok(ProxyInput {
            name: string("name")?,
            listen: string("listen")?,
            upstream: string("upstream")?,
            enabled,
        })
    }

    /// Name and upstream are required to create a proxy.
    fn required(&self) -> Result<(String, String), ApiError> {
        let missing =
            |field: &str| ApiError::bad_request(format!("missing required field: {field}"));
        let name = self
            .name
            .clone()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| missing("name"))?;
        let upstream = self
            .upstream
            .clone()
            .filter(|u| !u.is_empty())
            .ok_or_else(|| missing("upstream"))?;
        Ok((name, upstream))
    }
}

/// All proxies of one embedded server.
#[derive(Default)]
pub struct Registry {
    proxies: Mutex<BTreeMap<String, ProxyEntry>>,
}

impl Registry {
    async fn new_entry(
        name: String,
        input: &ProxyInput,
        upstream: String,
    ) -> Result<ProxyEntry, ApiError> {
        let (toxics_tx, _) = watch::channel(Arc::new(Vec::new()));
        let mut entry = ProxyEntry {
            name,
            listen: input.listen.clone().unwrap_or_default(),
            upstream,
            toxics: Vec::new(),
            toxics_tx,
            listening: None,
        };
        if input.enabled.unwrap_or(true) {
            entry.enable().await?;
        } else {
            // Validate the address now even though nothing listens yet.
            resolve_listen(&entry.listen).await?;
        }
        Ok(entry)
    }

    /// `GET /proxies`: every proxy with its toxics, keyed by name.
    pub async fn list(&self) -> Answer {
        let proxies = self.proxies.lock().await;
        let map: Map<String, Value> = proxies
            .iter()
            .map(|(name, p)| (name.clone(), p.to_json()))
            .collect();
        (200, Some(Value::Object(map)))
    }

    /// `POST /proxies`.
    pub async fn create(&self, body: &Value) -> Result<Answer, ApiError> {
        let input = ProxyInput::parse(body)?;
        let (name, upstream) = input.required()?;
        let mut proxies = self.proxies.lock().await;
        if proxies.contains_key(&name) {
            return Err(ApiError::new(409, "proxy already exists"));
        }
        let entry = Self::new_entry(name.clone(), &input, upstream).await?;
        let json = entry.to_json();
        proxies.insert(name, entry);
        Ok((201, Some(json)))
    }

    /// `POST /populate`: creates or replaces each proxy; one with the same listen and
    /// upstream is kept as it is. On error the answer still lists the proxies done so far.
    pub async fn populate(&self, body: &Value) -> (u16, Value) {
        let mut done = Vec::new();
        let result = self.populate_into(body, &mut done).await;
        // Toxiproxy's list of proxies done is a Go slice that stays nil when empty, so an
        // answer with none says `null`, on success and on failure alike.
        let done = if done.is_empty() {
            Value::Null
        } else {
            Value::Array(done)
        };
        match result {
            Ok(()) => (201, json!({ "proxies": done })),
            Err(e) => (
                e.status,
                json!({ "error": e.message, "status": e.status, "proxies": done }),
            ),
        }
    }

    async fn populate_into(&self, body: &Value, done: &mut Vec<Value>) -> Result<(), ApiError> {
        let items = body
            .as_array()
            .ok_or_else(|| ApiError::bad_request("bad request body: expected an array"))?;
        // Every entry is checked before any is applied; a missing field names the entry
        // ("missing required field: name at proxy 2"), as Toxiproxy says it.
        let inputs = items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let input = ProxyInput::parse(item)?;
                let required = input.required().map_err(|mut e| {
                    e.message = format!("{} at proxy {}", e.message, i + 1);
                    e
                })?;
                Ok((input, required))
            })
            .collect::<Result<Vec<_>, ApiError>>()?;
        let mut proxies = self.proxies.lock().await;
        for (input, (name, upstream)) in inputs {
            if let Some(existing) = proxies.get(&name) {
                // As Toxiproxy, compare the resolved address with the bound one: a proxy
                // populated again as `localhost:P` is the one on `127.0.0.1:P`, and keeps
                // its toxics and connections.
                let wanted = input.listen.as_deref().unwrap_or_default();
                let same_listen = wanted == existing.listen
                    || resolve_listen(wanted)
                        .await
                        .is_ok_and(|a| a.to_string() == existing.listen);
                if same_listen && existing.upstream == upstream {
                    done.push(existing.to_json());
                    continue;
                }
                if let Some(mut old) = proxies.remove(&name) {
                    old.disable().await;
                }
            }
            let entry = Self::new_entry(name.clone(), &input, upstream).await?;
            done.push(entry.to_json());
            proxies.insert(name, entry);
        }
        Ok(())
    }

    /// `POST /reset`: enables every proxy and removes all toxics.
    pub async fn reset(&self) -> Result<Answer, ApiError> {
        let mut proxies = self.proxies.lock().await;
        for entry in proxies.values_mut() {
            entry.enable().await?;
            entry.toxics.clear();
            entry.publish_toxics();
        }
        Ok((204, None))
    }

    pub async fn get(&self, name: &str) -> Result<Answer, ApiError> {
        let proxies = self.proxies.lock().await;
        let entry = proxies.get(name).ok_or_else(proxy_not_found)?;
        Ok((200, Some(entry.to_json())))
    }

    /// `POST /proxies/{name}`: a changed listen or upstream restarts the listener;
    /// `enabled` opens or closes it (closing also closes every open connection).
    pub async fn update(&self, name: &str, body: &Value) -> Result<Answer, ApiError> {
        let input = ProxyInput::parse(body)?;
        let mut proxies = self.proxies.lock().await;
        let entry = proxies.get_mut(name).ok_or_else(proxy_not_found)?;
        let listen = input.listen.clone().unwrap_or_else(|| entry.listen.clone());
        let upstream = input
            .upstream
            .clone()
            .unwrap_or_else(|| entry.upstream.clone());
        let enabled = input.enabled.unwrap_or(entry.listening.is_some());
        if listen != entry.listen || upstream != entry.upstream {
            resolve_listen(&listen).await?;
            entry.disable().await;
            entry.listen = listen;
            entry.upstream = upstream;
        }
        if enabled {
            entry.enable().await?;
        } else {
            entry.disable().await;
        }
        Ok((200, Some(entry.to_json())))
    }

    pub async fn delete(&self, name: &str) -> Result<Answer, ApiError> {
        let mut entry = self
            .proxies
            .lock()
            .await
            .remove(name)
            .ok_or_else(proxy_not_found)?;
        entry.disable().await;
        Ok((204, None))
    }

    pub async fn toxics(&self, name: &str) -> Result<Answer, ApiError> {
        let proxies = self.proxies.lock().await;
        let entry = proxies.get(name).ok_or_else(proxy_not_found)?;
        let list: Vec<Value> = entry.toxics.iter().map(Toxic::to_json).collect();
        Ok((200, Some(Value::Array(list))))
    }

    pub async fn create_toxic(&self, name: &str, body: &Value) -> Result<Answer, ApiError> {
        let mut proxies = self.proxies.lock().await;
        let entry = proxies.get_mut(name).ok_or_else(proxy_not_found)?;
        let toxics = &entry.toxics;
        let toxic = Toxic::from_create_json(body, &|name| toxics.iter().any(|t| t.name == name))?;
        let json = toxic.to_json();
        entry.toxics.push(toxic);
        entry.publish_toxics();
        Ok((200, Some(json)))
    }

    pub async fn get_toxic(&self, name: &str, toxic: &str) -> Result<Answer, ApiError> {
        let proxies = self.proxies.lock().await;
        let entry = proxies.get(name).ok_or_else(proxy_not_found)?;
        let toxic = entry
            .toxics
            .iter()
            .find(|t| t.name == toxic)
            .ok_or_else(toxic_not_found)?;
        Ok((200, Some(toxic.to_json())))
    }

    pub async fn update_toxic(
        &self,
        name: &str,
        toxic: &str,
        body: &Value,
    ) -> Result<Answer, ApiError> {
        let mut proxies = self.proxies.lock().await;
        let entry = proxies.get_mut(name).ok_or_else(proxy_not_found)?;
        let slot = entry
            .toxics
            .iter_mut()
            .find(|t| t.name == toxic)
            .ok_or_else(toxic_not_found)?;
        *slot = slot.updated(body)?;
        let json = slot.to_json();
        entry.publish_toxics();
        Ok((200, Some(json)))
    }

    pub async fn delete_toxic(&self, name: &str, toxic: &str) -> Result<Answer, ApiError> {
        let mut proxies = self.proxies.lock().await;
        let entry = proxies.get_mut(name).ok_or_else(proxy_not_found)?;
        let before = entry.toxics.len();
        entry.toxics.retain(|t| t.name != toxic);
        if entry.toxics.len() == before {
            return Err(toxic_not_found());
        }
        entry.publish_toxics();
        Ok((204, None))
    }

    /// Stops every proxy and closes all their connections.
    pub async fn shutdown(&self) {
        let mut proxies = self.proxies.lock().await;
        for (_, mut entry) in std::mem::take(&mut *proxies) {
            entry.disable().await;
        }
    }
}
