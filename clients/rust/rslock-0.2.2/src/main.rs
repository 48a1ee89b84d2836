//! lockpick adapter for the `rslock` crate's 0.2/0.3 API (docs/client-protocol.md), Redlock
//! over every node, used as its README shows: the `tokio-comp` runtime feature,
//! `LockManager::new(uris)`, `lock(resource, ttl_ms)` retried "after a short wait time" until
//! it grants, `extend(&lock, ttl_ms)` to renew by hand, and `unlock(&lock)`. lockpick's
//! acquire has a bound where the README's loop has none: this adapter calls `lock` (one
//! Redlock attempt with the crate's own retries: SET NX PX on every master at once over new
//! connections, held with a majority and a validity left, ttl - drift - elapsed; else unlocked
//! everywhere and tried again, 3 tries 0-200 ms apart) until the acquire timeout. It reports
//! the validity the crate returns as the grant's lease, as a user reads it. No fencing token
//! (the crate has none). Built in release mode, as a service would ship it: there 0.2.2's
//! validity, a `usize`, wraps when a try outlasts the TTL (a debug build panics), which 0.3.0
//! refuses first (`TtlExceeded`, PR #9).

use rslock::{Lock, LockError, LockManager};
use serde_json::{json, Value};
use std::io::{BufRead, Write};
use std::time::{Duration, Instant};

/// What init gave: the manager (leaked: a `Lock` borrows it for the adapter's life) and the
/// lock's parameters.
struct Setup {
    manager: &'static LockManager,
    resource: Vec<u8>,
    ttl_ms: usize,
    acquire_timeout: Duration,
    retry_delay: (u64, u64),
}

fn main() {
    // One thread: the adapter answers one request at a time.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let stdin = std::io::stdin();
    let mut out = std::io::stdout();
    let mut setup: Option<Setup> = None;
    let mut held: Option<Lock<'static>> = None;
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let request: Value = serde_json::from_str(&line).expect("lockpick sends JSON");
        let id = request["id"].clone();
        let mut reply = match request["type"].as_str().unwrap_or_default() {
            "init" => match init(&request) {
                Ok(s) => {
                    rng ^= request["seed"].as_u64().unwrap_or(0) | 1;
                    setup = Some(s);
                    json!({"type": "hello", "protocol": 1, "adapter": "rust-rslock",
                           "library": "rslock", "version": env!("RSLOCK_VERSION"),
                           "ops": ["acquire", "release", "renew"]})
                }
                Err(reason) => json!({"type": "fail", "reason": reason}),
            },
            "acquire" => {
                let s = setup.as_ref().expect("init first");
                runtime.block_on(acquire(s, &mut held, &mut rng))
            }
            "renew" => {
                let s = setup.as_ref().expect("init first");
                match held.as_ref() {
                    None => json!({"type": "fail", "reason": "not-owner"}),
                    Some(lock) => match runtime.block_on(s.manager.extend(lock, s.ttl_ms)) {
                        Ok(extended) => {
                            let validity = extended.validity_time as u64;
                            held = Some(extended);
                            json!({"type": "ok", "lease_ms": validity})
                        }
                        // No majority ran the extend script on our value: by Redlock's rule
                        // the lock is not ours any more.
                        Err(e) if retryable(&e) => json!({"type": "fail", "reason": "lost"}),
                        Err(e) => json!({"type": "info", "reason": format!("{e:?}")}),
                    },
                }
            }
            "release" => match held.take() {
                Some(lock) => {
                    let s = setup.as_ref().expect("init first");
                    // Best effort on every master; it says nothing about whether the keys
                    // were still ours.
                    runtime.block_on(s.manager.unlock(&lock));
                    json!({"type": "ok"})
                }
                None => json!({"type": "fail", "reason": "not-owner"}),
            },
            other => {
                eprintln!("adapter: unexpected request {other:?}");
                std::process::exit(2);
            }
        };
        reply["id"] = id;
        writeln!(out, "{reply}")
            .and_then(|_| out.flush())
            .expect("stdout");
    }
}

/// Whether a failed `lock` or `extend` held nothing and may be tried again: no majority, or
/// (0.3.0 on) a try that took longer than the TTL.
fn retryable(e: &LockError) -> bool {
    #[cfg(ttl_exceeded)]
    if matches!(e, LockError::TtlExceeded) {
        return true;
    }
    matches!(e, LockError::Unavailable)
}

/// Builds the manager from init; an `extra` option is refused (it takes none).
fn init(request: &Value) -> Result<Setup, String> {
    if let Some((key, _)) = request["extra"].as_object().and_then(|e| e.iter().next()) {
        return Err(format!(
            "init.{key}: the adapter takes no such option; allowed: none (lockpick-adapter.json)"
        ));
    }
    let uris: Vec<String> = request["nodes"]
        .as_array()
        .ok_or("init has no nodes")?
        .iter()
        .map(|n| format!("redis://{}/", n.as_str().unwrap_or_default()))
        .collect();
    let ms = |field: &str, default: u64| request[field].as_u64().unwrap_or(default);
    Ok(Setup {
        manager: Box::leak(Box::new(LockManager::new(uris))),
        resource: format!(
            "lockpick:lock:{}",
            request["lock"].as_str().unwrap_or("lock")
        )
        .into_bytes(),
        ttl_ms: ms("ttl_ms", 1000) as usize,
        acquire_timeout: Duration::from_millis(ms("acquire_timeout_ms", 2000)),
        retry_delay: (
            request["retry_delay_ms"][0].as_u64().unwrap_or(5),
            request["retry_delay_ms"][1].as_u64().unwrap_or(20),
        ),
    })
}

/// `lock` until it grants or the acquire timeout has passed.
async fn acquire(s: &Setup, held: &mut Option<Lock<'static>>, rng: &mut u64) -> Value {
    let deadline = Instant::now() + s.acquire_timeout;
    loop {
        match s.manager.lock(&s.resource, s.ttl_ms).await {
            Ok(lock) => {
                let validity = lock.validity_time as u64;
                *held = Some(lock);
                return json!({"type": "ok", "token": null, "lease_ms": validity});
            }
            // Nothing is held (its SETs were deleted); try again.
            Err(e) if retryable(&e) => {}
            Err(e) => return json!({"type": "info", "reason": format!("{e:?}")}),
        }
        if Instant::now() >= deadline {
            return json!({"type": "fail", "reason": "timeout-waiting"});
        }
        // xorshift: the adapter's own pause between attempts, in the scenario's range.
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        let (lo, hi) = s.retry_delay;
        tokio::time::sleep(Duration::from_millis(lo + *rng % (hi - lo + 1))).await;
    }
}
