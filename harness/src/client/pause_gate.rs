//! Local relays between one client process and the servers that pass no byte while the client
//! is paused. For locks whose liveness rests on heartbeats a client library sends by itself
//! (ZooKeeper session pings), this makes the simulated GC pause stop them too, as a real
//! stop-the-world pause stops every thread of the process.

use super::pause::PausePoints;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::{JoinHandle, JoinSet};

/// How often a paused relay looks whether its client runs again.
const PAUSE_POLL: Duration = Duration::from_millis(5);

/// The relays of one client process; they stop (with their connections) when it is dropped.
pub(crate) struct PauseGate {
    addrs: Vec<SocketAddr>,
    tasks: Vec<JoinHandle<()>>,
}

impl PauseGate {
    /// Opens one relay per upstream, each on a free loopback port.
    pub(crate) async fn open(
        upstreams: &[SocketAddr],
        points: Arc<PausePoints>,
    ) -> io::Result<PauseGate> {
        let mut addrs = Vec::new();
        let mut tasks = Vec::new();
        for &upstream in upstreams {
            let listener = crate::processes::ports::bind_listener_tokio(
                (std::net::Ipv4Addr::LOCALHOST, 0).into(),
            )?;
            addrs.push(listener.local_addr()?);
            let points = points.clone();
            tasks.push(tokio::spawn(async move {
                let mut links = JoinSet::new();
                loop {
                    tokio::select! {
                        accepted = listener.accept() => {
                            let Ok((client, _)) = accepted else { continue };
                            links.spawn(relay(client, upstream, points.clone()));
                        }
                        Some(_) = links.join_next(), if !links.is_empty() => {}
                    }
                }
            }));
        }
        Ok(PauseGate { addrs, tasks })
    }

    /// Where the client connects instead of the upstreams, in the same order.
    pub(crate) fn addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }
}

impl Drop for PauseGate {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

async fn relay(client: TcpStream, upstream: SocketAddr, points: Arc<PausePoints>) {
    let Ok(server) = TcpStream::connect(upstream).await else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    tokio::select! {
        _ = gated_copy(client_read, server_write, &points) => {}
        _ = gated_copy(server_read, client_write, &points) => {}
    }
}

/// Copies until either side closes, reading and writing nothing while the client is paused:
/// what arrives meanwhile waits in the kernel's buffers, as for a stopped process.
async fn gated_copy(
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    points: &PausePoints,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        while points.is_paused() {
            tokio::time::sleep(PAUSE_POLL).await;
        }
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        while points.is_paused() {
            tokio::time::sleep(PAUSE_POLL).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}
