//! Redis as a node kind: its options, config file, command line and readiness probe.

use crate::processes::kind::{BoxFuture, NodeRecipe, PROBE_TIMEOUT};
use std::fmt::Write as _;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::processes::folder::NodeFolder;

/// Debian package that provides `redis-server`.
pub(crate) const PACKAGE: &str = "redis-server";
pub(crate) const CONFIG_FILE: &str = "redis.conf";

/// How to run one `redis-server`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisOptions {
    /// The server binary: a bare name is looked up in `PATH`.
    pub binary: PathBuf,
    /// Turn on the append-only file with `appendfsync always`, so that every acknowledged
    /// write survives a SIGKILL and a restart. Off: no persistence at all (`save ""`).
    pub aof: bool,
    /// Extra `key value` config lines, written verbatim after the supervisor's own lines, so
    /// they override them (Redis keeps the last value of a directive). Neither part may
    /// contain a newline, and the key no whitespace.
    pub extra_config: Vec<(String, String)>,
    /// How long to wait for the first PONG after spawning.
    pub ready_timeout: Duration,
    /// Run under libfaketime with the control file `faketime.rc` in the node folder, so the
    /// nemesis can move the node's wall clock (see [`crate::processes::faketime`]).
    pub faketime: bool,
}

impl Default for RedisOptions {
    fn default() -> RedisOptions {
        RedisOptions {
            binary: PathBuf::from("redis-server"),
            aof: false,
            extra_config: Vec::new(),
            ready_timeout: Duration::from_secs(5),
            faketime: false,
        }
    }
}

impl RedisOptions {
    /// Checks what the config file cannot express safely: lines that would split or merge.
    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.faketime {
            crate::processes::faketime::check_installed()?;
        }
        for (key, value) in &self.extra_config {
            if key.is_empty() || key.contains(char::is_whitespace) || value.contains(['\n', '\r']) {
                return Err(format!("invalid extra redis config line {key:?} {value:?}"));
            }
        }
        Ok(())
    }

    /// Writes `redis.conf` into the node folder for `port`.
    pub(crate) fn write_config(&self, folder: &NodeFolder, port: u16) -> io::Result<()> {
        std::fs::write(&folder.config, self.config_text(folder, port)?)?;
        if self.faketime {
            let control = crate::processes::faketime::control_file(&folder.root);
            if !control.exists() {
                crate::processes::faketime::set_clock(
                    &control,
                    crate::processes::faketime::ClockSetting::REAL,
                )?;
            }
        }
        Ok(())
    }

    fn config_text(&self, folder: &NodeFolder, port: u16) -> io::Result<String> {
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = writeln!(text, "port {port}");
        let _ = writeln!(text, "bind 127.0.0.1");
        let _ = writeln!(text, "daemonize no");
        let _ = writeln!(text, "dir {}", quote(&folder.data)?);
        let _ = writeln!(text, "logfile {}", quote(&folder.log)?);
        let _ = writeln!(text, "save \"\"");
        if self.aof {
            let _ = writeln!(text, "appendonly yes");
            let _ = writeln!(text, "appendfsync always");
        } else {
            let _ = writeln!(text, "appendonly no");
        }
        for (key, value) in &self.extra_config {
            let _ = writeln!(text, "{key} {value}");
        }
        Ok(text)
    }

    pub(crate) fn command(&self, folder: &NodeFolder) -> Command {
        let mut command = Command::new(&self.binary);
        command.arg(&folder.config).current_dir(&folder.root);
        if self.faketime {
            crate::processes::faketime::prepare(
                &mut command,
                &crate::processes::faketime::control_file(&folder.root),
            );
        }
        command
    }
}

/// Quotes a path for redis.conf, which splits arguments like a shell with C-style escapes.
pub(crate) fn quote(path: &Path) -> io::Result<String> {
    let Some(text) = path.to_str() else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("path {} is not UTF-8", path.display()),
        ));
    };
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            _ => out.push(c),
        }
    }
    out.push('"');
    Ok(out)
}

/// Whether freshly written server output says the port was taken, so that a start on
/// another port may succeed.
pub(crate) fn address_in_use(output: &str) -> bool {
    output.contains("Address already in use")
}

/// Sends `PING` to the Redis server at `addr` and reports whether it answered `+PONG` within
/// `timeout` (connect included). A server still loading its AOF answers `-LOADING`: false.
pub async fn redis_ping(addr: SocketAddr, timeout: Duration) -> bool {
    let answer = exchange(addr, b"*1\r\n$4\r\nPING\r\n", 1);
    tokio::time::timeout(timeout, answer)
        .await
        .is_ok_and(|reply| reply.is_ok_and(|r| r.starts_with(b"+PONG")))
}

/// Whether the Redis server at `addr` answers `ROLE` as a master within `timeout`.
pub async fn redis_is_master(addr: SocketAddr, timeout: Duration) -> bool {
    // `*3\r\n$6\r\nmaster\r\n…`: the role is the third line.
    let answer = exchange(addr, b"*1\r\n$4\r\nROLE\r\n", 3);
    tokio::time::timeout(timeout, answer)
        .await
        .is_ok_and(|reply| {
            reply.is_ok_and(|r| {
                r.starts_with(b"*") && r.split(|b| *b == b'\n').nth(2) == Some(b"master\r")
            })
        })
}

/// Sends one command as raw RESP and reads the reply until it holds `lines` CRLF-ended lines
/// (less if the server closes first).
async fn exchange(addr: SocketAddr, request: &[u8], lines: usize) -> io::Result<Vec<u8>> {
    let mut stream = TcpStream::connect(addr).await?;
    stream.write_all(request).await?;
    let mut reply = Vec::with_capacity(64);
    let mut buf = [0u8; 256];
    while reply.windows(2).filter(|w| w == b"\r\n").count() < lines {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        reply.extend_from_slice(&buf[..n]);
    }
    Ok(reply)
}

impl NodeRecipe for RedisOptions {
    fn binary(&self) -> &Path {
        &self.binary
    }

    fn package(&self) -> &'static str {
        PACKAGE
    }

    fn validate(&self) -> Result<(), String> {
        RedisOptions::validate(self)
    }

    fn config_file(&self) -> &'static str {
        CONFIG_FILE
    }

    fn ready_timeout(&self) -> Duration {
        self.ready_timeout
    }

    fn write_config(&self, folder: &NodeFolder, port: u16) -> io::Result<()> {
        RedisOptions::write_config(self, folder, port)
    }

    fn command(&self, folder: &NodeFolder) -> Command {
        RedisOptions::command(self, folder)
    }

    fn probe(&self, addr: SocketAddr) -> BoxFuture<'static, bool> {
        Box::pin(redis_ping(addr, PROBE_TIMEOUT))
    }

    fn address_in_use(&self, output: &str) -> bool {
        address_in_use(output)
    }

    /// Among a master and its replicas, the master leads (an old master cut off from the
    /// sentinels still says it is one).
    fn is_leader(&self, addr: SocketAddr, _: &NodeFolder) -> BoxFuture<'static, bool> {
        Box::pin(redis_is_master(addr, PROBE_TIMEOUT))
    }
}

// In the Redis backend, beside the recipe, though the supervisor is the db layer's: the
// protected resource and most tests start a plain redis-server this way.
impl crate::processes::Supervisor {
    /// Starts a `redis-server` named `name` on a free loopback port and waits until it
    /// answers PING. `name` must be new to this supervisor and its folder must not exist.
    pub async fn start_redis(
        &mut self,
        name: &str,
        opts: RedisOptions,
    ) -> Result<crate::processes::NodeInfo, crate::processes::ProcessError> {
        self.start(name, crate::processes::NodeKind::new(opts))
            .await
    }
}
