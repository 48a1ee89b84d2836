//! The embedded Toxiproxy-compatible server: its lifecycle, and the standalone mode behind
//! `lockpick toxiproxy --listen ADDR`.

use super::api;
use super::error::ProxyError;
use super::registry::Registry;
use hyper::service::{make_service_fn, service_fn};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The embedded Toxiproxy-compatible server. Dropping it without [`shutdown`] also stops
/// the API and the proxies, but in the background: call `shutdown` to know they are closed.
///
/// [`shutdown`]: EmbeddedToxiproxy::shutdown
pub struct EmbeddedToxiproxy {
    api_addr: SocketAddr,
    registry: Arc<Registry>,
    stop: oneshot::Sender<()>,
    server: JoinHandle<()>,
}

impl EmbeddedToxiproxy {
    /// Starts serving the API on `listen` (port 0 = any free port). Must be called inside a
    /// tokio runtime; `listen` must be a loopback address.
    pub async fn start(listen: SocketAddr) -> Result<EmbeddedToxiproxy, ProxyError> {
        if !listen.ip().is_loopback() {
            return Err(ProxyError::NotLoopback { addr: listen });
        }
        let registry = Arc::new(Registry::default());
        let for_service = Arc::clone(&registry);
        let make_service = make_service_fn(move |_| {
            let registry = Arc::clone(&for_service);
            async move {
                Ok::<_, Infallible>(service_fn(move |req| {
                    api::handle(Arc::clone(&registry), req)
                }))
            }
        });
        let bound =
            crate::processes::ports::bind_listener(listen).map_err(|source| ProxyError::Bind {
                addr: listen,
                source,
            })?;
        let builder = hyper::Server::from_tcp(bound).map_err(|e| ProxyError::Bind {
            addr: listen,
            source: std::io::Error::other(e),
        })?;
        let server = builder
            .http1_only(true)
            .tcp_nodelay(true)
            // Headers past 64 KiB are refused instead of buffered. No header read timeout:
            // hyper 0.14 runs it on idle keep-alive connections too, and closing those
            // races the pooled client's next fault call.
            .http1_max_buf_size(64 * 1024)
            .serve(make_service);
        let api_addr = server.local_addr();
        let (stop, stopped) = oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            let _ = server
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
        Ok(EmbeddedToxiproxy {
            api_addr,
            registry,
            stop,
            server,
        })
    }

    /// Where the HTTP API listens.
    pub fn api_addr(&self) -> SocketAddr {
        self.api_addr
    }

    /// Stops the API and every proxy, closing their connections.
    pub async fn shutdown(self) {
        let _ = self.stop.send(());
        let mut server = self.server;
        // Graceful shutdown waits for clients that keep idle connections open; give them
        // a moment, then cut.
        if tokio::time::timeout(Duration::from_secs(1), &mut server)
            .await
            .is_err()
        {
            server.abort();
            let _ = server.await;
        }
        self.registry.shutdown().await;
    }
}

/// For `lockpick toxiproxy --listen ADDR`: serves until Ctrl-C, then closes every proxy.
/// Must be called inside a tokio runtime.
pub async fn serve_standalone(listen: SocketAddr) -> Result<(), ProxyError> {
    let server = EmbeddedToxiproxy::start(listen).await?;
    let waited = tokio::signal::ctrl_c().await;
    server.shutdown().await;
    waited.map_err(ProxyError::Signal)
}
