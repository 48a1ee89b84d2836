//! Choice of free loopback ports, and leases that keep a node's port from being handed to
//! another node of this process while the first one is down (killed, crashed, restarting).

use std::collections::BTreeSet;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::Mutex;

/// How many kernel-chosen ports to try before giving up on finding an unleased one.
const TRIES: usize = 64;

static LEASED: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());

/// A loopback port reserved for one node of this process until the lease is dropped. The
/// kernel knows nothing of it: another process may still take the port, so starts retry on
/// "address in use".
#[derive(Debug)]
pub(crate) struct PortLease(u16);

impl PortLease {
    pub(crate) fn port(&self) -> u16 {
        self.0
    }
}

impl Drop for PortLease {
    fn drop(&mut self) {
        LEASED
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.0);
    }
}

/// Leases a loopback port that was free a moment ago and is not leased to another node.
pub(crate) fn lease_free_port() -> io::Result<PortLease> {
    // Ports offered but already leased stay bound until the end, so the kernel moves on.
    let mut rejected = Vec::new();
    for _ in 0..TRIES {
        let probe = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let port = probe.local_addr()?.port();
        // The lease is taken while the probe still holds the port, so that a listener of this
        // process binding `:0` (see `bind_unleased`) either cannot get the port or sees it
        // leased.
        let mut leased = LEASED.lock().unwrap_or_else(|p| p.into_inner());
        if leased.insert(port) {
            return Ok(PortLease(port));
        }
        rejected.push(probe);
    }
    Err(io::Error::new(
        io::ErrorKind::AddrInUse,
        "every port the kernel offered is leased to another node",
    ))
}

/// Binds a listener of this process (a relay, a router) on a free loopback port that is not
/// leased to a node: a node's ports are chosen before it starts, and a listener binding `:0`
/// in between would make the node fail with "address in use".
pub(crate) fn bind_unleased() -> io::Result<TcpListener> {
    let mut rejected = Vec::new();
    for _ in 0..TRIES {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let port = listener.local_addr()?.port();
        if !LEASED
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(&port)
        {
            return Ok(listener);
        }
        rejected.push(listener);
    }
    Err(io::Error::new(
        io::ErrorKind::AddrInUse,
        "every port the kernel offered is leased to a node",
    ))
}

/// Binds a listener of this process on `addr`. "Any free loopback port" (`127.0.0.1:0`) goes
/// through [`bind_unleased`], so no listener of ours ever takes a port leased to a node.
pub(crate) fn bind_listener(addr: SocketAddr) -> io::Result<TcpListener> {
    if addr == SocketAddr::from((Ipv4Addr::LOCALHOST, 0)) {
        bind_unleased()
    } else {
        TcpListener::bind(addr)
    }
}

/// [`bind_listener`] for tokio.
pub(crate) fn bind_listener_tokio(addr: SocketAddr) -> io::Result<tokio::net::TcpListener> {
    let listener = bind_listener(addr)?;
    listener.set_nonblocking(true)?;
    tokio::net::TcpListener::from_std(listener)
}

/// A loopback port reserved for this process's nodes, for kinds that listen on more than
/// their client port (cluster peer ports): reserve them before writing member configs that
/// name them, and hand them to the supervisor with the member.
#[derive(Debug)]
pub struct ReservedPort(pub(crate) PortLease);

impl ReservedPort {
    pub fn port(&self) -> u16 {
        self.0.port()
    }
}

/// Reserves a loopback port that was free a moment ago and is held by no other node here.
pub fn reserve_port() -> io::Result<ReservedPort> {
    lease_free_port().map(ReservedPort)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listeners_of_this_process_never_get_a_leased_port() {
        let leases: Vec<_> = (0..50).map(|_| lease_free_port().unwrap()).collect();
        let listeners: Vec<_> = (0..50).map(|_| bind_unleased().unwrap()).collect();
        for l in &listeners {
            let port = l.local_addr().unwrap().port();
            assert!(leases.iter().all(|lease| lease.port() != port), "{port}");
        }
    }

    #[test]
    fn a_lease_is_given_once_until_dropped() {
        let a = lease_free_port().unwrap();
        let port = a.port();
        assert!(LEASED.lock().unwrap().contains(&port));
        drop(a);
        assert!(!LEASED.lock().unwrap().contains(&port));
    }
}
