//! `lockpick serve`: an HTTP/1 server on a loopback address that lists the store's runs and
//! serves their reports and raw files, read-only. It never serves a path that resolves outside
//! the store (403 for a symlink out of it), reads at most [`MAX_HEAD`] bytes of request line and
//! headers within [`HEAD_TIMEOUT`], drops a client that stops reading for [`WRITE_TIMEOUT`], and
//! runs at most [`MAX_CONNECTIONS`] connections at once (503 past that).
//!
//! HTTP is hyper 1 with hyper-util's Tokio glue (beside the embedded Toxiproxy's hyper 0.14):
//! tonic, under etcd-client, already builds both, so they add no crate to the build; axum and
//! tower-http's `ServeDir` would add crates, and other content types and folder pages.

mod body;
mod conn;
mod head;
mod routes;
#[cfg(test)]
mod tests;

use crate::cli::ServeArgs;
use crate::outcome::{Exit, Failure, Outcome};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use routes::Site;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::time::Instant;

/// Request line plus headers, in bytes: a longer line is answered 414, longer headers 431.
pub const MAX_HEAD: usize = 8 * 1024;
/// Time a client has to send its request line and headers (408 after).
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections served at once; one more is answered 503 and closed.
pub const MAX_CONNECTIONS: usize = 32;
/// A client that stops reading the answer for this long is dropped.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// Connections past [`MAX_CONNECTIONS`] being answered 503 at once; more are closed unanswered.
const MAX_REJECTS: usize = 64;
/// Pause after a failed accept (out of file descriptors, say), so the loop does not spin.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

pub(super) fn serve(args: ServeArgs) -> Outcome {
    if !args.listen.ip().is_loopback() {
        return Err(Failure::usage(format!(
            "read --listen: {} is not a loopback address; serve only listens on 127.0.0.1 or ::1",
            args.listen
        )));
    }
    let listen = |e: std::io::Error| Failure::harness(format!("listen on {}: {e}", args.listen));
    let listener = std::net::TcpListener::bind(args.listen).map_err(listen)?;
    listener.set_nonblocking(true).map_err(listen)?;
    let addr = listener.local_addr().map_or(args.listen, |a| a);
    crate::run_args::runtime()
        .block_on(async {
            let listener = TcpListener::from_std(listener)?;
            outln!(
                "lockpick: serving {} on http://{addr}/",
                args.store.display()
            );
            let _ = std::io::stdout().flush();
            serve_on(listener, &args.store, Limits::default()).await;
            Ok(())
        })
        .map_err(listen)?;
    Ok(Exit::Done)
}

/// How much one server takes on; tests use smaller ones.
#[derive(Debug, Clone, Copy)]
struct Limits {
    connections: usize,
    head_timeout: Duration,
    write_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connections: MAX_CONNECTIONS,
            head_timeout: HEAD_TIMEOUT,
            write_timeout: WRITE_TIMEOUT,
        }
    }
}

/// Accepts forever, one task per connection up to `limits.connections`.
async fn serve_on(listener: TcpListener, store: &Path, limits: Limits) {
    let site = Arc::new(Site::new(store));
    let places = Arc::new(Semaphore::new(limits.connections));
    let rejects = Arc::new(Semaphore::new(MAX_REJECTS));
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(_) => {
                tokio::time::sleep(ACCEPT_RETRY).await;
                continue;
            }
        };
        if let Ok(place) = Arc::clone(&places).try_acquire_owned() {
            let site = Arc::clone(&site);
            tokio::spawn(async move {
                connection(stream, site, limits).await;
                drop(place);
            });
        } else if let Ok(place) = Arc::clone(&rejects).try_acquire_owned() {
            tokio::spawn(async move {
                head::reject(stream).await;
                drop(place);
            });
        }
    }
}

/// One request: its head read under the limits here, then parsed and answered by hyper.
async fn connection(mut stream: TcpStream, site: Arc<Site>, limits: Limits) {
    let deadline = Instant::now() + limits.head_timeout;
    let head = match head::read(&mut stream, deadline).await {
        Ok(head) => head,
        Err(refusal) => return head::refuse(stream, refusal).await,
    };
    let io = TokioIo::new(conn::Conn::new(head, stream, limits.write_timeout));
    let service = hyper::service::service_fn(move |request| {
        let site = Arc::clone(&site);
        async move { Ok::<_, std::convert::Infallible>(routes::answer(request, site).await) }
    });
    let _ = http1::Builder::new()
        // One request per connection, as ever: the limits above are checked on the first head
        // only.
        .keep_alive(false)
        // Header names as they have always been written, and as `head` writes them.
        .title_case_headers(true)
        // Should hyper still want more of a head that looked complete to `head::read`, the
        // client gets no more time than it had.
        .timer(TokioTimer::new())
        .header_read_timeout(deadline.saturating_duration_since(Instant::now()))
        .serve_connection(io, service)
        .await;
}
