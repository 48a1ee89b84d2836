//! Watching a SQL server for what happens to the lock's records, by polling: what both
//! dialects' watchers share (`postgres/watch.rs` and `mariadb/watch.rs` say what they read).
//! Every [`POLL_EVERY`] a [`Poller`] reads, in one statement on the node's own address (not
//! its proxy), which lock each record names is held and by what value, with the server's own
//! clock; what differs from the last reading is written to the run's server record:
//!
//! - a key held with a new value → `set` (a lease row's with `ttl_ms`, its `expires_at` minus
//!   the server's now read in the same statement: the server's clock, whatever the clients'
//!   clocks do), after ending the value it held before as below;
//! - the same value, its lease's end moved (a renewal; or the server's clock moved against
//!   the watcher's, [`ClockOffset`]) → `renewed` with the new `ttl_ms`;
//! - the same value, its lease run out by the server's now → `expired` (the row stays until
//!   the next taker; the checker dates it at the TTL's end, `min(observed, set + ttl)`), and
//!   `set` again if the lease is live again later (the server's clock went back);
//! - the key no longer held (the row gone or its holder cleared, the session's lock let go)
//!   → `expired` when its lease had run out by the server's now, or when the session that
//!   held it is gone too (the server ended it: an idle timeout, a restart; or its client
//!   closed it, which lets its locks go the same way; a release followed by the client's
//!   disconnection within one poll reads the same), else `deleted`.
//!
//! A value that is no holder value (a session's connection id, [`Held::exact`] false) is
//! attributed by the checker from the acquire windows open when it was set, which is sound
//! only when the watcher saw the set within `WATCH_LAG_NS` of the change: such a `set` is
//! written only when this reading's reply came within that of the previous reading's request
//! (so the change, made in between, is at most that old), else left out with its end (the
//! checker then sees less, never something false).
//!
//! Each change is stamped when the reading's reply came, with the time to live left at the
//! server's now: the record's end, `time_ns + ttl_ms`, is never earlier than the server's
//! (later by at most the reply's delay), so a holder letting go just before its lease ran out
//! is never taken for one that believed on.
//!
//! A reading that takes longer than [`POLL_LIMIT`] (a paused server) or fails (a crashed one)
//! drops the connection; the next tick connects again, and the reading after it is compared
//! with the last one that came back: a change made while the server could not answer is
//! written late, never lost, and a change undone meanwhile is not seen.

use crate::server::record::{Change, ServerLog};
use crate::server::{WatchCtx, Watching};
use lockpick_checker::lock::WATCH_LAG_NS;
use lockpick_checker::server_record::RecordChange;
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How often each node is read: the lag of what the record shows, and its cost (one small
/// statement each time, about 0.15 ms of a PostgreSQL server's time).
pub(crate) const POLL_EVERY: Duration = Duration::from_millis(10);

/// How long connecting and one reading may take: a server paused past it (SIGSTOP) loses its
/// connection, and the watcher connects again at the next tick.
pub(crate) const POLL_LIMIT: Duration = Duration::from_millis(500);

/// How long the first connection and reading may take, when the watch starts.
const START_LIMIT: Duration = Duration::from_secs(5);

/// How far the server's clock may move against the watcher's before the leases' ends are
/// written again (`renewed`), in microseconds.
const CLOCK_TOLERANCE_US: i64 = 2_000;

/// One lock held on the server, as one reading saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Held {
    /// The record's key: the lock's name (its row's `name`, or the name its session lock is
    /// taken on).
    pub key: String,
    /// Who holds it, as the server stores it.
    pub value: String,
    /// `value` is the acquire's holder value (lockpick's recipes store it), so the checker
    /// attributes it exactly; otherwise (a connection id) by its windows only.
    pub exact: bool,
    /// A lease's end, in microseconds on the server's clock (the same origin as
    /// [`Reading::now_us`]); `None`: held as long as its session.
    pub expires_us: Option<i64>,
    /// The session holding it (a backend's pid, a connection id), for a session's lock.
    pub session: Option<i64>,
}

/// What one reading of a node saw.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reading {
    /// The server's now when it read, in microseconds on its clock; `None` when the lock's
    /// tables do not exist (yet): nothing is held.
    pub now_us: Option<i64>,
    pub held: Vec<Held>,
    /// The server's sessions, read after the locks; `None` when not read.
    pub sessions: Option<HashSet<i64>>,
    /// When the held locks and the now had been read, for a reading of several statements
    /// whose last ones came later (MariaDB's); `None`: at its reply.
    pub at: Option<Instant>,
}

/// A connection to one node that reads which locks are held.
pub(crate) trait Poller: Sized + Send + 'static {
    /// Connects to the node at `addr` (its own address), within `limit`.
    fn connect(
        addr: SocketAddr,
        limit: Duration,
    ) -> impl Future<Output = Result<Self, String>> + Send;

    /// Reads what is held now, in one statement where the server allows it (MariaDB's takes
    /// four: see its watcher). An error leaves the connection to be dropped.
    fn read(&mut self) -> impl Future<Output = Result<Reading, String>> + Send;
}

/// Starts watching every node of `ctx` with poller `P`: returns once each node was read once
/// (what changes after is seen), or says which node could not be.
pub(crate) async fn start<P: Poller>(ctx: WatchCtx) -> Result<Watching, String> {
    let stop = CancellationToken::new();
    let mut tasks = tokio::task::JoinSet::new();
    for (node, addr) in ctx.nodes {
        let mut watcher = NodeWatcher::<P> {
            addr,
            conn: None,
            record: NodeRecord::new(node, ctx.log.clone()),
        };
        tokio::time::timeout(START_LIMIT, watcher.poll(START_LIMIT))
            .await
            .map_err(|_| "timeout".to_owned())
            .and_then(|read| read)
            .map_err(|e| format!("watch {} at {addr}: {e}", watcher.record.node))?;
        tasks.spawn(watcher.run(stop.clone()));
    }
    Ok(Watching { stop, tasks })
}

/// What the record shows of one key.
#[derive(Debug, Clone)]
struct Known {
    value: String,
    exact: bool,
    expires_us: Option<i64>,
    session: Option<i64>,
    /// The record shows it held: a `set` written and no end since.
    shown: bool,
}

/// The watcher of one node.
struct NodeWatcher<P: Poller> {
    addr: SocketAddr,
    conn: Option<P>,
    record: NodeRecord,
}

/// What the record shows of one node, and what it is written to.
struct NodeRecord {
    node: String,
    log: Arc<ServerLog>,
    /// Per key, what the last reading that came back saw.
    known: HashMap<String, Known>,
    /// When the last reading that came back was asked for.
    last_sent: Option<Instant>,
    clock: ClockOffset,
}

impl<P: Poller> NodeWatcher<P> {
    /// Reads the node every [`POLL_EVERY`] until `stop`, then once more (what it did up to
    /// the end of the run) and returns.
    async fn run(mut self, stop: CancellationToken) {
        let mut tick = tokio::time::interval(POLL_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tick.tick() => {}
            }
            let _ = self.poll(POLL_LIMIT).await;
        }
        let _ = self.poll(POLL_LIMIT).await;
    }

    /// One reading (connecting first if needed), written as it differs from the last one.
    async fn poll(&mut self, limit: Duration) -> Result<(), String> {
        if self.conn.is_none() {
            self.conn = Some(P::connect(self.addr, limit).await?);
        }
        let conn = self.conn.as_mut().expect("connected above");
        let sent = Instant::now();
        let read = tokio::time::timeout(limit, conn.read()).await;
        let got = Instant::now();
        match read {
            Ok(Ok(reading)) => {
                let got = reading.at.unwrap_or(got);
                self.record.apply(reading, sent, got);
                Ok(())
            }
            Ok(Err(e)) => {
                self.conn = None;
                Err(e)
            }
            Err(_) => {
                self.conn = None;
                Err("timeout".to_owned())
            }
        }
    }
}

impl NodeRecord {
    fn new(node: String, log: Arc<ServerLog>) -> NodeRecord {
        NodeRecord {
            node,
            log,
            known: HashMap::new(),
            last_sent: None,
            clock: ClockOffset::default(),
        }
    }

    /// Writes what `reading` (asked for at `sent`, its reply at `got`) shows changed.
    fn apply(&mut self, reading: Reading, sent: Instant, got: Instant) {
        let at_ns = self.log.ns_at(got);
        // The changes this reading shows were made after the last one's request: a value
        // attributed by its window is written only when that is recent enough.
        let lag_bound = self.last_sent.map(|s| got.saturating_duration_since(s));
        let fresh = lag_bound.is_some_and(|d| d.as_nanos() <= u128::from(WATCH_LAG_NS));
        self.last_sent = Some(sent);
        let moved = reading
            .now_us
            .is_some_and(|now| self.clock.moved(sent, got, now));
        let (now_us, sessions) = (reading.now_us, reading.sessions.as_ref());
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for h in reading.held {
            seen.insert(h.key.clone());
            let live = match (h.expires_us, now_us) {
                (Some(e), Some(now)) => e > now,
                _ => true,
            };
            let ttl_ms = match (h.expires_us, now_us) {
                (Some(e), Some(now)) => Some(ceil_ms(e - now)),
                _ => None,
            };
            match self.known.get_mut(&h.key) {
                Some(k) if k.value == h.value => {
                    if k.shown && !live {
                        out.push((h.key.clone(), RecordChange::Expired, None, None));
                        k.shown = false;
                    } else if !k.shown && live && k.exact && h.expires_us.is_some() {
                        // Its lease is live again (the server's clock went back).
                        out.push((
                            h.key.clone(),
                            RecordChange::Set,
                            Some(h.value.clone()),
                            ttl_ms,
                        ));
                        k.shown = true;
                    } else if k.shown
                        && h.expires_us.is_some()
                        && (h.expires_us != k.expires_us || moved)
                    {
                        out.push((h.key.clone(), RecordChange::Renewed, None, ttl_ms));
                    }
                    k.expires_us = h.expires_us;
                }
                other => {
                    if let Some(old) = other {
                        if let Some(end) = ending(old, now_us, sessions) {
                            out.push((h.key.clone(), end, None, None));
                        }
                    }
                    let shown = live && (h.exact || fresh);
                    if shown {
                        out.push((
                            h.key.clone(),
                            RecordChange::Set,
                            Some(h.value.clone()),
                            ttl_ms,
                        ));
                    }
                    self.known.insert(
                        h.key.clone(),
                        Known {
                            value: h.value,
                            exact: h.exact,
                            expires_us: h.expires_us,
                            session: h.session,
                            shown,
                        },
                    );
                }
            }
        }
        let gone: Vec<String> = self
            .known
            .keys()
            .filter(|k| !seen.contains(*k))
            .cloned()
            .collect();
        for key in gone {
            let old = self.known.remove(&key).expect("listed above");
            if let Some(end) = ending(&old, now_us, sessions) {
                out.push((key, end, None, None));
            }
        }
        for (key, event, value, ttl_ms) in out {
            // A set 1 ns after the end of the value before it, which the server made first: the
            // record then shows the lock free in between, as it was (two values of one process
            // that abut would read as one record, hiding the second one's set).
            let at_ns = at_ns + u64::from(event == RecordChange::Set);
            self.log.write(Change {
                at_ns,
                node: self.node.clone(),
                key,
                event,
                value,
                ttl_ms,
            });
        }
    }
}

/// How a record the server no longer holds ended, if the record shows it: `expired` when its
/// lease had run out by the server's now, or when the session that held it is gone too (the
/// server ended it, or its client closed it: the server let its locks go), else `deleted`.
fn ending(
    old: &Known,
    now_us: Option<i64>,
    sessions: Option<&HashSet<i64>>,
) -> Option<RecordChange> {
    if !old.shown {
        return None;
    }
    let ran_out = match (old.expires_us, now_us) {
        (Some(e), Some(now)) => e <= now,
        (Some(_), None) => false,
        (None, _) => matches!((old.session, sessions), (Some(s), Some(live)) if !live.contains(&s)),
    };
    Some(if ran_out {
        RecordChange::Expired
    } else {
        RecordChange::Deleted
    })
}

/// Microseconds as whole milliseconds, rounded up (a lease's end is never written early); none
/// left is 0.
fn ceil_ms(us: i64) -> u64 {
    u64::try_from(us).map_or(0, |us| us.div_ceil(1000))
}

/// The server's clock against the watcher's: the offset `server now - watcher's time` lies
/// between `now - got` and `now - sent` for each reading (the server read its clock between
/// the request and the reply). While the clocks agree the readings' ranges overlap; one that
/// does not overlap the ones before means the server's clock moved (a clock fault on the
/// server, a jump or a drift), and the leases' ends the record shows are written again.
#[derive(Debug, Default)]
struct ClockOffset {
    /// The range every reading since the last move allows, in microseconds.
    range: Option<(i64, i64)>,
    origin: Option<Instant>,
}

impl ClockOffset {
    /// Takes in one reading's server time `now_us`, asked for at `sent` and answered at `got`;
    /// whether the server's clock moved since the readings before.
    fn moved(&mut self, sent: Instant, got: Instant, now_us: i64) -> bool {
        let origin = *self.origin.get_or_insert(sent);
        let us = |t: Instant| t.saturating_duration_since(origin).as_micros() as i64;
        let (lo, hi) = (now_us - us(got), now_us - us(sent));
        match self.range {
            None => {
                self.range = Some((lo, hi));
                false
            }
            Some((a, b)) => {
                let (lo2, hi2) = (a.max(lo), b.min(hi));
                if lo2 <= hi2 + CLOCK_TOLERANCE_US {
                    self.range = Some((lo2.min(hi2), hi2.max(lo2)));
                    false
                } else {
                    self.range = Some((lo, hi));
                    true
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reading_outside_the_clock_range_is_a_move() {
        let mut c = ClockOffset::default();
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        // Server time = watcher time + 1 s, read 1 ms into each 2 ms request.
        assert!(!c.moved(ms(0), ms(2), 1_001_000));
        assert!(!c.moved(ms(10), ms(12), 1_011_000));
        assert!(!c.moved(ms(20), ms(30), 1_029_000));
        // Jumped 5 s forward.
        assert!(c.moved(ms(40), ms(42), 6_041_000));
        assert!(!c.moved(ms(50), ms(52), 6_051_000));
        // And back.
        assert!(c.moved(ms(60), ms(62), 1_061_000));
    }

    #[test]
    fn readings_become_sets_renewals_expiries_and_deletions() {
        use lockpick_checker::server_record::read_server_record;
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(crate::recorder::Recorder::create(&dir.path().join("h")).unwrap());
        clock.restart_clock();
        let path = dir.path().join("server.jsonl");
        let log = Arc::new(ServerLog::create(&path, clock).unwrap());
        let mut rec = NodeRecord::new("n1".into(), log.clone());
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        // Server time = the watcher's + 1 s, in µs; each reading takes 1 ms.
        let now = |ms: u64| 1_000_000 + ms as i64 * 1000;
        let row = |value: &str, expires_ms: u64| Held {
            key: "lock".into(),
            value: value.into(),
            exact: true,
            expires_us: Some(now(expires_ms)),
            session: None,
        };
        let mut read = |ms: u64, held: Vec<Held>, sessions: &[i64]| {
            let reading = Reading {
                now_us: Some(now(ms)),
                held,
                sessions: Some(sessions.iter().copied().collect()),
                at: None,
            };
            rec.apply(reading, at(ms - 1), at(ms));
        };
        read(10, vec![], &[]);
        read(20, vec![row("0-a", 320)], &[]); // set, 300 ms left
        read(30, vec![row("0-a", 320)], &[]); // nothing new
        read(40, vec![row("0-a", 420)], &[]); // renewed
        read(430, vec![row("0-a", 420)], &[]); // ran out: expired
        read(440, vec![row("1-b", 740)], &[]); // set
        read(450, vec![], &[]); // gone while live: deleted
                                // A session's lock named by its connection: set when seen soon enough; gone with
                                // its session: expired.
        let named = Held {
            key: "lock".into(),
            value: "conn:7".into(),
            exact: false,
            expires_us: None,
            session: Some(7),
        };
        read(460, vec![named.clone()], &[7]);
        read(470, vec![], &[]);
        // Seen too late after the reading before (the set may be older than the watcher's
        // lag allows): left out, and its end too.
        read(520, vec![named.clone()], &[7]);
        read(530, vec![], &[7]);
        log.finish().unwrap();
        let got: Vec<(String, Option<String>, Option<u64>)> = read_server_record(&path)
            .unwrap()
            .events
            .iter()
            .map(|e| (format!("{:?}", e.event), e.value.clone(), e.ttl_ms))
            .collect();
        let e = |ev: &str, v: Option<&str>, ttl: Option<u64>| {
            (ev.to_owned(), v.map(str::to_owned), ttl)
        };
        assert_eq!(
            got,
            [
                e("Set", Some("0-a"), Some(300)),
                e("Renewed", None, Some(380)),
                e("Expired", None, None),
                e("Set", Some("1-b"), Some(300)),
                e("Deleted", None, None),
                e("Set", Some("conn:7"), None),
                e("Expired", None, None),
            ]
        );
    }

    #[test]
    fn milliseconds_round_up() {
        assert_eq!(
            (
                ceil_ms(-5),
                ceil_ms(0),
                ceil_ms(1),
                ceil_ms(1000),
                ceil_ms(1001)
            ),
            (0, 0, 1, 1, 2)
        );
    }
}
