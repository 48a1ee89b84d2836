//! MariaDB (Debian's MySQL) as a node kind: `mariadbd` on a loopback port with an empty data
//! folder (InnoDB makes its files on first start), a unix socket given relative to the node
//! folder (so a deep store cannot exceed the 107-byte socket path limit), and a readiness
//! probe that reads the server's protocol-10 greeting.
//!
//! Facts measured with Debian's MariaDB 10.11 here: `mariadb-install-db` takes 2–7 s, and is
//! not needed: with `--skip-grant-tables` the server starts on an empty folder in ~1–1.5 s
//! and lets any user in without a password (only loopback reaches it). Warnings about the
//! missing `mysql.*` tables are expected in its log. It runs as root with `--user=root`.

use std::fmt::Write as _;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

use crate::processes::folder::NodeFolder;
use crate::processes::kind::{BoxFuture, NodeKind, NodeRecipe, PROBE_TIMEOUT};

/// Debian package that provides `mariadbd`.
pub(crate) const PACKAGE: &str = "mariadb-server";
pub(crate) const CONFIG_FILE: &str = "my.cnf";
/// Where Debian installs the server; `/usr/sbin` is often not in a user's `PATH`.
const DEBIAN_BINARY: &str = "/usr/sbin/mariadbd";
/// The socket, relative to the node folder (the server's working directory).
const SOCKET: &str = "mariadbd.sock";

/// How to run one MariaDB server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MariaDbOptions {
    /// The server binary: by default `/usr/sbin/mariadbd`, else a bare name for `PATH`.
    pub binary: PathBuf,
    /// `innodb_flush_log_at_trx_commit = 1` (every commit's log flushed to disk before it is
    /// acknowledged). Off it is 0: the log is written about once a second, so a SIGKILL of
    /// the server loses up to a second of acknowledged commits.
    pub durable: bool,
    /// Extra `name = value` settings for the `[mariadbd]` section, written after lockpick's
    /// own lines so they win (e.g. `innodb_lock_wait_timeout 1`, `wait_timeout 5`).
    pub extra_config: Vec<(String, String)>,
    /// How long to wait for the greeting after spawning.
    pub ready_timeout: Duration,
    /// Run under libfaketime like Redis, so the nemesis can move `NOW()`.
    pub faketime: bool,
}

impl Default for MariaDbOptions {
    fn default() -> MariaDbOptions {
        let binary = if Path::new(DEBIAN_BINARY).is_file() {
            PathBuf::from(DEBIAN_BINARY)
        } else {
            PathBuf::from("mariadbd")
        };
        MariaDbOptions {
            binary,
            durable: false,
            extra_config: Vec::new(),
            ready_timeout: Duration::from_secs(20),
            faketime: false,
        }
    }
}

impl MariaDbOptions {
    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.faketime {
            crate::processes::faketime::check_installed()?;
        }
        for (name, value) in &self.extra_config {
            let name_ok = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !name_ok || value.contains(['\n', '\r', '\0']) {
                return Err(format!(
                    "invalid extra mariadb setting {name:?} = {value:?}: names are letters, \
                     digits, '_' and '-', values one line"
                ));
            }
        }
        Ok(())
    }

    /// Writes `my.cnf` into the node folder for `port`.
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
        let path = |p: &Path| {
            p.to_str().map(str::to_owned).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("path {} is not UTF-8", p.display()),
                )
            })
        };
        let mut lines: Vec<(&str, String)> = vec![
            ("datadir", path(&folder.data)?),
            ("port", port.to_string()),
            ("bind-address", "127.0.0.1".into()),
            ("socket", SOCKET.into()),
            ("pid-file", path(&folder.root.join("mariadbd.pid"))?),
            ("log-error", path(&folder.log)?),
            ("user", "root".into()),
            ("skip-grant-tables", "1".into()),
            ("skip-name-resolve", "1".into()),
            ("skip-log-bin", "1".into()),
            ("innodb_buffer_pool_size", "16M".into()),
            ("innodb_log_file_size", "8M".into()),
            (
                "innodb_flush_log_at_trx_commit",
                if self.durable { "1" } else { "0" }.into(),
            ),
            ("default-time-zone", "+00:00".into()),
        ];
        for (name, value) in &self.extra_config {
            lines.push((name, value.clone()));
        }
        let mut text = String::from("[mariadbd]\n");
        for (name, value) in lines {
            // Writing to a String cannot fail.
            let _ = writeln!(text, "{name} = {value}");
        }
        Ok(text)
    }

    pub(crate) fn command(&self, folder: &NodeFolder) -> Command {
        let mut command = Command::new(&self.binary);
        // --defaults-file must come first; it keeps /etc/mysql out.
        command
            .arg(format!("--defaults-file={}", folder.config.display()))
            .current_dir(&folder.root);
        if self.faketime {
            crate::processes::faketime::prepare(
                &mut command,
                &crate::processes::faketime::control_file(&folder.root),
            );
        }
        command
    }
}

/// Whether freshly written server output says the port was taken.
pub(crate) fn address_in_use(output: &str) -> bool {
    output.contains("Address already in use") || output.contains("Do you already have another")
}

/// Whether the server at `addr` greets a new connection with protocol 10 within `timeout`
/// (an error packet, e.g. "too many connections", is not ready).
pub async fn mariadb_ready(addr: SocketAddr, timeout: Duration) -> bool {
    tokio::time::timeout(timeout, greeting(addr))
        .await
        .is_ok_and(|ok| ok.unwrap_or(false))
}

async fn greeting(addr: SocketAddr) -> io::Result<bool> {
    let mut stream = TcpStream::connect(addr).await?;
    // 3-byte length, 1-byte sequence number, then the payload's first byte.
    let mut head = [0u8; 5];
    stream.read_exact(&mut head).await?;
    Ok(head[4] == 10)
}

impl NodeRecipe for MariaDbOptions {
    fn binary(&self) -> &Path {
        &self.binary
    }

    fn package(&self) -> &'static str {
        PACKAGE
    }

    fn validate(&self) -> Result<(), String> {
        MariaDbOptions::validate(self)
    }

    fn config_file(&self) -> &'static str {
        CONFIG_FILE
    }

    fn ready_timeout(&self) -> Duration {
        self.ready_timeout
    }

    fn write_config(&self, folder: &NodeFolder, port: u16) -> io::Result<()> {
        MariaDbOptions::write_config(self, folder, port)
    }

    fn command(&self, folder: &NodeFolder) -> Command {
        MariaDbOptions::command(self, folder)
    }

    fn probe(&self, addr: SocketAddr) -> BoxFuture<'static, bool> {
        Box::pin(mariadb_ready(addr, PROBE_TIMEOUT))
    }

    fn address_in_use(&self, output: &str) -> bool {
        address_in_use(output)
    }
}

impl From<MariaDbOptions> for NodeKind {
    fn from(options: MariaDbOptions) -> NodeKind {
        NodeKind::new(options)
    }
}
