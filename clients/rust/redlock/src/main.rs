//! lockpick adapter for the `redlock` crate 2.0.0 (docs/client-protocol.md), used as its README
//! shows: `RedLock::new(vec!["redis://host:port", …])`, `rl.lock(resource, ttl)` returning
//! `Some(Lock)` with its `validity_time`, `rl.unlock(&lock)`. Built in release mode, as a
//! service would ship it. No fencing token, no extension (the crate has neither).

use redlock::{Lock, RedLock};
use serde_json::{json, Value};
use std::io::{BufRead, Write};

fn main() {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    let mut state: Option<(&'static RedLock, Vec<u8>, usize)> = None;
    let mut held: Option<Lock<'static>> = None;
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let request: Value = serde_json::from_str(&line).expect("lockpick sends JSON");
        let id = request["id"].clone();
        let reply = match request["type"].as_str().unwrap_or_default() {
            // It takes no options (lockpick-adapter.json): any is refused, never ignored.
            "init"
                if request["extra"]
                    .as_object()
                    .is_some_and(|extra| !extra.is_empty()) =>
            {
                let keys: Vec<&String> = request["extra"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, _)| k)
                    .collect();
                json!({"type": "fail", "reason": format!(
                    "init.{}: the adapter takes no such option; allowed: none (lockpick-adapter.json)",
                    keys[0]
                )})
            }
            "init" => {
                let uris: Vec<String> = request["nodes"]
                    .as_array()
                    .expect("init has nodes")
                    .iter()
                    .map(|n| format!("redis://{}", n.as_str().unwrap_or_default()))
                    .collect();
                let mut rl = RedLock::new(uris);
                let delay = request["retry_delay_ms"][1].as_u64().unwrap_or(20).max(1);
                let acquire_ms = request["acquire_timeout_ms"].as_u64().unwrap_or(2000);
                // Tries spread over the acquire timeout (the delay is drawn from 0..delay).
                rl.set_retry((2 * acquire_ms / delay).max(1) as u32, delay as u32);
                let resource = format!(
                    "lockpick:lock:{}",
                    request["lock"].as_str().unwrap_or("lock")
                );
                let ttl = request["ttl_ms"].as_u64().unwrap_or(1000) as usize;
                state = Some((Box::leak(Box::new(rl)), resource.into_bytes(), ttl));
                json!({"type": "hello", "protocol": 1, "adapter": "rust-redlock",
                       "library": "redlock", "version": "2.0.0", "ops": ["acquire", "release"]})
            }
            "acquire" => {
                let (rl, resource, ttl) = state.as_ref().expect("init first");
                match rl.lock(resource, *ttl) {
                    Ok(Some(lock)) => {
                        // What the crate computed; a slow acquire underflows it (usize).
                        let validity = lock.validity_time as u64;
                        held = Some(lock);
                        json!({"type": "ok", "token": null, "lease_ms": validity,
                               "note": format!("validity_time {validity}")})
                    }
                    Ok(None) => json!({"type": "fail", "reason": "timeout-waiting"}),
                    // A node error aborts lock() at once, keys set on earlier nodes stay.
                    Err(e) => json!({"type": "info", "reason": e.to_string()}),
                }
            }
            "release" => match held.take() {
                Some(lock) => {
                    // unlock() returns nothing: it cannot say whether the keys were ours.
                    lock.lock_manager.unlock(&lock);
                    json!({"type": "ok"})
                }
                None => json!({"type": "fail", "reason": "not-owner"}),
            },
            other => {
                eprintln!("adapter: unexpected request {other:?}");
                std::process::exit(2);
            }
        };
        let mut reply = reply;
        reply["id"] = id;
        writeln!(out, "{reply}")
            .and_then(|_| out.flush())
            .expect("stdout");
    }
}
