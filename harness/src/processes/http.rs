//! A minimal HTTP/1.0 exchange over loopback for readiness and leader probes, so probing a
//! cluster member needs no client library and always ends within its time limit.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Largest answer read; probes answer a few hundred bytes.
const MAX_ANSWER: usize = 64 * 1024;

/// Sends one request (`body` given: POST with that JSON body, else GET) and returns the answer
/// body when the status is 200. `None` on any failure or past `timeout` (connect included).
pub(crate) async fn request(
    addr: SocketAddr,
    path: &str,
    body: Option<&str>,
    timeout: Duration,
) -> Option<String> {
    tokio::time::timeout(timeout, exchange(addr, path, body))
        .await
        .ok()?
        .ok()?
}

async fn exchange(addr: SocketAddr, path: &str, body: Option<&str>) -> io::Result<Option<String>> {
    let mut stream = TcpStream::connect(addr).await?;
    let head = match body {
        Some(body) => format!(
            "POST {path} HTTP/1.0\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ),
        None => format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n"),
    };
    stream.write_all(head.as_bytes()).await?;
    // HTTP/1.0: the server closes the connection after the answer; one that keeps it open
    // regardless (Hazelcast's REST endpoint answers in HTTP/1.1) has said how long its body is.
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 || answer.len() > MAX_ANSWER {
            break;
        }
        answer.extend_from_slice(&buf[..n]);
        if complete(&answer) {
            break;
        }
    }
    let text = String::from_utf8_lossy(&answer);
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        return Ok(None);
    };
    let ok = head
        .lines()
        .next()
        .is_some_and(|status| status.split_whitespace().nth(1) == Some("200"));
    Ok(ok.then(|| body.to_string()))
}

/// Whether `answer` holds its whole head and as many body bytes as its `Content-Length` says;
/// false without that header (then only the server's close ends it).
fn complete(answer: &[u8]) -> bool {
    let Some(end) = answer.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&answer[..end]);
    let length = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse::<usize>().ok())?
    });
    length.is_some_and(|length| answer.len() >= end + 4 + length)
}

#[cfg(test)]
mod tests {
    use super::complete;

    #[test]
    fn an_answer_is_complete_once_its_content_length_is_read() {
        let head = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n";
        assert!(!complete(&head[..20]));
        assert!(!complete(&[&head[..], b"ab"].concat()));
        assert!(complete(&[&head[..], b"abcd"].concat()));
        assert!(!complete(b"HTTP/1.0 200 OK\r\n\r\nbody"));
    }
}
