//! Watching an `etcd` cluster for what happens to the lock's keys: an etcd watch on every key,
//! opened on each member directly (not through its proxy), written to the run's server record
//! under one node name, `etcd`, since the members keep one replicated store.
//!
//! Every member's watch reports the same committed changes, each stamped with the revision
//! that made it; a change is written once, when the first member reports it, so a member the
//! nemesis paused, crashed or cut from its peers delays nothing the others can say. A member's
//! watch that broke is opened again from the revision after the last one it reported, so no
//! change is skipped while it was away. The mapping:
//!
//! - a put → `set`, the value being the key's value when it has one (lockpick's own etcd locks
//!   store the holder value, so the checker attributes it exactly) and otherwise its lease id
//!   in hex (`lease:694d8c3f2a1b7e05`: etcd's `concurrency.Mutex` and its lock service put an
//!   empty value under a key named after the lease);
//! - a delete → `expired` when the key's lease no longer exists (the cluster revoked it, its
//!   time to live having run out; a lease its holder revoked itself reads the same), else
//!   `deleted` (a client's delete: an unlock).
//!
//! No `ttl_ms` and no `renewed`: keep-alives extend a lease without any event a watch can see,
//! so a time to live read at a put would date the record's end too early (the checker's
//! logical end is the last set plus its ttl). An expiry is dated where the watch reported it,
//! a little after the cluster's lessor revoked the lease (it looks every 500 ms).

use crate::server::record::{Change, ServerLog};
use crate::server::{BoxFuture, Watch, WatchCtx, Watching};
use etcd_client::{Client, ConnectOptions, EventType, KeyValue, WatchOptions};
use lockpick_checker::server_record::RecordChange;
use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

pub(super) struct EtcdWatch;

/// The record's node name for the whole cluster (one replicated store, one majority of one).
pub(crate) const NODE: &str = "etcd";

/// How long connecting, and each lease lookup, may take. A member the nemesis stopped answers
/// after it; its watch is then opened again.
const LIMIT: Duration = Duration::from_secs(2);

/// How often a member whose watch broke is tried again.
const RECONNECT_EVERY: Duration = Duration::from_millis(50);

impl Watch for EtcdWatch {
    fn start(&self, ctx: WatchCtx) -> BoxFuture<'static, Result<Watching, String>> {
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = ctx.nodes.iter().map(|(_, a)| *a).collect();
            // Watching from the revision after the current one: a change made once this
            // returns is seen, however late a member's watch is created.
            let start_rev = current_revision(&addrs).await? + 1;
            let shared = Arc::new(Shared {
                log: ctx.log,
                written: Mutex::new(HashSet::new()),
            });
            let stop = CancellationToken::new();
            let mut tasks = tokio::task::JoinSet::new();
            for (_, addr) in ctx.nodes {
                let member = Member {
                    addr,
                    next_rev: start_rev,
                    shared: shared.clone(),
                };
                tasks.spawn(member.run(stop.clone()));
            }
            Ok(Watching { stop, tasks })
        })
    }
}

/// What the members' watchers share: the record, and which changes it has.
struct Shared {
    log: Arc<ServerLog>,
    /// `(revision, key)` of every change written: another member's report of it is left out.
    written: Mutex<HashSet<(i64, Vec<u8>)>>,
}

/// The watcher of one member.
struct Member {
    addr: SocketAddr,
    /// The first revision not reported by this member yet.
    next_rev: i64,
    shared: Arc<Shared>,
}

/// One change a watch reported, as the record needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    revision: i64,
    key: Vec<u8>,
    what: What,
    seen: Instant,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum What {
    Put {
        value: String,
    },
    /// A delete, with the lease the key had (0: none).
    Delete {
        lease: i64,
    },
}

impl Member {
    /// Follows the member until `stop`, opening its watch again whenever it breaks; at `stop`
    /// it asks the member how far it is and reads up to there.
    async fn run(mut self, stop: CancellationToken) {
        loop {
            if stop.is_cancelled() {
                return;
            }
            // A broken watch (the member crashed, was stopped, or lost its leader) is opened
            // again; the other members' watches cover the gap.
            if let Followed::Stopped = self.follow(&stop).await {
                return;
            }
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(RECONNECT_EVERY) => {}
            }
        }
    }

    /// One watch on the member, from `next_rev`, until it breaks or `stop`.
    async fn follow(&mut self, stop: &CancellationToken) -> Followed {
        let connected = tokio::select! {
            c = tokio::time::timeout(LIMIT, connect(self.addr)) => c,
            _ = stop.cancelled() => return Followed::Stopped,
        };
        let Ok(Ok(mut client)) = connected else {
            return Followed::Broke;
        };
        let options = WatchOptions::new()
            .with_all_keys()
            .with_prev_key()
            .with_start_revision(self.next_rev);
        let opened = tokio::select! {
            w = tokio::time::timeout(LIMIT, client.watch("", Some(options))) => w,
            _ = stop.cancelled() => return Followed::Stopped,
        };
        let Ok(Ok(mut stream)) = opened else {
            return Followed::Broke;
        };
        let mut stopping: Option<tokio::time::Instant> = None;
        loop {
            let message = match stopping {
                None => tokio::select! {
                    m = stream.message() => m,
                    _ = stop.cancelled() => {
                        // What the member committed so far comes before the answer to this.
                        if stream.request_progress().await.is_err() {
                            return Followed::Stopped;
                        }
                        stopping = Some(tokio::time::Instant::now() + LIMIT);
                        continue;
                    }
                },
                Some(until) => match tokio::time::timeout_at(until, stream.message()).await {
                    Ok(m) => m,
                    Err(_) => return Followed::Stopped,
                },
            };
            let Ok(Some(resp)) = message else {
                // The stream ended or broke: the member went away.
                return Followed::Broke;
            };
            if resp.canceled() {
                // Compacted past `next_rev` (lockpick never compacts during a run; a user's
                // external cluster may): go on from the oldest revision the member still has.
                if resp.compact_revision() > 0 {
                    self.next_rev = resp.compact_revision();
                }
                return Followed::Broke;
            }
            let seen = Instant::now();
            if resp.events().is_empty() && !resp.created() {
                // A progress report: everything up to its revision has been reported.
                if stopping.is_some() {
                    return Followed::Stopped;
                }
                continue;
            }
            let changes: Vec<Seen> = resp
                .events()
                .iter()
                .filter_map(|e| {
                    let kv = e.kv()?;
                    let what = match e.event_type() {
                        EventType::Put => What::Put {
                            value: record_value(kv),
                        },
                        EventType::Delete => What::Delete {
                            lease: e.prev_kv().map_or(0, |p| p.lease()),
                        },
                    };
                    Some(Seen {
                        revision: kv.mod_revision(),
                        key: kv.key().to_vec(),
                        what,
                        seen,
                    })
                })
                .collect();
            for change in changes {
                self.next_rev = self.next_rev.max(change.revision + 1);
                self.write(&mut client, change).await;
            }
        }
    }

    /// Writes `change` unless another member's report of it was written already.
    async fn write(&self, client: &mut Client, change: Seen) {
        let fresh = self
            .shared
            .written
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((change.revision, change.key.clone()));
        if !fresh {
            return;
        }
        let (event, value) = match change.what {
            What::Put { value } => (RecordChange::Set, Some(value)),
            What::Delete { lease } => (deletion(client, lease).await, None),
        };
        let log = &self.shared.log;
        log.write(Change {
            at_ns: log.ns_at(change.seen),
            node: NODE.to_owned(),
            key: String::from_utf8_lossy(&change.key).into_owned(),
            event,
            value,
            ttl_ms: None,
        });
    }
}

/// How a member's watch ended.
enum Followed {
    Stopped,
    Broke,
}

/// A key's value as the record's `value`: its own when it has one, else its lease.
fn record_value(kv: &KeyValue) -> String {
    match std::str::from_utf8(kv.value()) {
        Ok(v) if !v.is_empty() => v.to_owned(),
        Ok(_) => format!("lease:{:x}", kv.lease()),
        Err(_) => format!("hex:{}", hex(kv.value())),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What a delete of a key with `lease` was: `expired` when the lease is gone (the cluster
/// revokes an expired lease and deletes its keys in one step), `deleted` when it still exists
/// or the key had none, or when the lookup did not answer in time (a client's delete is the
/// commoner; the record says less, never a false expiry).
async fn deletion(client: &mut Client, lease: i64) -> RecordChange {
    if lease == 0 {
        return RecordChange::Deleted;
    }
    match tokio::time::timeout(LIMIT, client.lease_time_to_live(lease, None)).await {
        Ok(Ok(r)) if r.ttl() < 0 => RecordChange::Expired,
        Ok(Err(e)) if e.to_string().contains("not found") => RecordChange::Expired,
        _ => RecordChange::Deleted,
    }
}

/// A client of one member, without a request time limit (a watch is one long request).
async fn connect(addr: SocketAddr) -> Result<Client, etcd_client::Error> {
    let options = ConnectOptions::new().with_connect_timeout(LIMIT);
    Client::connect([addr.to_string()], Some(options)).await
}

/// The cluster's current revision, from the first member that answers.
async fn current_revision(addrs: &[SocketAddr]) -> Result<i64, String> {
    let mut why = Vec::new();
    for addr in addrs {
        let read = async {
            let mut client = connect(*addr).await.map_err(|e| e.to_string())?;
            let got = client
                .get("lockpick-watch", None)
                .await
                .map_err(|e| e.to_string())?;
            got.header()
                .map(|h| h.revision())
                .ok_or_else(|| "no header in the reply".to_owned())
        };
        match tokio::time::timeout(LIMIT, read).await {
            Ok(Ok(rev)) => return Ok(rev),
            Ok(Err(e)) => why.push(format!("{addr}: {e}")),
            Err(_) => why.push(format!("{addr}: timeout")),
        }
    }
    Err(format!(
        "no etcd member answered with its revision ({})",
        why.join("; ")
    ))
}
