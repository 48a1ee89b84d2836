//! An embedded Toxiproxy-compatible server on its own runtime, and raw HTTP/1.1 requests to
//! it, for the tests of its API as a client (or a browser) on the wire sees it.

// Each test binary that includes this module uses only part of it.
#![allow(dead_code)]

use lockpick_harness::proxy::EmbeddedToxiproxy;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};

/// Runs the server on its own runtime so that blocking clients can be used from the test
/// thread, as reqwest's blocking client requires.
pub struct Server {
    runtime: tokio::runtime::Runtime,
    server: Option<EmbeddedToxiproxy>,
}

impl Server {
    pub fn start() -> Server {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let server = runtime
            .block_on(EmbeddedToxiproxy::start("127.0.0.1:0".parse().unwrap()))
            .unwrap();
        Server {
            runtime,
            server: Some(server),
        }
    }

    pub fn api(&self) -> SocketAddr {
        self.server.as_ref().unwrap().api_addr()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(server) = self.server.take() {
            self.runtime.block_on(server.shutdown());
        }
    }
}

/// An echo server on threads (alive as long as the test binary); returns its address.
pub fn echo() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    echo_on(listener);
    addr
}

/// Echoes every connection `listener` accepts, on threads, as long as the test binary runs.
pub fn echo_on(listener: TcpListener) {
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = stream.read(&mut buf) {
                    if n == 0 || stream.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            });
        }
    });
}

/// One answer: status, header lines (lower-cased names) and the raw body text.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON; Null when empty, a JSON string when it is not JSON (Toxiproxy's
    /// plain-text answers).
    pub fn json(&self) -> Value {
        if self.body.trim().is_empty() {
            return Value::Null;
        }
        serde_json::from_str(&self.body).unwrap_or_else(|_| Value::String(self.body.clone()))
    }
}

/// A one-shot HTTP/1.1 request with extra header lines (`"Name: value"`).
pub fn request(api: SocketAddr, method: &str, path: &str, headers: &[&str], body: &str) -> Answer {
    let mut stream = TcpStream::connect(api).unwrap();
    let extra: String = headers.iter().map(|h| format!("{h}\r\n")).collect();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {api}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let mut lines = head.lines();
    let status = lines.next().unwrap()[9..12].parse().unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Answer {
        status,
        headers,
        body: body.to_string(),
    }
}

/// A request as a non-browser client sends it; returns status and JSON body.
pub fn http(api: SocketAddr, method: &str, path: &str, body: &str) -> (u16, Value) {
    let answer = request(api, method, path, &[], body);
    (answer.status, answer.json())
}
