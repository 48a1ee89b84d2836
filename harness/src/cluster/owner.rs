//! Which local process dialed a loopback TCP connection: read from /proc (the socket's inode
//! in the kernel's TCP tables, then the process holding that inode among its descriptors).

use std::fs;
use std::path::PathBuf;

/// The working directory of the process among `pids` that owns the client end of the
/// loopback connection from port `from` to port `to`. `None` if no such process (yet).
pub(crate) fn dialer_dir(from: u16, to: u16, pids: &[u32]) -> Option<PathBuf> {
    let inode = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .find_map(|table| socket_inode(&fs::read_to_string(table).ok()?, from, to))?;
    let link = format!("socket:[{inode}]");
    pids.iter().find_map(|pid| {
        let fds = fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
        let owns = fds.flatten().any(|fd| {
            fs::read_link(fd.path()).is_ok_and(|target| target.as_os_str() == link.as_str())
        });
        if owns {
            fs::read_link(format!("/proc/{pid}/cwd")).ok()
        } else {
            None
        }
    })
}

/// The inode of the socket whose local port is `from` and remote port `to`, in one of the
/// kernel's `/proc/net/tcp*` tables (`sl local rem st … uid timeout inode`, ports in hex).
fn socket_inode(table: &str, from: u16, to: u16) -> Option<u64> {
    let port = |field: &str| {
        field
            .rsplit_once(':')
            .and_then(|(_, hex)| u16::from_str_radix(hex, 16).ok())
    };
    // The table can hold thousands of lines (TIME_WAIT sockets of every run on the machine)
    // and is read for every routed connection: lines without the remote port are skipped
    // before they are split.
    let remote = format!(":{to:04X} ");
    table.lines().skip(1).find_map(|line| {
        if !line.contains(&remote) {
            return None;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 10 {
            return None;
        }
        let matches = port(fields[1]) == Some(from) && port(fields[2]) == Some(to);
        matches.then(|| fields[9].parse().ok()).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_inode_of_the_connection_by_its_ports() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0000000000000000 100 0 0 10 0\n\
   1: 0100007F:C350 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 222 1 0000000000000000 20 4 30 10 -1\n";
        assert_eq!(socket_inode(table, 0xC350, 0x1F90), Some(222));
        assert_eq!(socket_inode(table, 0x1F90, 0xC350), None);
    }

    #[test]
    fn finds_this_process_as_the_dialer_of_its_own_connection() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let to = listener.local_addr().unwrap().port();
        let stream = std::net::TcpStream::connect(("127.0.0.1", to)).unwrap();
        let from = stream.local_addr().unwrap().port();
        let dir = dialer_dir(from, to, &[std::process::id()]);
        assert_eq!(
            dir,
            Some(std::env::current_dir().unwrap().canonicalize().unwrap())
        );
        assert_eq!(dialer_dir(from, to, &[]), None);
    }
}
