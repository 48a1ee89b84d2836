//! The listening side of one proxy: accepts clients while enabled and, when disabled, closes
//! the listener and every connection before reporting back.

use super::link::{self, ToxicList};
use std::net::SocketAddr;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tokio::task::{JoinHandle, JoinSet};

/// A running listener; `stop` must be awaited to be sure its sockets are closed.
pub struct Listening {
    pub addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl Listening {
    /// Binds `addr` (port 0 picks a free port) and starts accepting.
    pub async fn start(
        addr: SocketAddr,
        upstream: String,
        toxics: watch::Receiver<ToxicList>,
    ) -> std::io::Result<Listening> {
        let listener = crate::processes::ports::bind_listener_tokio(addr)?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(accept_loop(listener, upstream, toxics, stopped));
        Ok(Listening { addr, stop, task })
    }

    /// Closes the listener and all connections; returns once they are closed.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
    }
}

async fn accept_loop(
    listener: TcpListener,
    upstream: String,
    toxics: watch::Receiver<ToxicList>,
    mut stopped: oneshot::Receiver<()>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            accepted = listener.accept() => match accepted {
                Ok((client, _)) => {
                    connections.spawn(link::run(client, upstream.clone(), toxics.clone()));
                }
                // Out of descriptors or a client gone before accept: back off briefly.
                Err(_) => tokio::time::sleep(std::time::Duration::from_millis(10)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    connections.shutdown().await;
}
