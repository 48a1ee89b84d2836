//! The peer router in front of one member's peer port: members dial it (their configs name
//! it), it finds out which member dialed and passes the connection on through the proxy of
//! that directed link (`n1-to-n2`), which is where faults are injected.
//!
//! Needed because a member's peer address is one address for all its peers (etcd even derives
//! member ids from it), while a partition must cut n1–n2 without cutting n3–n2.
//!
//! A router may also have a fallback: where a dialer that is no member goes (lockpick's own
//! clients, a library adapter). Without one such connections are refused.

use super::owner::dialer_dir;
use crate::processes::live_children;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::task::{JoinHandle, JoinSet};

/// How often, and how far apart, the dialer of a fresh connection is looked up before the
/// connection is refused (the kernel table can lag the accept by a moment).
const LOOKUPS: usize = 20;
const LOOKUP_GAP: Duration = Duration::from_millis(5);

/// A running router; stops (with every connection through it) when dropped.
pub(crate) struct PeerRouter {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl PeerRouter {
    /// Listens on a free loopback port. `routes` maps the folder holding the working directory
    /// of each dialing member's process to the proxy of its link to this member; `fallback` is where any other
    /// dialer goes (refused if `None`).
    pub(crate) async fn start(
        routes: BTreeMap<PathBuf, SocketAddr>,
        fallback: Option<SocketAddr>,
    ) -> std::io::Result<PeerRouter> {
        let listener = crate::processes::ports::bind_listener_tokio(
            (std::net::Ipv4Addr::LOCALHOST, 0).into(),
        )?;
        let addr = listener.local_addr()?;
        let routes = Arc::new(routes);
        let task = tokio::spawn(async move {
            let mut links = JoinSet::new();
            loop {
                tokio::select! {
                    accepted = listener.accept() => {
                        let Ok((stream, from)) = accepted else { continue };
                        links.spawn(pass_on(stream, from, addr, routes.clone(), fallback));
                    }
                    Some(_) = links.join_next(), if !links.is_empty() => {}
                }
            }
        });
        Ok(PeerRouter { addr, task })
    }

    /// Where members dial this member.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for PeerRouter {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn pass_on(
    mut stream: TcpStream,
    from: SocketAddr,
    me: SocketAddr,
    routes: Arc<BTreeMap<PathBuf, SocketAddr>>,
    fallback: Option<SocketAddr>,
) {
    let mut upstream = fallback;
    for _ in 0..LOOKUPS {
        let mut pids = live_children();
        if fallback.is_some() {
            // This process's own clients are told apart at the first look, not after every
            // lookup failed.
            pids.push(std::process::id());
        }
        let dir = tokio::task::spawn_blocking(move || dialer_dir(from.port(), me.port(), &pids))
            .await
            .ok()
            .flatten();
        if let Some(dir) = dir {
            upstream = routes
                .iter()
                // Inside, not equal: Redis moves into its data folder (`dir`) under its own.
                .find(|(known, _)| known.canonicalize().is_ok_and(|k| dir.starts_with(k)))
                .map(|(_, proxy)| *proxy)
                .or(fallback);
            break;
        }
        tokio::time::sleep(LOOKUP_GAP).await;
    }
    // Dialers that are no member of this cluster go to the fallback, or are refused by closing.
    let Some(upstream) = upstream else { return };
    let Ok(mut proxied) = TcpStream::connect(upstream).await else {
        return;
    };
    let _ = stream.set_nodelay(true);
    let _ = proxied.set_nodelay(true);
    let _ = tokio::io::copy_bidirectional(&mut stream, &mut proxied).await;
}
