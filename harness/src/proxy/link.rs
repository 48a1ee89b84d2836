//! One proxied TCP connection: two pumps (client to upstream, upstream to client) that pass
//! every chunk through the proxy's current toxics, re-read for each chunk so that changes
//! apply to connections that are already open. Timeout toxics follow Toxiproxy 2.x: data is
//! dropped while one is active, and removing it closes the connections it was on.

use super::toxic::{Stream, Toxic, ToxicKind};
use rand::Rng;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};
use tokio::time::{sleep, sleep_until, Instant};

/// The toxics of one proxy, in the order they were added (Toxiproxy chains them that way).
pub type ToxicList = Arc<Vec<Toxic>>;

const READ_BUFFER: usize = 32 * 1024;
/// Bounded so a stalled writer (latency, bandwidth) pushes back on the reader instead of
/// buffering without limit.
const CHUNKS_IN_FLIGHT: usize = 64;
/// The longest wait a toxic can ask for: 30 years, as tokio's own "far future". Toxic
/// attributes go up to `i64::MAX` ms; past this they all mean "never" and must not overflow
/// an `Instant`.
const FOREVER: Duration = Duration::from_secs(30 * 365 * 24 * 3600);
/// How long a connection waits for an upstream that refuses it to start listening. A proxy
/// has accepted the client's connect before it learns that the server behind it is not
/// listening, where a network would have refused it, and some clients retry a refused
/// connect but give up on a connection that closes (a ZooKeeper follower reaching a leader
/// elected a moment before it listens: both followers of a 3.9 ensemble did, and no quorum
/// formed). Waiting as long as such a client's own retries would last stands in for them.
pub(super) const UPSTREAM_WAIT: Duration = Duration::from_secs(2);
/// Pause between tries of an upstream that refused.
const UPSTREAM_RETRY: Duration = Duration::from_millis(25);

struct Chunk {
    data: Vec<u8>,
    /// When the bytes were read: latency is measured from here, as Toxiproxy does.
    at: Instant,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PumpEnd {
    /// The source finished; the destination got a FIN, the other direction may go on.
    Eof,
    /// A toxic or an error ends the whole connection.
    Close,
}

/// Proxies `client` to `upstream` until either side ends or a toxic closes the connection.
/// Dropping the future closes both sockets.
pub async fn run(client: TcpStream, upstream: String, toxics: watch::Receiver<ToxicList>) {
    let Some(server) = connect_upstream(&upstream).await else {
        // Reset, not a FIN: the nearest a proxy can come to the refusal the client would
        // have had without it.
        let _ = client.set_zero_linger();
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (client_r, client_w) = client.into_split();
    let (server_r, server_w) = server.into_split();
    let up = pump(client_r, server_w, Stream::Upstream, toxics.clone());
    let down = pump(server_r, client_w, Stream::Downstream, toxics);
    tokio::pin!(up, down);
    let (mut up_done, mut down_done) = (false, false);
    while !(up_done && down_done) {
        let end = tokio::select! {
            end = &mut up, if !up_done => { up_done = true; end }
            end = &mut down, if !down_done => { down_done = true; end }
        };
        if end == PumpEnd::Close {
            return;
        }
    }
}

/// A connection to `upstream`, tried again while it refuses, up to [`UPSTREAM_WAIT`] (the
/// client's bytes wait in its socket meanwhile); `None` if it never accepted, or failed
/// otherwise (unreachable, reset), which no wait mends.
async fn connect_upstream(upstream: &str) -> Option<TcpStream> {
    let give_up = Instant::now() + UPSTREAM_WAIT;
    loop {
        match TcpStream::connect(upstream).await {
            Ok(server) => return Some(server),
            Err(e)
                if e.kind() == std::io::ErrorKind::ConnectionRefused
                    && Instant::now() < give_up =>
            {
                sleep(UPSTREAM_RETRY).await;
            }
            Err(_) => return None,
        }
    }
}

async fn pump(
    src: OwnedReadHalf,
    dst: OwnedWriteHalf,
    stream: Stream,
    toxics: watch::Receiver<ToxicList>,
) -> PumpEnd {
    let (tx, rx) = mpsc::channel(CHUNKS_IN_FLIGHT);
    let reader = read_chunks(src, tx);
    let writer = Writer::new(stream, toxics).run(rx, dst);
    tokio::pin!(reader, writer);
    tokio::select! {
        () = &mut reader => writer.await,
        end = &mut writer => end,
    }
}

async fn read_chunks(mut src: OwnedReadHalf, tx: mpsc::Sender<Chunk>) {
    let mut buf = vec![0u8; READ_BUFFER];
    loop {
        match src.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                let chunk = Chunk {
                    data: buf[..n].to_vec(),
                    at: Instant::now(),
                };
                if tx.send(chunk).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Per-connection, per-direction view of the toxics.
struct Writer {
    stream: Stream,
    toxics: watch::Receiver<ToxicList>,
    /// Toxicity is rolled once per connection and toxic, like Toxiproxy's per-link stubs.
    rolls: HashMap<u64, bool>,
    /// When this connection first saw each timeout toxic: its countdown starts there.
    timeout_seen: HashMap<u64, Instant>,
    /// Names of the timeout toxics this connection has been through: removing one closes
    /// the connection, as Toxiproxy does since data was dropped and the stream is corrupt.
    timeout_names: HashSet<String>,
    /// Bytes already let through each limit_data toxic.
    limit_sent: HashMap<u64, u64>,
}

/// The toxics acting on this direction of this connection right now.
struct View {
    active: Vec<Toxic>,
    /// An active timeout toxic drops all data.
    blackhole: bool,
    /// Earliest moment an active timeout toxic (timeout > 0) closes the connection.
    close_at: Option<Instant>,
    /// A timeout toxic this connection went through was removed.
    timeout_removed: bool,
}

impl Writer {
    fn new(stream: Stream, toxics: watch::Receiver<ToxicList>) -> Self {
        Writer {
            stream,
            toxics,
            rolls: HashMap::new(),
            timeout_seen: HashMap::new(),
            timeout_names: HashSet::new(),
            limit_sent: HashMap::new(),
        }
    }

    fn view(&mut self) -> View {
        let list = self.toxics.borrow_and_update().clone();
        let mine: Vec<&Toxic> = list.iter().filter(|t| t.stream == self.stream).collect();
        let timeout_removed = self.timeout_names.iter().any(|name| {
            !mine
                .iter()
                .any(|t| &t.name == name && matches!(t.kind, ToxicKind::Timeout { .. }))
        });
        let mut view = View {
            active: Vec::new(),
            blackhole: false,
            close_at: None,
            timeout_removed,
        };
        for toxic in mine {
            let on = *self.rolls.entry(toxic.id).or_insert_with(|| {
                toxic.toxicity >= 1.0 || rand::rng().random::<f64>() < toxic.toxicity
            });
            if let ToxicKind::Timeout { timeout } = toxic.kind {
                self.timeout_names.insert(toxic.name.clone());
                if on {
                    view.blackhole = true;
                    let seen = *self
                        .timeout_seen
                        .entry(toxic.id)
                        .or_insert_with(Instant::now);
                    if timeout > 0 {
                        let at = after(seen, Duration::from_millis(non_negative(timeout)));
                        view.close_at = Some(view.close_at.map_or(at, |c| c.min(at)));
                    }
                }
            }
            if on {
                view.active.push(toxic.clone());
            }
        }
        view
    }

    async fn run(mut self, mut rx: mpsc::Receiver<Chunk>, mut dst: OwnedWriteHalf) -> PumpEnd {
        loop {
            let view = self.view();
            if view.timeout_removed {
                return PumpEnd::Close;
            }
            let close_at = view.close_at;
            tokio::select! {
                () = sleep_until(close_at.unwrap_or_else(Instant::now)), if close_at.is_some() => {
                    return PumpEnd::Close;
                }
                changed = self.toxics.changed() => {
                    if changed.is_err() {
                        // The proxy is gone.
                        return PumpEnd::Close;
                    }
                }
                chunk = rx.recv() => match chunk {
                    None => return finish(&view, dst).await,
                    // Timeout toxics drop data on the floor, as Toxiproxy 2.x does.
                    Some(_) if view.blackhole => {}
                    Some(chunk) => {
                        if !self.deliver(chunk, view, &mut dst).await {
                            return PumpEnd::Close;
                        }
                    }
                },
            }
        }
    }

    /// Writes one chunk through latency, limit_data, slicer and bandwidth; false when the
    /// connection must close.
    async fn deliver(&mut self, chunk: Chunk, mut view: View, dst: &mut OwnedWriteHalf) -> bool {
        // Toxic changes while the chunk waits take effect at once, as when Toxiproxy
        // interrupts a latency toxic: a heal releases it, a partition swallows it.
        let mut due = after(chunk.at, latency_of(&view.active));
        while Instant::now() < due {
            tokio::select! {
                () = sleep_until(due) => break,
                changed = self.toxics.changed() => {
                    if changed.is_err() {
                        return false;
                    }
                    view = self.view();
                    if view.timeout_removed {
                        return false;
                    }
                    if view.blackhole {
                        return true;
                    }
                    due = after(chunk.at, latency_of(&view.active));
                }
            }
        }

        let mut data = chunk.data;
        let mut close_after = false;
        for t in &view.active {
            if let ToxicKind::LimitData { bytes } = t.kind {
                let bytes = non_negative(bytes);
                let sent = self.limit_sent.entry(t.id).or_insert(0);
                let room = bytes.saturating_sub(*sent);
                if data.len() as u64 >= room {
                    data.truncate(room as usize);
                    close_after = true;
                }
                *sent += data.len() as u64;
            }
        }

        let slicer = view.active.iter().find_map(|t| match t.kind {
            ToxicKind::Slicer {
                average_size,
                size_variation,
                delay,
            } if average_size > 0 => Some((
                non_negative(average_size),
                non_negative(size_variation),
                non_negative(delay),
            )),
            _ => None,
        });
        let rate = view
            .active
            .iter()
            .filter_map(|t| match t.kind {
                ToxicKind::Bandwidth { rate } if rate > 0 => Some(non_negative(rate)),
                _ => None,
            })
            .min();

        let mut rest = &data[..];
        while !rest.is_empty() {
            let size = match slicer {
                Some((avg, var, _)) => slice_size(avg, var).min(rest.len()),
                None => rest.len(),
            };
            let (piece, tail) = rest.split_at(size);
            rest = tail;
            if write_paced(dst, piece, rate).await.is_err() {
                return false;
            }
            if let Some((_, _, micros)) = slicer {
                if !rest.is_empty() {
                    sleep(Duration::from_micros(micros).min(FOREVER)).await;
                }
            }
        }
        !close_after
    }
}

/// Passes the source's FIN on, after the longest active slow_close delay.
async fn finish(view: &View, mut dst: OwnedWriteHalf) -> PumpEnd {
    let delay = view
        .active
        .iter()
        .filter_map(|t| match t.kind {
            ToxicKind::SlowClose { delay } => Some(non_negative(delay)),
            _ => None,
        })
        .max();
    if let Some(delay) = delay {
        sleep(Duration::from_millis(delay).min(FOREVER)).await;
    }
    if dst.shutdown().await.is_err() {
        return PumpEnd::Close;
    }
    PumpEnd::Eof
}

/// A toxic attribute as a count: Toxiproxy reads a negative one as no delay / no limit.
fn non_negative(value: i64) -> u64 {
    u64::try_from(value).unwrap_or(0)
}

/// `at + wait`, with waits past [`FOREVER`] held at it so the sum cannot overflow.
fn after(at: Instant, wait: Duration) -> Instant {
    at.checked_add(wait.min(FOREVER))
        .unwrap_or_else(|| at + Duration::from_secs(24 * 3600))
}

/// Total delay of the latency toxics, each with its own jitter roll (saturating).
fn latency_of(active: &[Toxic]) -> Duration {
    active
        .iter()
        .map(|t| match t.kind {
            ToxicKind::Latency { latency, jitter } => jittered(latency, jitter),
            _ => Duration::ZERO,
        })
        .fold(Duration::ZERO, Duration::saturating_add)
}

/// Latency ± jitter, uniform like Toxiproxy's, never below zero. Computed in i128 so that
/// no int64 pair Toxiproxy accepts can overflow.
fn jittered(latency: i64, jitter: i64) -> Duration {
    let mut millis = i128::from(latency);
    if jitter > 0 {
        let jitter = i128::from(jitter);
        millis += rand::rng().random_range(-jitter..jitter);
    }
    Duration::from_millis(u64::try_from(millis.max(0)).unwrap_or(u64::MAX))
}

fn slice_size(average: u64, variation: u64) -> usize {
    let variation = variation.min(average.saturating_sub(1));
    let size = if variation == 0 {
        u128::from(average)
    } else {
        u128::from(average - variation) + rand::rng().random_range(0..=2 * u128::from(variation))
    };
    usize::try_from(size.max(1)).unwrap_or(usize::MAX)
}

/// Writes `piece`, at `rate` KB/s if given, in 100 ms steps as Toxiproxy's bandwidth toxic.
async fn write_paced(
    dst: &mut OwnedWriteHalf,
    piece: &[u8],
    rate: Option<u64>,
) -> std::io::Result<()> {
    let Some(rate) = rate else {
        return dst.write_all(piece).await;
    };
    let bytes_per_step = usize::try_from(rate.saturating_mul(100).max(1)).unwrap_or(usize::MAX);
    for step in piece.chunks(bytes_per_step) {
        let wait = Duration::from_micros(step.len() as u64 * 1000 / rate);
        sleep(wait).await;
        dst.write_all(step).await?;
    }
    Ok(())
}
