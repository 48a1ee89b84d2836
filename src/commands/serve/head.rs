//! The request head, read under `serve`'s limits before hyper parses it, and the answers
//! written here when it breaks one (or the server is full). hyper alone would answer an
//! overlong request line 431 where `serve` says 414, and drop a slow client without a 408.

use super::MAX_HEAD;
use hyper::StatusCode;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{timeout, timeout_at, Instant};

/// How long a connection past the cap has to send its request and to take its 503: rejected
/// clients must not hold a reject place long.
const REJECT_TIME: Duration = Duration::from_millis(200);
/// How long a refused client has to take its answer, and then to stop sending (see
/// [`close_gently`]).
const LINGER: Duration = Duration::from_secs(1);
/// At most this much of what a refused client still sends is read and dropped.
const DRAIN: u64 = 1 << 20;

/// Why a request head was not read.
#[derive(Debug)]
pub(super) enum Refusal {
    /// No line break in the first [`MAX_HEAD`] bytes: 414.
    LineTooLong,
    /// A request line, but no end of the headers in the first [`MAX_HEAD`] bytes: 431.
    HeadTooLarge,
    /// The head did not come by the deadline: 408.
    TimedOut,
    /// The client closed, or the socket failed: nothing to answer.
    Closed,
}

/// Reads until the empty line that ends the head, at most [`MAX_HEAD`] bytes, by `deadline`.
/// Returns every byte read, for hyper to parse.
pub(super) async fn read(stream: &mut TcpStream, deadline: Instant) -> Result<Vec<u8>, Refusal> {
    let mut head = vec![0; MAX_HEAD];
    let mut filled = 0;
    loop {
        let n = match timeout_at(deadline, stream.read(&mut head[filled..])).await {
            Err(_) => return Err(Refusal::TimedOut),
            Ok(Ok(0) | Err(_)) => return Err(Refusal::Closed),
            Ok(Ok(n)) => n,
        };
        // The end of the head may straddle two reads: look again at the last two bytes.
        let from = filled.saturating_sub(2);
        filled += n;
        // Empty lines before the request line are skipped (as hyper does), not an end.
        let start = head[..filled].iter().position(|b| !b"\r\n".contains(b));
        if let Some(start) = start {
            if ends_head(&head[from.max(start)..filled]) {
                head.truncate(filled);
                return Ok(head);
            }
        }
        if filled == MAX_HEAD {
            return Err(match start {
                Some(start) if head[start..].contains(&b'\n') => Refusal::HeadTooLarge,
                _ => Refusal::LineTooLong,
            });
        }
    }
}

/// Whether `bytes` hold a line's end followed by an empty line (either with or without `\r`).
fn ends_head(bytes: &[u8]) -> bool {
    bytes.windows(2).any(|w| w == b"\n\n") || bytes.windows(3).any(|w| w == b"\n\r\n")
}

/// Answers a head that broke a limit, and closes.
pub(super) async fn refuse(mut stream: TcpStream, refusal: Refusal) {
    let kib = MAX_HEAD / 1024;
    let (status, body) = match refusal {
        Refusal::LineTooLong => (
            StatusCode::URI_TOO_LONG,
            format!("request line longer than {kib} KiB\n"),
        ),
        Refusal::HeadTooLarge => (
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            format!("request headers larger than {kib} KiB\n"),
        ),
        Refusal::TimedOut => (
            StatusCode::REQUEST_TIMEOUT,
            "request not received in time\n".to_owned(),
        ),
        Refusal::Closed => return,
    };
    if answer(&mut stream, status, &body, LINGER).await {
        close_gently(&mut stream, LINGER).await;
    }
}

/// Answers 503 to a connection past the cap, after reading its request (briefly), so that
/// the client reads the answer instead of a reset.
pub(super) async fn reject(mut stream: TcpStream) {
    let _ = read(&mut stream, Instant::now() + REJECT_TIME).await;
    let body = "busy: too many connections, try again\n";
    if answer(
        &mut stream,
        StatusCode::SERVICE_UNAVAILABLE,
        body,
        REJECT_TIME,
    )
    .await
    {
        close_gently(&mut stream, REJECT_TIME).await;
    }
}

/// Writes a whole plain-text answer by hand (hyper answers parsed requests only) within
/// `limit`; whether it was written.
async fn answer(stream: &mut TcpStream, status: StatusCode, body: &str, limit: Duration) -> bool {
    let text = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        status.as_u16(),
        status.canonical_reason().unwrap_or_default(),
        body.len()
    );
    matches!(
        timeout(limit, stream.write_all(text.as_bytes())).await,
        Ok(Ok(()))
    )
}

/// Closes our side, then reads (and drops) what the client still sends, for a moment: a
/// socket closed with unread data resets the connection, and the client may lose our answer.
async fn close_gently(stream: &mut TcpStream, linger: Duration) {
    let _ = stream.shutdown().await;
    let (mut unread, mut sink) = ((&mut *stream).take(DRAIN), tokio::io::sink());
    let _ = timeout(linger, tokio::io::copy(&mut unread, &mut sink)).await;
}

#[cfg(test)]
mod tests {
    use super::ends_head;

    #[test]
    fn a_head_ends_at_its_first_empty_line() {
        assert!(ends_head(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
        assert!(ends_head(b"GET / HTTP/1.1\nHost: x\n\n"));
        assert!(ends_head(b"GET / HTTP/1.1\r\n\r\nbody"));
        assert!(!ends_head(b"GET / HTTP/1.1\r\nHost: x\r\n"));
        assert!(!ends_head(b"GET / HTTP/1.1\r\nHost: x\r\n\r"));
    }
}
