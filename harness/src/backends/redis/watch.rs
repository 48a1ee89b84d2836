//! Watching `redis` nodes for what happens to the lock's keys: keyspace notifications on each
//! node, reached directly (not through its proxy), written to the run's server record.
//!
//! Each node gets two connections of its own: a subscriber (`PSUBSCRIBE __keyevent@0__:*`,
//! spoken here in plain RESP so that a `PING` can be sent between its messages) and a reader
//! for what the notifications do not carry, the value and the time to live. The mapping:
//!
//! - `set` (SET, SETNX, SETEX, GETSET) and `hset`/`hincrby`/`hincrbyfloat` (a hash lock:
//!   Redisson keeps `<uuid>:<threadId>` as the field) → `set`, with the value read after it
//!   (`GET`; a hash's field names joined with `,`) and its `PTTL`, stamped when the
//!   notification came with the TTL it had then (the reading's delay added back);
//! - `expire` (EXPIRE, PEXPIRE, and the second notification of a `SET … PX`) → `renewed`,
//!   with its `PTTL`; the one right after a `set` of the same key that was written is that
//!   set's own and is left out (the `PTTL` read for the set already saw it);
//! - `expired` → `expired`; `del` (DEL, UNLINK) → `deleted`; `evicted` → `deleted` too (the
//!   server dropped it under `maxmemory`, which lockpick's nodes do not set: no client asked,
//!   but the record is gone all the same);
//! - the node died without persistence (the subscriber's connection dropped and the node
//!   refuses connections, or its `run_id` is new when it answers again) → `reset`, where the
//!   connection dropped.
//!
//! Other notifications (`incrby` of a fencing counter, `hdel` of a field short of the key's
//! deletion, which notifies `del` itself) change no lock's record.

use crate::server::record::{Change, ServerLog};
use crate::server::{BoxFuture, Watch, WatchCtx, Watching};
use crate::vocab::Persistence;
use lockpick_checker::server_record::{RecordChange, RESET_KEY};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

pub(super) struct RedisWatch;

/// The notifications asked for: key-event channels (`E`) of generic commands (`g`: del,
/// expire), strings (`$`), hashes (`h`), expiries (`x`) and evictions (`e`). Key-space
/// channels (`K`) would say the same twice.
const NOTIFY: &str = "Eg$hxe";

/// How long connecting, and each reading of a value, may take. A node stopped by the nemesis
/// (SIGSTOP) answers after it; a value not read in time is left out.
pub(super) const LIMIT: Duration = Duration::from_secs(2);

/// How often a watcher whose node went away tries it again.
const RECONNECT_EVERY: Duration = Duration::from_millis(20);

impl Watch for RedisWatch {
    fn start(&self, ctx: WatchCtx) -> BoxFuture<'static, Result<Watching, String>> {
        Box::pin(async move {
            let stop = CancellationToken::new();
            let mut tasks = tokio::task::JoinSet::new();
            let sink: Arc<dyn Sink> = ctx.log.clone();
            watch_nodes(&ctx, sink, &mut tasks, &stop).await?;
            Ok(Watching { stop, tasks })
        })
    }
}

/// Where a node's watcher writes the changes it sees: the run's server record, or something
/// that passes on some of them (the sentinel kind's master, [`super::sentinel_watch`]).
pub(super) trait Sink: Send + Sync {
    fn write(&self, change: Change);
}

impl Sink for ServerLog {
    fn write(&self, change: Change) {
        ServerLog::write(self, change)
    }
}

/// Starts a watcher on each of `ctx`'s nodes, writing to `sink`, in `tasks` until `stop`;
/// returns once every node is watched, or says which node could not be.
pub(super) async fn watch_nodes(
    ctx: &WatchCtx,
    sink: Arc<dyn Sink>,
    tasks: &mut tokio::task::JoinSet<()>,
    stop: &CancellationToken,
) -> Result<(), String> {
    for (node, addr) in &ctx.nodes {
        let conn = NodeConn::open(*addr)
            .await
            .map_err(|e| format!("watch {node} at {addr}: {e}"))?;
        let watcher = NodeWatcher {
            node: node.clone(),
            addr: *addr,
            persistence: ctx.persistence,
            log: ctx.log.clone(),
            sink: sink.clone(),
            pending: VecDeque::new(),
        };
        tasks.spawn(watcher.run(conn, stop.clone()));
    }
    Ok(())
}

/// One notification: its event (the channel's last part) and key.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Note {
    event: String,
    key: String,
    /// When the watcher read it.
    seen: Instant,
}

/// What a notification is to the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Meaning {
    /// A string value written.
    SetString,
    /// A hash written: its field names are the value.
    SetHash,
    Renewed,
    Expired,
    Deleted,
    /// Nothing a lock's record shows.
    Other,
}

fn meaning(event: &str) -> Meaning {
    match event {
        "set" => Meaning::SetString,
        "hset" | "hincrby" | "hincrbyfloat" => Meaning::SetHash,
        "expire" => Meaning::Renewed,
        "expired" => Meaning::Expired,
        "del" | "evicted" => Meaning::Deleted,
        _ => Meaning::Other,
    }
}

/// A node's two connections: the subscriber and the reader.
struct NodeConn {
    sub: BufReader<TcpStream>,
    reader: redis::aio::MultiplexedConnection,
    /// The node's `run_id`: a new one after a reconnection is a restarted server.
    run_id: String,
}

impl NodeConn {
    /// Connects to the node, turns its notifications on (a restarted node forgot them) and
    /// subscribes: a change made after this returns is seen.
    async fn open(addr: SocketAddr) -> Result<NodeConn, String> {
        let mut reader = crate::wire::redis::connect(addr, LIMIT).await?;
        let timed = |what: &'static str| move |_| format!("{what}: timeout");
        tokio::time::timeout(
            LIMIT,
            redis::cmd("CONFIG")
                .arg("SET")
                .arg("notify-keyspace-events")
                .arg(NOTIFY)
                .query_async::<()>(&mut reader),
        )
        .await
        .map_err(timed("CONFIG SET"))?
        .map_err(|e| format!("CONFIG SET notify-keyspace-events: {e}"))?;
        let info: String = tokio::time::timeout(
            LIMIT,
            redis::cmd("INFO").arg("server").query_async(&mut reader),
        )
        .await
        .map_err(timed("INFO"))?
        .map_err(|e| format!("INFO server: {e}"))?;
        let run_id = info
            .lines()
            .find_map(|l| l.strip_prefix("run_id:"))
            .unwrap_or_default()
            .trim()
            .to_owned();
        let stream = tokio::time::timeout(LIMIT, TcpStream::connect(addr))
            .await
            .map_err(timed("connect"))?
            .map_err(|e| format!("connect: {e}"))?;
        stream.set_nodelay(true).ok();
        let mut sub = BufReader::new(stream);
        send(&mut sub, &["PSUBSCRIBE", "__keyevent@0__:*"]).await?;
        // The subscription's confirmation: from here on every change is published to us.
        tokio::time::timeout(LIMIT, read_frame(&mut sub))
            .await
            .map_err(timed("PSUBSCRIBE"))?
            .map_err(|e| format!("PSUBSCRIBE: {e}"))?;
        Ok(NodeConn {
            sub,
            reader,
            run_id,
        })
    }
}

/// The watcher of one node.
struct NodeWatcher {
    node: String,
    addr: SocketAddr,
    persistence: Persistence,
    /// The record's clock.
    log: Arc<ServerLog>,
    /// Where the changes go.
    sink: Arc<dyn Sink>,
    /// Notifications read while waiting for a `PONG`, not handled yet.
    pending: VecDeque<Note>,
}

impl NodeWatcher {
    /// Follows the node until `stop`, reconnecting whenever its connection drops; at `stop`
    /// it catches up with what the node published so far.
    async fn run(mut self, mut conn: NodeConn, stop: CancellationToken) {
        loop {
            let dropped = match self.follow(&mut conn, &stop).await {
                Some(dropped) => dropped,
                None => {
                    // Whatever the node published before now comes before the PONG.
                    if self.sync(&mut conn).await.is_ok() {
                        let _ = self.handle_pending(&mut conn).await;
                    }
                    return;
                }
            };
            let dropped_ns = self.log.ns_at(dropped);
            let old_run = conn.run_id.clone();
            // A node that refuses connections died, and without persistence its records died
            // with it, then: written at once, before other nodes' later lines push it late.
            // (A drop with the node still there, or not answering, is told by its `run_id`
            // when it answers again.)
            let mut reset = false;
            if self.persistence == Persistence::None && refuses(self.addr).await {
                self.write_reset(dropped_ns);
                reset = true;
            }
            conn = loop {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tokio::time::sleep(RECONNECT_EVERY) => {}
                }
                if let Ok(c) = NodeConn::open(self.addr).await {
                    break c;
                }
            };
            self.pending.clear();
            // A new server process: without persistence it started empty.
            if !reset && conn.run_id != old_run && self.persistence == Persistence::None {
                self.write_reset(dropped_ns);
            }
        }
    }

    /// Writes that the node lost every record at `at_ns`.
    fn write_reset(&self, at_ns: u64) {
        self.sink.write(Change {
            at_ns,
            node: self.node.clone(),
            key: RESET_KEY.to_owned(),
            event: RecordChange::Reset,
            value: None,
            ttl_ms: None,
        });
    }

    /// Handles notifications until the connection drops (`Some`: when) or `stop` (`None`).
    /// Only the wait for the next bytes is cut short by `stop`, never a frame half read.
    async fn follow(&mut self, conn: &mut NodeConn, stop: &CancellationToken) -> Option<Instant> {
        loop {
            if self.handle_pending(conn).await.is_err() {
                return Some(Instant::now());
            }
            let more = tokio::select! {
                more = conn.sub.fill_buf() => more.map(|b| !b.is_empty()),
                _ = stop.cancelled() => return None,
            };
            if !matches!(more, Ok(true)) {
                return Some(Instant::now());
            }
            match read_frame(&mut conn.sub).await {
                Ok(frame) => {
                    if let Some(note) = notification(frame) {
                        self.pending.push_back(note);
                    }
                }
                Err(_) => return Some(Instant::now()),
            }
        }
    }

    /// Handles the notifications read so far, in order.
    async fn handle_pending(&mut self, conn: &mut NodeConn) -> Result<(), String> {
        while let Some(note) = self.pending.pop_front() {
            self.handle(conn, note).await?;
        }
        Ok(())
    }

    /// Writes what one notification says. `Err`: the subscriber's connection broke.
    async fn handle(&mut self, conn: &mut NodeConn, note: Note) -> Result<(), String> {
        let (log, node) = (self.log.clone(), self.node.clone());
        let change = |event, value, ttl_ms, at| Change {
            at_ns: log.ns_at(at),
            node: node.clone(),
            key: note.key.clone(),
            event,
            value,
            ttl_ms,
        };
        match meaning(&note.event) {
            Meaning::Other => {}
            Meaning::Expired => {
                self.sink
                    .write(change(RecordChange::Expired, None, None, note.seen))
            }
            Meaning::Deleted => {
                self.sink
                    .write(change(RecordChange::Deleted, None, None, note.seen))
            }
            Meaning::Renewed => {
                // The TTL now; a key gone already (-2) was renewed and then removed, which
                // the next notifications say.
                if let Some((ttl, at)) = read_ttl(&mut conn.reader, &note.key).await {
                    if ttl != -2 {
                        let ttl_ms = ttl_at_note(ttl, note.seen, at);
                        self.sink
                            .write(change(RecordChange::Renewed, None, ttl_ms, note.seen));
                    }
                }
            }
            Meaning::SetString | Meaning::SetHash => {
                let hash = meaning(&note.event) == Meaning::SetHash;
                let read = read_value(&mut conn.reader, &note.key, hash).await;
                // Everything published before the reading came is now read: a later write
                // of this key among it means the value may be that write's, not this one's.
                self.sync(conn).await?;
                let overwritten = self.pending.iter().any(|n| {
                    n.key == note.key
                        && matches!(meaning(&n.event), Meaning::SetString | Meaning::SetHash)
                });
                // Left out when unsure: the checker then sees less, never something false.
                let Some((value, ttl, at)) = read else {
                    return Ok(());
                };
                if overwritten || ttl == -2 {
                    return Ok(());
                }
                self.sink.write(change(
                    RecordChange::Set,
                    Some(value),
                    ttl_at_note(ttl, note.seen, at),
                    note.seen,
                ));
                // `SET … PX` notifies `set` then `expire`: that TTL is the one just read.
                if self
                    .pending
                    .front()
                    .is_some_and(|n| n.key == note.key && meaning(&n.event) == Meaning::Renewed)
                {
                    self.pending.pop_front();
                }
            }
        }
        Ok(())
    }

    /// Sends a `PING` on the subscriber and reads up to its `PONG`, keeping the notifications
    /// before it in [`NodeWatcher::pending`]: every change published before now is then read.
    async fn sync(&mut self, conn: &mut NodeConn) -> Result<(), String> {
        send(&mut conn.sub, &["PING"]).await?;
        loop {
            let frame = tokio::time::timeout(LIMIT * 5, read_frame(&mut conn.sub))
                .await
                .map_err(|_| "PING: timeout".to_owned())??;
            if is_pong(&frame) {
                return Ok(());
            }
            if let Some(note) = notification(frame) {
                self.pending.push_back(note);
            }
        }
    }
}

/// The time to live a record had when its notification was read (`seen`), from the `PTTL`
/// read at `read`: the reading's delay added back, in whole milliseconds rounded down, so
/// that `seen + ttl` is the server's own expiry or up to 1 ms before it, never after. Stamped
/// with the notification's time, a write starts in the record where the client made it (within
/// the checker's watcher lag of the client's reply) even when the reading comes late on a
/// loaded machine. `None`: no TTL (-1), or none read.
fn ttl_at_note(pttl: i64, seen: Instant, read: Instant) -> Option<u64> {
    let pttl = u64::try_from(pttl).ok()?;
    Some(pttl + read.saturating_duration_since(seen).as_millis() as u64)
}

/// Whether nothing listens at `addr` any more: its server process is gone. A node stopped
/// (SIGSTOP) still accepts connections (the kernel does), so it is not taken for dead.
async fn refuses(addr: SocketAddr) -> bool {
    matches!(
        tokio::time::timeout(LIMIT, TcpStream::connect(addr)).await,
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused
    )
}

/// Reads the value of `key` and its `PTTL` in one transaction: the value (a string, or a
/// hash's field names joined with `,`), the TTL in ms (-1: none, -2: no key), and when the
/// reply came. `None`: nothing came in time, or the key is of another type.
pub(super) async fn read_value(
    con: &mut redis::aio::MultiplexedConnection,
    key: &str,
    hash: bool,
) -> Option<(String, i64, Instant)> {
    let mut pipe = redis::pipe();
    pipe.atomic();
    if hash {
        pipe.cmd("HKEYS").arg(key);
    } else {
        pipe.cmd("GET").arg(key);
    }
    pipe.cmd("PTTL").arg(key);
    let reply = tokio::time::timeout(LIMIT, pipe.query_async::<(redis::Value, i64)>(con)).await;
    let at = Instant::now();
    let (value, ttl) = reply.ok()?.ok()?;
    let value = match value {
        redis::Value::BulkString(b) => String::from_utf8_lossy(&b).into_owned(),
        redis::Value::Array(fields) => {
            let mut names: Vec<String> = fields
                .into_iter()
                .filter_map(|f| match f {
                    redis::Value::BulkString(b) => Some(String::from_utf8_lossy(&b).into_owned()),
                    _ => None,
                })
                .collect();
            if names.is_empty() {
                return None;
            }
            names.sort();
            names.join(",")
        }
        _ => return None,
    };
    Some((value, ttl, at))
}

/// The `PTTL` of `key` and when it came.
async fn read_ttl(
    con: &mut redis::aio::MultiplexedConnection,
    key: &str,
) -> Option<(i64, Instant)> {
    let reply =
        tokio::time::timeout(LIMIT, redis::cmd("PTTL").arg(key).query_async::<i64>(con)).await;
    let at = Instant::now();
    Some((reply.ok()?.ok()?, at))
}

/// A RESP2 reply, as much of it as a subscriber meets.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Frame {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Frame>>),
}

/// The notification a `pmessage` frame carries: `["pmessage", pattern, channel, key]`.
fn notification(frame: Frame) -> Option<Note> {
    let Frame::Array(Some(parts)) = frame else {
        return None;
    };
    let text = |f: &Frame| match f {
        Frame::Bulk(Some(b)) => Some(String::from_utf8_lossy(b).into_owned()),
        _ => None,
    };
    if parts.len() != 4 || text(&parts[0]).as_deref() != Some("pmessage") {
        return None;
    }
    let channel = text(&parts[2])?;
    let event = channel.rsplit_once(':')?.1.to_owned();
    Some(Note {
        event,
        key: text(&parts[3])?,
        seen: Instant::now(),
    })
}

/// Whether `frame` is the reply to a `PING` in subscribed mode: `["pong", ""]`.
fn is_pong(frame: &Frame) -> bool {
    match frame {
        Frame::Array(Some(parts)) => {
            matches!(parts.first(), Some(Frame::Bulk(Some(b))) if b.eq_ignore_ascii_case(b"pong"))
        }
        Frame::Simple(s) => s.eq_ignore_ascii_case("pong"),
        _ => false,
    }
}

/// Sends one command as a RESP array of bulk strings.
async fn send(sub: &mut BufReader<TcpStream>, args: &[&str]) -> Result<(), String> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n{a}\r\n", a.len()).as_bytes());
    }
    sub.get_mut()
        .write_all(&out)
        .await
        .map_err(|e| format!("send {}: {e}", args[0]))
}

/// Reads one RESP2 frame.
fn read_frame(sub: &mut BufReader<TcpStream>) -> BoxFuture<'_, Result<Frame, String>> {
    Box::pin(async move {
        let mut line = Vec::new();
        let n = sub
            .read_until(b'\n', &mut line)
            .await
            .map_err(|e| format!("read: {e}"))?;
        if n == 0 {
            return Err("the node closed the connection".to_owned());
        }
        let text = String::from_utf8_lossy(&line[1..])
            .trim_end_matches(['\r', '\n'])
            .to_owned();
        let len = || {
            text.parse::<i64>()
                .map_err(|_| format!("bad length {text:?}"))
        };
        match line[0] {
            b'+' => Ok(Frame::Simple(text)),
            b'-' => Ok(Frame::Error(text)),
            b':' => Ok(Frame::Int(len()?)),
            b'$' => {
                let n = len()?;
                if n < 0 {
                    return Ok(Frame::Bulk(None));
                }
                let mut body = vec![0; n as usize + 2];
                sub.read_exact(&mut body)
                    .await
                    .map_err(|e| format!("read: {e}"))?;
                body.truncate(n as usize);
                Ok(Frame::Bulk(Some(body)))
            }
            b'*' => {
                let n = len()?;
                if n < 0 {
                    return Ok(Frame::Array(None));
                }
                let mut parts = Vec::with_capacity(n as usize);
                for _ in 0..n {
                    parts.push(read_frame(sub).await?);
                }
                Ok(Frame::Array(Some(parts)))
            }
            other => Err(format!("unexpected RESP type byte {other:#x}")),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_map_to_record_changes_and_the_rest_is_ignored() {
        assert_eq!(meaning("set"), Meaning::SetString);
        assert_eq!(meaning("hincrby"), Meaning::SetHash);
        assert_eq!(meaning("expire"), Meaning::Renewed);
        assert_eq!(meaning("expired"), Meaning::Expired);
        assert_eq!(meaning("evicted"), Meaning::Deleted);
        assert_eq!(meaning("incrby"), Meaning::Other);
        let bulk = |s: &str| Frame::Bulk(Some(s.as_bytes().to_vec()));
        let note = notification(Frame::Array(Some(vec![
            bulk("pmessage"),
            bulk("__keyevent@0__:*"),
            bulk("__keyevent@0__:expired"),
            bulk("lockpick:lock:lock"),
        ])))
        .unwrap();
        assert_eq!(
            (note.event.as_str(), note.key.as_str()),
            ("expired", "lockpick:lock:lock")
        );
        assert!(is_pong(&Frame::Array(Some(vec![bulk("pong"), bulk("")]))));
        assert!(notification(Frame::Array(Some(vec![bulk("pong"), bulk("")]))).is_none());
    }
}
