//! Errors of the fault proxy: the embedded server and the facade that drives any Toxiproxy.

use std::net::SocketAddr;

/// Failure of the embedded Toxiproxy server or of a request through the facade.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    /// The embedded API server could not bind its listen address.
    #[error("start toxiproxy api on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// Listen addresses must stay on the loopback interface.
    #[error("listen on {addr}: only loopback addresses are allowed")]
    NotLoopback { addr: SocketAddr },
    /// The toxiproxy client reported an error (transport or a body it could not decode,
    /// which is how a Toxiproxy error answer such as 404 or 409 surfaces through it).
    #[error("{op} proxy {proxy:?} via toxiproxy at {api}: {message}")]
    Client {
        api: SocketAddr,
        proxy: String,
        op: &'static str,
        message: String,
    },
    /// The server accepted the request but its state afterwards is not what was asked for.
    #[error("{op} proxy {proxy:?} via toxiproxy at {api}: server answered {answer}")]
    Unexpected {
        api: SocketAddr,
        proxy: String,
        op: &'static str,
        answer: String,
    },
    /// No free loopback port could be found for a proxy's listener.
    #[error("choose a listen port for proxy {proxy:?}: {source}")]
    Port {
        proxy: String,
        #[source]
        source: std::io::Error,
    },
    /// The client panicked (toxiproxy_rust panics when a toxic cannot be sent) or its thread
    /// is gone.
    #[error("{op} proxy {proxy:?}: toxiproxy client task: {message}")]
    Worker {
        proxy: String,
        op: &'static str,
        message: String,
    },
    /// The thread that owns the Toxiproxy client could not be started.
    #[error("start the toxiproxy client thread: {0}")]
    ClientThread(#[source] std::io::Error),
    /// Waiting for Ctrl-C failed in the standalone server.
    #[error("wait for ctrl-c: {0}")]
    Signal(#[source] std::io::Error),
}
