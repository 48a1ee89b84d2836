//! Watching a `zookeeper` ensemble for what happens to the lock's znodes: a persistent
//! recursive watch on `/` (ZooKeeper 3.6+) through a session of its own on each member, reached
//! directly (not through its proxy), merged into one record under the one node name
//! [`NODE`]. The ensemble is one replicated store, and the checker counts a lock's majority
//! over the nodes that held its records: one name per member would make each member's copy of
//! the same znode a vote of its own.
//!
//! **Why a session on each member.** A session on one member sees that member's changes, in
//! zxid order. With one on each, a member crashed, paused, or cut off from its peers (it then
//! stops serving) does not stall the record: the others go on reporting. Each change comes
//! from every member that applies it; the first report is written and the others are known
//! by the znode's creation zxid and data zxid (`czxid`, `mzxid` of the `Stat` read with it):
//! ZooKeeper 3.8's notifications carry no zxid (3.9's do, ZOOKEEPER-4655: used only to place
//! a deletion its member could not match to a creation).
//!
//! **Which znodes.** Only ephemeral ones. A lock's record is an ephemeral znode in every
//! ZooKeeper lock recipe (the built-in one, Curator's, kazoo's, go-zookeeper's), while the
//! persistent folders (`/locks`, `/locks/<name>`), whose paths contain the lock's name, would
//! be records of the lock that nobody holds and that never go: unattributed values in every
//! view, judging nothing.
//!
//! **The mapping.**
//!
//! - a znode created, or its data changed → `set`, its value the znode's data as UTF-8 when it
//!   has some (the built-in recipe writes its holder value there, so attribution is exact),
//!   else (empty, or not UTF-8) its ephemeral owner's session id in hex (`0x1000…`, as
//!   ZooKeeper prints it): unique to the session, so it is attributed by its window;
//! - a znode deleted → `expired` when its owner's session is over on the member that reported
//!   the deletion (not among the sessions its `dump` four-letter word lists: a session's end
//!   is applied before the deletions it causes), else `deleted`. A session is over when it
//!   expired or when its client closed it: ZooKeeper ends both with the same `closeSession`,
//!   and `dump` does not tell them apart. When the member cannot say in time (paused, or
//!   `dump` not in the `4lw.commands.whitelist` of a server lockpick did not start), it is
//!   `deleted`: the checker ends both where observed;
//! - no `ttl_ms`: a session is renewed by its client's heartbeats, which the watcher does not
//!   see, so any time to live it wrote would end the record too early.
//!
//! **When and which value.** A change is stamped when its notification came, received while
//! earlier ones are read. The notification does not carry the data: it is read (`getData`,
//! within [`LIMIT`]) from the member that sent it, whose reply comes after every notification
//! it sent before: when a later write of the same znode is among them, the data read may be
//! that write's, and the `set` is left out (the later one's is written). A znode gone before
//! it was read is left out too, and so is its deletion (of a record never seen set): the
//! checker then sees less, never something false.
//!
//! **What can be missed.** A session that was disconnected does not get the notifications of
//! what changed meanwhile when it reconnects (ZOOKEEPER-4698), and zookeeper-client 0.11.2
//! does not even set its persistent watch again then (its `resend_watches` sends only the
//! one-shot ones: the record went silent after a member's re-election). So a disconnected
//! session is given up at once: the watcher opens a new one on its member (every
//! [`RECONNECT_EVERY`], no backoff), watches again, reads the member's whole tree (every
//! folder's children, every ephemeral's data) and reports what differs from what it showed
//! before, stamped when read: late (the other members usually reported it in time), never
//! lost. What every member misses is a znode made and deleted while none of them was watching,
//! or that was gone before any could read it.
//!
//! **At the end.** Each member's session syncs with the leader (`sync`), whose reply comes
//! after the notifications of everything committed before it; those are handled, then it
//! stops.

use super::process::four_letter_word;
use super::process::ZK_TICK_MS;
use crate::server::record::{Change, ServerLog};
use crate::server::{BoxFuture, Watch, WatchCtx, Watching};
use lockpick_checker::server_record::RecordChange;
use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use zookeeper_client::{
    AddWatchMode, Client, Error as ZkError, EventType, PersistentWatcher, SessionState, Stat,
    WatchedEvent,
};

pub(super) struct ZkWatch;

/// The node name of the ensemble's records.
const NODE: &str = "zookeeper";

/// How long connecting, and each reading, may take. A member stopped by the nemesis answers
/// after it; what it did not read in time the other members report.
const LIMIT: Duration = Duration::from_secs(2);

/// The watcher's own sessions: as long as the servers allow (20 ticks), so that a heartbeat
/// late on a loaded machine does not end one (the client gives a connection up after 2/5 of
/// it without an answer, 2 s: a member that stopped answering is left for a new session then,
/// the other members reporting meanwhile).
const SESSION: Duration = Duration::from_millis(20 * ZK_TICK_MS);

/// How often a watcher whose session ended tries its member again.
const RECONNECT_EVERY: Duration = Duration::from_millis(20);

/// How long asking a member whether a session is over may take; a member that did not answer
/// is not asked again for [`QUIET`], so that a paused one does not hold up every deletion.
const ASK_LIMIT: Duration = LIMIT;
const QUIET: Duration = Duration::from_secs(1);

impl Watch for ZkWatch {
    fn start(&self, ctx: WatchCtx) -> BoxFuture<'static, Result<Watching, String>> {
        Box::pin(async move {
            let mut opening = JoinSet::new();
            for (i, (_, addr)) in ctx.nodes.iter().enumerate() {
                let addr = *addr;
                opening.spawn(async move { (i, Conn::open(addr).await) });
            }
            let mut conns: Vec<Option<Conn>> = ctx.nodes.iter().map(|_| None).collect();
            let mut errors = Vec::new();
            while let Some(done) = opening.join_next().await {
                let Ok((i, opened)) = done else { continue };
                match opened {
                    Ok(conn) => conns[i] = Some(conn),
                    Err(e) => {
                        let (node, addr) = &ctx.nodes[i];
                        errors.push(format!("{node} at {addr}: {e}"));
                    }
                }
            }
            // One member watched is enough to see every change: the others are tried again
            // in the background.
            if conns.iter().all(Option::is_none) {
                errors.sort();
                return Err(format!("watch the ensemble: {}", errors.join("; ")));
            }
            let stop = CancellationToken::new();
            let mut tasks = JoinSet::new();
            let (out, seen) = mpsc::unbounded_channel();
            tasks.spawn(Merger::new(ctx.log).run(seen));
            for ((_, addr), conn) in ctx.nodes.into_iter().zip(conns) {
                let member = Member {
                    addr,
                    out: out.clone(),
                    known: HashMap::new(),
                };
                tasks.spawn(member.run(conn, stop.clone()));
            }
            Ok(Watching { stop, tasks })
        })
    }
}

/// What a member's watcher saw, for the merger.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Seen {
    /// An ephemeral znode with its value, as read from member `from`.
    Held {
        at: Instant,
        from: SocketAddr,
        path: String,
        czxid: i64,
        mzxid: i64,
        owner: i64,
        value: String,
    },
    /// A znode deleted, as member `from` reported it: the creation zxid of the znode it had
    /// shown at that path, if any, and the deletion's zxid if the notification carried it.
    Gone {
        at: Instant,
        from: SocketAddr,
        path: String,
        czxid: Option<i64>,
        zxid: Option<i64>,
    },
}

/// The value a record is written with: the znode's data as UTF-8 when it has some, else its
/// owner's session id in hex, as ZooKeeper prints it.
fn value_of(data: &[u8], owner: i64) -> String {
    match std::str::from_utf8(data) {
        Ok(text) if !text.is_empty() => text.to_owned(),
        _ => format!("{owner:#x}"),
    }
}

/// A session on one member, and its watch.
struct Conn {
    client: Client,
    events: Events,
}

impl Conn {
    /// Connects to the member alone and watches its whole tree: a change it applies after
    /// this returns is notified.
    async fn open(addr: SocketAddr) -> Result<Conn, String> {
        let work = async {
            let client = Client::connector()
                .with_session_timeout(SESSION)
                .connect(&addr.to_string())
                .await
                .map_err(|e| format!("connect: {e}"))?;
            let watcher = client
                .watch("/", AddWatchMode::PersistentRecursive)
                .await
                .map_err(|e| format!("watch /: {e}"))?;
            Ok(Conn {
                client,
                events: Events {
                    watcher,
                    pending: VecDeque::new(),
                    over: false,
                },
            })
        };
        tokio::time::timeout(LIMIT, work)
            .await
            .map_err(|_| "timeout".to_owned())?
    }
}

/// A session's notifications, each stamped when it came.
struct Events {
    watcher: PersistentWatcher,
    /// Received and not handled yet, in order.
    pending: VecDeque<(Instant, WatchedEvent)>,
    /// The session ended (a terminal state came): the watcher must not be polled again.
    over: bool,
}

impl Events {
    fn push(&mut self, event: WatchedEvent) {
        if event.event_type == EventType::Session && event.session_state.is_terminated() {
            self.over = true;
        }
        self.pending.push_back((Instant::now(), event));
    }

    /// Runs `call` (a request on this session) within [`LIMIT`], receiving the notifications
    /// that come meanwhile, then those delivered before its reply. `None`: no reply in time.
    async fn meanwhile<T>(&mut self, call: impl Future<Output = T>) -> Option<T> {
        let call = tokio::time::timeout(LIMIT, call);
        tokio::pin!(call);
        let result = loop {
            tokio::select! {
                biased;
                event = self.watcher.changed(), if !self.over => self.push(event),
                result = &mut call => break result.ok(),
            }
        };
        // The client hands a session's notifications over in the order they came, before the
        // replies that followed them: every one sent before this reply is ready now.
        while !self.over {
            let ready = {
                let mut next = std::pin::pin!(self.watcher.changed());
                next.as_mut().poll(&mut Context::from_waker(Waker::noop()))
            };
            match ready {
                Poll::Ready(event) => self.push(event),
                Poll::Pending => break,
            }
        }
        result
    }

    /// Whether a later write of `path` was received and not handled yet.
    fn written_later(&self, path: &str) -> bool {
        self.pending.iter().any(|(_, e)| {
            e.path == path
                && matches!(
                    e.event_type,
                    EventType::NodeCreated | EventType::NodeDataChanged
                )
        })
    }
}

/// The session ended: a new one must be opened.
struct SessionOver;

/// How following a session ended.
enum Followed {
    Stopped,
    SessionOver,
}

/// The watcher of one member.
struct Member {
    addr: SocketAddr,
    out: mpsc::UnboundedSender<Seen>,
    /// The ephemeral znodes this member showed and has not reported gone: their creation
    /// zxids, by path.
    known: HashMap<String, i64>,
}

impl Member {
    /// Follows the member until `stop`, with a new session whenever one ends (`conn`: the
    /// first, if it opened); at `stop` it catches up with what the ensemble committed so far.
    async fn run(mut self, mut conn: Option<Conn>, stop: CancellationToken) {
        loop {
            let mut c = match conn.take() {
                Some(c) => c,
                None => match self.reconnect(&stop).await {
                    Some(c) => c,
                    None => return,
                },
            };
            // What is there now: at the start, or what changed while it was not watched.
            let followed = match self.rescan(&mut c).await {
                Ok(()) => self.follow(&mut c, &stop).await,
                Err(SessionOver) => Followed::SessionOver,
            };
            match followed {
                Followed::Stopped => {
                    self.catch_up(&mut c).await;
                    return;
                }
                // Dropped, the client closes it if it still can.
                Followed::SessionOver => drop(c),
            }
        }
    }

    /// A new session on the member, tried every [`RECONNECT_EVERY`]; `None` at `stop`.
    async fn reconnect(&self, stop: &CancellationToken) -> Option<Conn> {
        loop {
            tokio::select! {
                _ = stop.cancelled() => return None,
                _ = tokio::time::sleep(RECONNECT_EVERY) => {}
            }
            tokio::select! {
                _ = stop.cancelled() => return None,
                opened = Conn::open(self.addr) => {
                    if let Ok(c) = opened {
                        return Some(c);
                    }
                }
            }
        }
    }

    /// Handles notifications until `stop` or the session's end.
    async fn follow(&mut self, c: &mut Conn, stop: &CancellationToken) -> Followed {
        loop {
            while let Some((at, event)) = c.events.pending.pop_front() {
                if self.handle(c, at, event).await.is_err() {
                    return Followed::SessionOver;
                }
            }
            tokio::select! {
                _ = stop.cancelled() => return Followed::Stopped,
                event = c.events.watcher.changed(), if !c.events.over => c.events.push(event),
            }
        }
    }

    /// Syncs with the leader and handles every notification that came before the reply.
    async fn catch_up(&mut self, c: &mut Conn) {
        if !c.events.over {
            let _ = c.events.meanwhile(c.client.sync("/")).await;
        }
        while let Some((at, event)) = c.events.pending.pop_front() {
            if self.handle(c, at, event).await.is_err() {
                return;
            }
        }
    }

    /// Reports what one notification says.
    async fn handle(
        &mut self,
        c: &mut Conn,
        at: Instant,
        event: WatchedEvent,
    ) -> Result<(), SessionOver> {
        match event.event_type {
            // Disconnected, the session is given up: the client would not set the watch again
            // on reconnecting (see the module documentation).
            EventType::Session => match event.session_state {
                SessionState::Disconnected => return Err(SessionOver),
                state if state.is_terminated() => return Err(SessionOver),
                _ => {}
            },
            EventType::NodeCreated | EventType::NodeDataChanged => {
                self.read(c, at, event.path).await
            }
            EventType::NodeDeleted => {
                let czxid = self.known.remove(&event.path);
                let zxid = (event.zxid != WatchedEvent::NO_ZXID).then_some(event.zxid);
                self.send(Seen::Gone {
                    at,
                    from: self.addr,
                    path: event.path,
                    czxid,
                    zxid,
                });
            }
            EventType::NodeChildrenChanged => {}
        }
        Ok(())
    }

    /// Reads the znode a notification at `at` named and reports it, if ephemeral.
    async fn read(&mut self, c: &mut Conn, at: Instant, path: String) {
        // Not read in time, gone already, or the connection broke (its session events say
        // the rest): left out.
        let Some(Ok((data, stat))) = c.events.meanwhile(c.client.get_data(&path)).await else {
            return;
        };
        if stat.ephemeral_owner == 0 {
            return;
        }
        self.known.insert(path.clone(), stat.czxid);
        // The data may be a later write's: that write's notification reports it.
        if c.events.written_later(&path) {
            return;
        }
        self.send(self.held(at, path, &data, &stat));
    }

    fn held(&self, at: Instant, path: String, data: &[u8], stat: &Stat) -> Seen {
        Seen::Held {
            at,
            from: self.addr,
            path,
            czxid: stat.czxid,
            mzxid: stat.mzxid,
            owner: stat.ephemeral_owner,
            value: value_of(data, stat.ephemeral_owner),
        }
    }

    /// Reads the member's whole tree and reports every ephemeral znode in it, and as gone
    /// every one it showed before that is no longer there. `Err` (a reading failed): nothing
    /// is reported gone, and the session is given up for a new one, which reads it again.
    async fn rescan(&mut self, c: &mut Conn) -> Result<(), SessionOver> {
        let mut found = Vec::new();
        let mut folders = vec!["/".to_owned()];
        while let Some(folder) = folders.pop() {
            let children = match c.events.meanwhile(c.client.list_children(&folder)).await {
                Some(Ok(children)) => children,
                Some(Err(ZkError::NoNode)) => continue,
                _ => return Err(SessionOver),
            };
            for child in children {
                let path = match folder.as_str() {
                    "/" => format!("/{child}"),
                    _ => format!("{folder}/{child}"),
                };
                if path == "/zookeeper" {
                    continue;
                }
                match c.events.meanwhile(c.client.get_data(&path)).await {
                    // An ephemeral znode has no children.
                    Some(Ok((_, stat))) if stat.ephemeral_owner == 0 => folders.push(path),
                    Some(Ok((data, stat))) => found.push((Instant::now(), path, data, stat)),
                    Some(Err(ZkError::NoNode)) => {}
                    _ => return Err(SessionOver),
                }
            }
        }
        let now = Instant::now();
        let there: HashMap<&str, i64> = found
            .iter()
            .map(|(_, path, _, stat)| (path.as_str(), stat.czxid))
            .collect();
        let mut gone: Vec<(String, i64)> = (self.known.iter())
            .filter(|(path, czxid)| there.get(path.as_str()) != Some(*czxid))
            .map(|(path, czxid)| (path.clone(), *czxid))
            .collect();
        gone.sort();
        for (path, czxid) in gone {
            self.known.remove(&path);
            self.send(Seen::Gone {
                at: now,
                from: self.addr,
                path,
                czxid: Some(czxid),
                zxid: None,
            });
        }
        for (at, path, data, stat) in found {
            self.known.insert(path.clone(), stat.czxid);
            if !c.events.written_later(&path) {
                self.send(self.held(at, path, &data, &stat));
            }
        }
        Ok(())
    }

    fn send(&self, seen: Seen) {
        // The merger ends only after every member: nobody to tell is no error.
        let _ = self.out.send(seen);
    }
}

/// The ephemeral znode a record is of, as written.
#[derive(Debug, Clone, Copy)]
struct Live {
    czxid: i64,
    mzxid: i64,
    owner: i64,
}

/// Writes what the members report, each change once, in the order the reports come.
struct Merger {
    log: Arc<ServerLog>,
    /// The znodes written set and not gone, by path.
    live: HashMap<String, Live>,
    /// The creation zxids of znodes written gone: a lagging member's report of one is old news.
    ended: HashSet<i64>,
    sessions: Sessions,
}

impl Merger {
    fn new(log: Arc<ServerLog>) -> Merger {
        Merger {
            log,
            live: HashMap::new(),
            ended: HashSet::new(),
            sessions: Sessions::default(),
        }
    }

    /// Until every member's watcher has ended.
    async fn run(mut self, mut seen: mpsc::UnboundedReceiver<Seen>) {
        while let Some(s) = seen.recv().await {
            self.handle(s).await;
        }
    }

    async fn handle(&mut self, seen: Seen) {
        match seen {
            Seen::Held {
                at,
                from,
                path,
                czxid,
                mzxid,
                owner,
                value,
            } => {
                if self.ended.contains(&czxid) {
                    return;
                }
                if let Some(live) = self.live.get(&path).copied() {
                    if czxid < live.czxid {
                        // An earlier znode at this path, from a member that lags behind.
                        self.ended.insert(czxid);
                        return;
                    }
                    if czxid == live.czxid && mzxid <= live.mzxid {
                        return;
                    }
                    if czxid > live.czxid {
                        // Made again: the one before went, and no member reported it in time.
                        self.end(at, &path, from).await;
                    }
                }
                self.live.insert(
                    path.clone(),
                    Live {
                        czxid,
                        mzxid,
                        owner,
                    },
                );
                self.write(at, path, RecordChange::Set, Some(value));
            }
            Seen::Gone {
                at,
                from,
                path,
                czxid,
                zxid,
            } => {
                let Some(live) = self.live.get(&path).copied() else {
                    return;
                };
                // The deletion of an earlier znode at this path, from a member that lags.
                let earlier = match (czxid, zxid) {
                    (Some(c), _) => c < live.czxid,
                    (None, Some(z)) => z < live.czxid,
                    // A deletion its member cannot place, on 3.8: taken as this znode's
                    // (lock recipes name each znode once, by its sequence number).
                    (None, None) => false,
                };
                if earlier {
                    return;
                }
                if let Some(c) = czxid {
                    self.ended.insert(c);
                }
                self.end(at, &path, from).await;
            }
        }
    }

    /// Writes that the znode at `path` went, as member `from` showed.
    async fn end(&mut self, at: Instant, path: &str, from: SocketAddr) {
        let Some(live) = self.live.remove(path) else {
            return;
        };
        self.ended.insert(live.czxid);
        let how = match self.sessions.over(from, live.owner).await {
            Some(true) => RecordChange::Expired,
            Some(false) | None => RecordChange::Deleted,
        };
        self.write(at, path.to_owned(), how, None);
    }

    fn write(&self, at: Instant, key: String, event: RecordChange, value: Option<String>) {
        self.log.write(Change {
            at_ns: self.log.ns_at(at),
            node: NODE.to_owned(),
            key,
            event,
            value,
            ttl_ms: None,
        });
    }
}

/// Asks members whether a session is over.
#[derive(Default)]
struct Sessions {
    /// Members that did not answer in time, and until when they are not asked.
    quiet: HashMap<SocketAddr, Instant>,
    /// The servers refuse `dump` (not in their whitelist): nobody is asked.
    refused: bool,
}

impl Sessions {
    /// Whether `session` is over on `member`, which has applied the deletion at hand: a
    /// session's end is applied before the deletions of its ephemeral znodes, and ZooKeeper's
    /// leader drops an expired session from its tracker before it proposes its end. `None`:
    /// the member cannot say in time.
    async fn over(&mut self, member: SocketAddr, session: i64) -> Option<bool> {
        if self.refused || self.quiet.get(&member).is_some_and(|t| Instant::now() < *t) {
            return None;
        }
        let asked = tokio::time::timeout(ASK_LIMIT, async {
            // Twice before calling it over: the leader's tracker moves a live session between
            // its expiry buckets at every heartbeat, and a `dump` read then could miss it.
            for _ in 0..2 {
                let Ok(answer) = four_letter_word(member, b"dump").await else {
                    return Listed::Unknown;
                };
                match live_sessions(&answer) {
                    Listed::Live(live) if !live.contains(&session) => {}
                    other => return other,
                }
            }
            Listed::Live(HashSet::new())
        })
        .await;
        match asked {
            Ok(Listed::Live(live)) => Some(!live.contains(&session)),
            Ok(Listed::Refused) => {
                self.refused = true;
                None
            }
            Ok(Listed::Unknown) | Err(_) => {
                self.quiet.insert(member, Instant::now() + QUIET);
                None
            }
        }
    }
}

/// What a `dump` answer says of sessions.
#[derive(Debug, PartialEq, Eq)]
enum Listed {
    /// The live sessions it lists.
    Live(HashSet<i64>),
    /// `dump` is not in the server's whitelist.
    Refused,
    /// No list (a server not serving).
    Unknown,
}

/// The sessions a `dump` answer lists before its ephemeral nodes: the leader's tracker
/// (`Session Sets`, by expiry time) or a follower's copy of every session (`Global
/// Sessions`), each `0x…`.
fn live_sessions(dump: &str) -> Listed {
    if dump.contains("not in the whitelist") {
        return Listed::Refused;
    }
    let Some((sessions, _)) = dump.split_once("ephemeral nodes dump:") else {
        return Listed::Unknown;
    };
    Listed::Live(
        sessions
            .split(|c: char| c.is_whitespace() || c == ':' || c == ',')
            .filter_map(|w| w.strip_prefix("0x"))
            .filter_map(|hex| u64::from_str_radix(hex, 16).ok())
            .map(|id| id as i64)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_the_data_or_else_the_owner_session() {
        assert_eq!(value_of(b"3-9f3c", 0x1000), "3-9f3c");
        assert_eq!(value_of(b"", 0x10001f64cb40000), "0x10001f64cb40000");
        assert_eq!(value_of(&[0xff, 0xfe], 0x10), "0x10");
    }

    #[test]
    fn the_sessions_of_a_dump_are_those_before_its_ephemeral_nodes() {
        let leader = "SessionTracker dump:\nSession Sets (3)/(1):\n0 expire at Sun Nov 29 21:36:01 UTC 2026:\n1 expire at Sun Nov 29 21:36:03 UTC 2026:\n\t0x10001f64cb40000\nephemeral nodes dump:\nSessions with Ephemerals (2):\n0x20001f64cb40000:\n\t/e1\nConnections dump:\n\tip: /127.0.0.1:51004 sessionId: 0x30001f64cb40000\n";
        assert_eq!(
            live_sessions(leader),
            Listed::Live(HashSet::from([0x10001f64cb40000]))
        );
        assert_eq!(
            live_sessions("dump is not executed because it is not in the whitelist.\n"),
            Listed::Refused
        );
        assert_eq!(
            live_sessions("This ZooKeeper instance is not currently serving requests\n"),
            Listed::Unknown
        );
    }

    fn held(at: Instant, path: &str, czxid: i64, mzxid: i64, value: &str) -> Seen {
        Seen::Held {
            at,
            from: "127.0.0.1:1".parse().unwrap(),
            path: path.into(),
            czxid,
            mzxid,
            owner: 0x10,
            value: value.into(),
        }
    }

    fn gone(at: Instant, path: &str, czxid: Option<i64>) -> Seen {
        Seen::Gone {
            at,
            from: "127.0.0.1:1".parse().unwrap(),
            path: path.into(),
            czxid,
            zxid: None,
        }
    }

    #[tokio::test]
    async fn each_change_is_written_once_whichever_member_reports_it_first() {
        let dir = tempfile::tempdir().unwrap();
        let recorder =
            Arc::new(crate::recorder::Recorder::create(&dir.path().join("history.jsonl")).unwrap());
        recorder.restart_clock();
        let path = dir.path().join("server.jsonl");
        let log = Arc::new(ServerLog::create(&path, recorder).unwrap());
        let mut merger = Merger::new(log.clone());
        // Nobody answers `dump` at 127.0.0.1:1: deletions are written `deleted`.
        merger.sessions.refused = true;
        let t = Instant::now();
        let a = "/locks/lock/a-lock-0000000001";
        let b = "/locks/lock/b-lock-0000000002";
        for seen in [
            held(t, a, 5, 5, "p0"),
            // The second member's report of the same creation.
            held(t, a, 5, 5, "p0"),
            held(t, b, 6, 6, "p1"),
            gone(t, a, Some(5)),
            // The lagging member's reports of a, after its deletion.
            held(t, a, 5, 5, "p0"),
            gone(t, a, None),
            // b's data changed.
            held(t, b, 6, 9, "p1 again"),
            gone(t, b, None),
        ] {
            merger.handle(seen).await;
        }
        log.finish().unwrap();
        let read = lockpick_checker::server_record::read_server_record(&path).unwrap();
        let got: Vec<(&str, RecordChange, Option<&str>)> = read
            .events
            .iter()
            .map(|e| {
                assert_eq!(e.node, NODE);
                (e.key.as_str(), e.event, e.value.as_deref())
            })
            .collect();
        assert_eq!(
            got,
            [
                (a, RecordChange::Set, Some("p0")),
                (b, RecordChange::Set, Some("p1")),
                (a, RecordChange::Deleted, None),
                (b, RecordChange::Set, Some("p1 again")),
                (b, RecordChange::Deleted, None),
            ]
        );
    }
}
