//! Watching a `redis-sentinel` server's lock: the record of the master the sentinels name,
//! whichever node that is, written as one node, [`MASTER_NODE`]. A sentinel client asks the
//! sentinels for the master and takes its lock there, so that record is the lock; a replica's
//! copy is not (it grants nothing), and an old master cut off from the sentinels keeps granting
//! to the clients that still reach it, on a record no new client reads (the split brain).
//!
//! Every data node is watched as a `redis` node is ([`super::watch`]), and a change passes
//! only while its node is the master. The master is the one the sentinel with the highest
//! configuration epoch names (`SENTINEL MASTER`), asked every [`ASK_EVERY`]. When it changes
//! (a failover promoted a replica), the record shows the switch as the master's `reset`
//! followed by a `set` of every lock record the new master holds (its value and time to live,
//! read at the switch): what a holder's key became when the sentinels moved the lock (kept, if
//! it reached the replica in time; lost, if not).

use super::watch::{read_value, watch_nodes, Sink, LIMIT};
use crate::server::record::{Change, ServerLog};
use crate::server::{BoxFuture, Sentinels, Watch, WatchCtx, Watching};
use lockpick_checker::server_record::{RecordChange, RESET_KEY};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

pub(super) struct SentinelWatch;

/// The name of the record's one node: the master, wherever the sentinels put it.
pub const MASTER_NODE: &str = "master";

/// How often the sentinels are asked which node is the master. A failover takes seconds; a
/// switch is written within this of the sentinels' own.
const ASK_EVERY: Duration = Duration::from_millis(50);

/// How long the watch's start waits for a sentinel to name the master.
const FIRST_ANSWER_LIMIT: Duration = Duration::from_secs(10);

impl Watch for SentinelWatch {
    fn start(&self, ctx: WatchCtx) -> BoxFuture<'static, Result<Watching, String>> {
        Box::pin(async move {
            let Some(sentinels) = ctx.sentinels.clone() else {
                return Err("a redis-sentinel server without its sentinels".to_owned());
            };
            let mut nodes = Nodes::of(&ctx, &sentinels);
            // Asked again for a while: a sentinel on a loaded machine may not answer one
            // question within its 300 ms.
            let deadline = Instant::now() + FIRST_ANSWER_LIMIT;
            let first = loop {
                if let Some(first) = nodes.master().await {
                    break first;
                }
                if Instant::now() >= deadline {
                    return Err(format!(
                        "ask the sentinels at {:?} which node is the master: no answer naming a node in {} s",
                        sentinels.addrs,
                        FIRST_ANSWER_LIMIT.as_secs()
                    ));
                }
                tokio::time::sleep(ASK_EVERY).await;
            };
            let gate = Arc::new(Gate {
                log: ctx.log.clone(),
                master: Mutex::new(Some(first.clone())),
            });
            let stop = CancellationToken::new();
            let mut tasks = tokio::task::JoinSet::new();
            watch_nodes(&ctx, gate.clone(), &mut tasks, &stop).await?;
            tasks.spawn(follow(gate, nodes, first, stop.clone()));
            Ok(Watching { stop, tasks })
        })
    }
}

/// The data nodes: each one's name, direct address, and the address the sentinels name it by;
/// and a connection to each sentinel, kept: a new one for every question would churn the sockets
/// whose owners the nodes' routers look up in /proc (with one every 25 ms to each sentinel, the
/// sentinels' own pings through those routers timed out and they failed the master over
/// before the run began).
struct Nodes {
    all: Vec<(String, SocketAddr, SocketAddr)>,
    sentinels: Sentinels,
    conns: Vec<Option<redis::aio::MultiplexedConnection>>,
}

impl Nodes {
    fn of(ctx: &WatchCtx, sentinels: &Sentinels) -> Nodes {
        // `nat` is in node order, as `ctx.nodes` is.
        let all = (ctx.nodes.iter())
            .zip(&sentinels.nat)
            .map(|((name, direct), (named, _))| (name.clone(), *direct, *named))
            .collect();
        Nodes {
            all,
            conns: sentinels.addrs.iter().map(|_| None).collect(),
            sentinels: sentinels.clone(),
        }
    }

    /// The node the sentinel with the highest configuration epoch names as the master, if a
    /// sentinel answered with a node lockpick knows.
    async fn master(&mut self) -> Option<String> {
        let mut best: Option<(u64, String)> = None;
        for (s, conn) in self.sentinels.addrs.iter().zip(&mut self.conns) {
            let Some((epoch, named)) = ask_master(*s, conn, &self.sentinels.master).await else {
                continue;
            };
            let Some((name, ..)) = self.all.iter().find(|(_, _, n)| *n == named) else {
                continue;
            };
            if best.as_ref().is_none_or(|(e, _)| epoch > *e) {
                best = Some((epoch, name.clone()));
            }
        }
        best.map(|(_, name)| name)
    }

    fn direct(&self, name: &str) -> Option<SocketAddr> {
        self.all
            .iter()
            .find(|(n, ..)| n == name)
            .map(|(_, d, _)| *d)
    }
}

/// Passes on the changes of the master's watcher as [`MASTER_NODE`]'s; none while the
/// master is being switched.
struct Gate {
    log: Arc<ServerLog>,
    master: Mutex<Option<String>>,
}

impl Sink for Gate {
    fn write(&self, mut change: Change) {
        // Held while writing, so that a switch cannot come between the check and the line.
        let master = self.master.lock().unwrap_or_else(|p| p.into_inner());
        if master.as_deref() == Some(change.node.as_str()) {
            change.node = MASTER_NODE.to_owned();
            self.log.write(change);
        }
    }
}

/// Asks the sentinels which node is the master until `stop`; on a change, writes the switch.
async fn follow(gate: Arc<Gate>, mut nodes: Nodes, mut master: String, stop: CancellationToken) {
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(ASK_EVERY) => {}
        }
        let Some(now) = nodes.master().await else {
            continue;
        };
        if now == master {
            continue;
        }
        // Nothing passes while the new master's records are read: a change of its during the
        // reading is in what is read, or (within the reading's few milliseconds) left out.
        *gate.master.lock().unwrap_or_else(|p| p.into_inner()) = None;
        let switched = Instant::now();
        let at_ns = gate.log.ns_at(switched);
        gate.log.write(Change {
            at_ns,
            node: MASTER_NODE.to_owned(),
            key: RESET_KEY.to_owned(),
            event: RecordChange::Reset,
            value: Some(format!(
                "the sentinels made {now} the master (it was {master}), and the lock's records are what {now} holds"
            )),
            ttl_ms: None,
        });
        let held = match nodes.direct(&now) {
            Some(addr) => records(addr).await,
            None => Vec::new(),
        };
        let mut open = gate.master.lock().unwrap_or_else(|p| p.into_inner());
        // Stamped at the switch, as the new master held them then (its few milliseconds of
        // reading added back to the time to live, as a notification's reading is): a record
        // the switch kept does not look lost for that long.
        for (key, value, ttl, read) in held {
            gate.log.write(Change {
                at_ns,
                node: MASTER_NODE.to_owned(),
                key,
                event: RecordChange::Set,
                value: Some(value),
                ttl_ms: ttl
                    .map(|t| t + read.saturating_duration_since(switched).as_millis() as u64),
            });
        }
        *open = Some(now.clone());
        drop(open);
        master = now;
    }
}

/// `SENTINEL MASTER <name>` at sentinel `addr`, on `conn` (opened if there is none, dropped
/// when it fails): its configuration epoch and the master's address as it names it.
async fn ask_master(
    addr: SocketAddr,
    conn: &mut Option<redis::aio::MultiplexedConnection>,
    master: &str,
) -> Option<(u64, SocketAddr)> {
    let limit = Duration::from_millis(300);
    if conn.is_none() {
        *conn = crate::wire::redis::connect(addr, limit).await.ok();
    }
    let con = conn.as_mut()?;
    let answer = tokio::time::timeout(
        limit,
        redis::cmd("SENTINEL")
            .arg("MASTER")
            .arg(master)
            .query_async::<HashMap<String, String>>(con),
    )
    .await;
    let Ok(Ok(fields)) = answer else {
        *conn = None;
        return None;
    };
    let epoch = fields.get("config-epoch")?.parse().ok()?;
    let ip: std::net::IpAddr = fields.get("ip")?.parse().ok()?;
    let port: u16 = fields.get("port")?.parse().ok()?;
    Some((epoch, SocketAddr::new(ip, port)))
}

/// Every lock record on the node at `addr` (one of lockpick's own, whose few keys `KEYS` lists
/// at once): each string or hash key's value and time to live
/// (`None`: none), and when it was read. A string that reads as an integer is a fencing-token counter, not a lock's
/// record, and is left out, as its `incr` notifications are.
async fn records(addr: SocketAddr) -> Vec<(String, String, Option<u64>, Instant)> {
    let Ok(mut con) = crate::wire::redis::connect(addr, LIMIT).await else {
        return Vec::new();
    };
    let Ok(Ok(keys)) = tokio::time::timeout(
        LIMIT,
        redis::cmd("KEYS")
            .arg("*")
            .query_async::<Vec<String>>(&mut con),
    )
    .await
    else {
        return Vec::new();
    };
    let mut held = Vec::new();
    for key in keys {
        let Ok(Ok(kind)) = tokio::time::timeout(
            LIMIT,
            redis::cmd("TYPE").arg(&key).query_async::<String>(&mut con),
        )
        .await
        else {
            continue;
        };
        let hash = match kind.as_str() {
            "string" => false,
            "hash" => true,
            _ => continue,
        };
        let Some((value, ttl, read)) = read_value(&mut con, &key, hash).await else {
            continue;
        };
        if ttl == -2 || (!hash && value.parse::<i64>().is_ok()) {
            continue;
        }
        held.push((key, value, u64::try_from(ttl).ok(), read));
    }
    held
}
