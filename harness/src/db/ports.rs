//! Choice of free loopback ports, and leases that keep a node's port from being handed to
//! another node of this process while the first one is down (killed, crashed, restarting).

use std::collections::BTreeSet;
use std::io;
use std::net::{Ipv4Addr, TcpListener};
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
    for _ in 0..TRIES {
        let port = {
            let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
            listener.local_addr()?.port()
        };
        let mut leased = LEASED.lock().unwrap_or_else(|p| p.into_inner());
        if leased.insert(port) {
            return Ok(PortLease(port));
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AddrInUse,
        "every port the kernel offered is leased to another node",
    ))
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
