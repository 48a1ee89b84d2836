//! Helpers shared by the `db_*` tests: raw RESP over a plain TCP socket and /proc checks.
#![allow(dead_code)] // each test file uses a different subset

use std::ffi::OsStr;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Sends one command as a RESP array of bulk strings and returns the first reply line(s)
/// read until `\r\n`-terminated data arrives, or an error on timeout.
pub fn command(addr: SocketAddr, args: &[&str], timeout: Duration) -> io::Result<String> {
    let mut stream = TcpStream::connect_timeout(&addr, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    stream.set_write_timeout(Some(timeout))?;
    let mut request = format!("*{}\r\n", args.len());
    for arg in args {
        request.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
    }
    stream.write_all(request.as_bytes())?;
    let mut reply = Vec::new();
    let mut buf = [0u8; 512];
    loop {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        reply.extend_from_slice(&buf[..n]);
        if complete(&reply) {
            break;
        }
    }
    Ok(String::from_utf8_lossy(&reply).into_owned())
}

/// Whether `reply` holds one full simple reply or bulk string.
fn complete(reply: &[u8]) -> bool {
    let Some(end) = reply.windows(2).position(|w| w == b"\r\n") else {
        return false;
    };
    if reply[0] != b'$' {
        return true;
    }
    let len: i64 = String::from_utf8_lossy(&reply[1..end])
        .parse()
        .unwrap_or(-1);
    len < 0 || reply.len() >= end + 2 + len as usize + 2
}

/// Whether the server answers `+PONG` to a raw PING within `timeout`.
pub fn pings(addr: SocketAddr, timeout: Duration) -> bool {
    command(addr, &["PING"], timeout).is_ok_and(|reply| reply.starts_with("+PONG"))
}

/// The one-letter state of `pid` from /proc (`R`, `S`, `T`, `Z`…), or `None` if no such
/// process exists.
pub fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The state follows the parenthesised command name, which may contain spaces.
    let after = &stat[stat.rfind(')')? + 1..];
    after.trim_start().chars().next()
}

/// Whether `pid` is still a process that runs or sleeps (not gone, not a zombie).
pub fn is_running(pid: u32) -> bool {
    proc_state(pid).is_some_and(|state| state != 'Z')
}

/// Waits up to `timeout` for `pid` to stop running (gone or a zombie).
pub fn wait_not_running(pid: u32, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if !is_running(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    !is_running(pid)
}

/// Runs `helper`, an ignored test of this same test binary, as a child process with `env`:
/// a stand-in for lockpick that starts servers and waits to be SIGKILLed. Returns it with the
/// pids it printed on a line `TAG pid,pid,…`.
pub fn spawn_helper(helper: &str, env: &[(&str, &OsStr)], tag: &str) -> (Child, Vec<u32>) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "--ignored",
            "--exact",
            helper,
            "--nocapture",
            "--test-threads=1",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let prefix = format!("{tag} ");
    let pids = stdout
        .lines()
        .map_while(Result::ok)
        // libtest prints the test name on the same line, before the helper's output.
        .find_map(|line| {
            let list = line.split(prefix.as_str()).nth(1)?;
            Some(list.trim().split(',').map(|p| p.parse().unwrap()).collect())
        })
        .unwrap_or_else(|| panic!("{helper} did not report its {tag}"));
    (child, pids)
}

/// SIGKILLs `helper` (no Drop, no clean-up code runs in it) and returns those of `pids` still
/// running `timeout` later, which it then kills so that a failing test leaves nothing behind.
pub fn kill_helper_and_list_survivors(
    mut helper: Child,
    pids: &[u32],
    timeout: Duration,
) -> Vec<u32> {
    helper.kill().unwrap();
    helper.wait().unwrap();
    let survivors: Vec<u32> = pids
        .iter()
        .copied()
        .filter(|pid| !wait_not_running(*pid, timeout))
        .collect();
    for pid in &survivors {
        // SAFETY: plain kill(2).
        unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
    }
    survivors
}

/// The live processes whose working folder is inside `dir` (a server chdirs into its node
/// folder, and postgres's backends into the data folder): what is left of a run's servers.
pub fn processes_in(dir: &std::path::Path) -> Vec<u32> {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let cwd = std::fs::read_link(entry.path().join("cwd")).ok()?;
            (cwd.starts_with(&dir) && is_running(pid)).then_some(pid)
        })
        .collect()
}
