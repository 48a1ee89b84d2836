//! Servers lockpick did not start (`--external`) must answer before the run starts: an address
//! nobody listens on would otherwise give a run whose clients never connect, 0 events and an
//! "unknown" verdict with no error.

use super::error::RunError;
use std::net::SocketAddr;
use std::time::Duration;

/// How long one connection attempt to an external node may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Opens (and closes) a TCP connection to each node's address, in node order; the first that
/// cannot be reached is the error, with its node name and address.
pub(super) async fn check_reachable(
    nodes: &[String],
    addrs: &[SocketAddr],
) -> Result<(), RunError> {
    for (node, addr) in nodes.iter().zip(addrs) {
        let reason =
            match tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(addr)).await
            {
                Ok(Ok(_)) => continue,
                Ok(Err(e)) => e.to_string(),
                Err(_) => format!("no answer within {CONNECT_TIMEOUT:?}"),
            };
        return Err(RunError::Unreachable {
            node: node.clone(),
            addr: *addr,
            reason,
        });
    }
    Ok(())
}
