//! Choice of free loopback ports.

use std::io;
use std::net::{Ipv4Addr, TcpListener};

/// A loopback port that was free a moment ago. Another process may take it before the server
/// binds it; callers retry the start on "address in use".
pub(crate) fn free_port() -> io::Result<u16> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    Ok(listener.local_addr()?.port())
}
