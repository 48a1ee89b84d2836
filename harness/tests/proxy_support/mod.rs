//! One proxy of an embedded Toxiproxy in front of a small echo server, for the tests that
//! measure faults and toxics on real sockets.

// Each test binary that includes this module uses only part of it.
#![allow(dead_code)]

use lockpick_harness::proxy::{EmbeddedToxiproxy, FaultProxies};
use std::net::SocketAddr;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// What the echo server does once the client has sent its FIN.
#[derive(Clone, Copy)]
pub enum OnFin {
    /// Leaves its own side open.
    KeepOpen,
    /// Closes its side too, so a client can read to the end.
    Close,
}

/// Echoes every byte back; aborted (with its connections) when dropped.
pub struct Echo {
    pub addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Drop for Echo {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub async fn echo_server(on_fin: OnFin) -> Echo {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let mut connections = tokio::task::JoinSet::new();
        while let Ok((mut stream, _)) = listener.accept().await {
            connections.spawn(async move {
                let (mut r, mut w) = stream.split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
                if let OnFin::Close = on_fin {
                    let _ = w.shutdown().await;
                }
            });
        }
    });
    Echo { addr, task }
}

/// An embedded Toxiproxy with one proxy, and the echo server behind it unless told otherwise.
pub struct Setup {
    pub server: EmbeddedToxiproxy,
    pub proxies: FaultProxies,
    /// Where the proxy listens.
    pub listen: SocketAddr,
    _echo: Echo,
}

impl Setup {
    /// Where the echo server behind the proxy listens.
    pub fn echo_addr(&self) -> SocketAddr {
        self._echo.addr
    }
}

/// Starts the server and a proxy named `name` in front of `upstream`, or of a new echo server
/// answering FINs as `on_fin` says.
pub async fn setup(name: &str, on_fin: OnFin, upstream: Option<SocketAddr>) -> Setup {
    let echo = echo_server(on_fin).await;
    let server = EmbeddedToxiproxy::start("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let proxies = FaultProxies::new(server.api_addr()).expect("client thread");
    let listen = proxies
        .create(name, upstream.unwrap_or(echo.addr))
        .await
        .unwrap();
    assert!(listen.ip().is_loopback());
    Setup {
        server,
        proxies,
        listen,
        _echo: echo,
    }
}
