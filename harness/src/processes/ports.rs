//! Choice of free loopback ports, and leases that keep a node's port from being handed to
//! another node of this process while the first one is down (killed, crashed, restarting).
//!
//! Another process can take a port between our choice and the server's bind (two lockpick
//! runs at once once made a ZooKeeper member fail with "address in use"). Two things keep
//! that rare, and the starts retry on a new port for the rest: node ports are drawn at random
//! below the kernel's ephemeral range, where no outgoing connection and no `bind(:0)` of any
//! process lands; and a lease keeps the port bound (a listener held by lockpick) until right
//! before the server that must bind it is spawned, and again while the node is down.

use std::collections::BTreeSet;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::{Mutex, OnceLock};

/// How many kernel-chosen ports to try before giving up on finding an unleased one.
const TRIES: usize = 64;

static LEASED: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());

/// A loopback port reserved for one node of this process until the lease is dropped. While
/// `held`, lockpick itself has it bound, so no other process can take it; the holder lets go
/// with [`PortLease::release`] right before the server that binds it starts. Another process
/// may still take it in between, so starts retry on "address in use".
#[derive(Debug)]
pub(crate) struct PortLease {
    port: u16,
    held: Option<HeldPort>,
}

impl PortLease {
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// Unbinds the port so that the server about to start can bind it.
    pub(crate) fn release(&mut self) {
        self.held = None;
    }

    /// Binds the port again while its node is down (best effort: if someone else has it, the
    /// restart will find out and retry).
    pub(crate) fn hold(&mut self) {
        if self.held.is_none() {
            self.held = HeldPort::bind(self.port).ok();
        }
    }
}

impl Drop for PortLease {
    fn drop(&mut self) {
        LEASED
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.port);
    }
}

/// Where node ports are drawn from: below the kernel's ephemeral range
/// (`/proc/sys/net/ipv4/ip_local_port_range`), from 10000 up; `None` when that range starts
/// too low to leave room, and ports are then the kernel's choice.
fn node_port_range() -> Option<(u16, u16)> {
    static RANGE: OnceLock<Option<(u16, u16)>> = OnceLock::new();
    *RANGE.get_or_init(|| {
        let text = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
        let low: u16 = text.split_whitespace().next()?.parse().ok()?;
        (low >= 12_000).then_some((10_000, low))
    })
}

/// A loopback TCP port bound by a socket that does not listen and does not allow address
/// reuse: nobody else can bind the port, and a client connecting to it is refused at once,
/// as by a node that is down (a listener would queue the connection instead).
#[derive(Debug)]
struct HeldPort {
    /// Closing it frees the port.
    _fd: std::os::fd::OwnedFd,
    port: u16,
}

impl HeldPort {
    /// Binds `127.0.0.1:port` (`0`: a port of the kernel's choice).
    fn bind(port: u16) -> io::Result<HeldPort> {
        use std::os::fd::FromRawFd;
        // SAFETY: plain system calls on a socket we own; `addr` and `len` are valid for them.
        unsafe {
            let raw = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            if raw == -1 {
                return Err(io::Error::last_os_error());
            }
            let fd = std::os::fd::OwnedFd::from_raw_fd(raw);
            let mut addr: libc::sockaddr_in = std::mem::zeroed();
            addr.sin_family = libc::AF_INET as libc::sa_family_t;
            addr.sin_port = port.to_be();
            addr.sin_addr.s_addr = u32::from(Ipv4Addr::LOCALHOST).to_be();
            let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            if libc::bind(raw, std::ptr::addr_of!(addr).cast(), len) == -1 {
                return Err(io::Error::last_os_error());
            }
            if libc::getsockname(raw, std::ptr::addr_of_mut!(addr).cast(), &mut len) == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(HeldPort {
                _fd: fd,
                port: u16::from_be(addr.sin_port),
            })
        }
    }
}

/// Binds a port for a new lease: a random one of [`node_port_range`], or the kernel's choice.
fn probe_port() -> io::Result<Option<HeldPort>> {
    match node_port_range() {
        Some((low, high)) => Ok(HeldPort::bind(rand::random_range(low..high)).ok()),
        None => HeldPort::bind(0).map(Some),
    }
}

/// Leases a loopback port that is free (it is bound by the lease until released) and is not
/// leased to another node.
pub(crate) fn lease_free_port() -> io::Result<PortLease> {
    // Ports offered but already leased stay bound until the end, so the kernel moves on.
    let mut rejected = Vec::new();
    for _ in 0..TRIES * 4 {
        let Some(probe) = probe_port()? else {
            continue;
        };
        let port = probe.port;
        // The lease is taken while the probe holds the port, so that a listener of this
        // process binding `:0` (see `bind_unleased`) either cannot get the port or sees it
        // leased.
        let mut leased = LEASED.lock().unwrap_or_else(|p| p.into_inner());
        if leased.insert(port) {
            return Ok(PortLease {
                port,
                held: Some(probe),
            });
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

    /// Unbinds the port for the server (or proxy) that is about to bind it.
    pub fn release(&mut self) {
        self.0.release();
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
    fn a_lease_holds_its_port_until_released() {
        let mut lease = lease_free_port().unwrap();
        let addr = (Ipv4Addr::LOCALHOST, lease.port());
        assert!(
            TcpListener::bind(addr).is_err(),
            "held ports cannot be taken"
        );
        if let Some((low, high)) = node_port_range() {
            assert!((low..high).contains(&lease.port()), "{}", lease.port());
        }
        lease.release();
        let server = TcpListener::bind(addr).expect("a released port is free for its server");
        drop(server);
        lease.hold();
        assert!(
            TcpListener::bind(addr).is_err(),
            "held again while the node is down"
        );
        // A held port refuses connections, as a node that is down does.
        let refused = std::net::TcpStream::connect(addr).unwrap_err();
        assert_eq!(refused.kind(), io::ErrorKind::ConnectionRefused);
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
