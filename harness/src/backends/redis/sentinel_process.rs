//! Redis Sentinel as a node kind: a `redis-sentinel` process watching one master, with the
//! failover timing the scenarios rely on (`down-after-milliseconds`).

use crate::processes::kind::{BoxFuture, NodeRecipe, PROBE_TIMEOUT};
use std::fmt::Write as _;
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::backends::redis::process::quote;
use crate::processes::folder::NodeFolder;

/// Debian package that provides `redis-sentinel`.
pub(crate) const PACKAGE: &str = "redis-sentinel";
pub(crate) const CONFIG_FILE: &str = "sentinel.conf";

/// How to run one `redis-sentinel`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentinelOptions {
    /// The sentinel binary: a bare name is looked up in `PATH`.
    pub binary: PathBuf,
    /// The name clients ask for (`SENTINEL get-master-addr-by-name <master_name>`).
    pub master_name: String,
    /// The master to watch, as the sentinels reach it.
    pub master: SocketAddr,
    /// How many sentinels must agree the master is down.
    pub quorum: u32,
    /// How long the master must be unreachable before it counts as down.
    pub down_after_ms: u64,
    pub failover_timeout_ms: u64,
    pub ready_timeout: Duration,
}

impl SentinelOptions {
    /// Options watching `master` as `lockpick`, quorum 2, down after 1 s.
    pub fn new(master: SocketAddr) -> SentinelOptions {
        SentinelOptions {
            binary: PathBuf::from("redis-sentinel"),
            master_name: "lockpick".to_owned(),
            master,
            quorum: 2,
            down_after_ms: 1000,
            failover_timeout_ms: 10_000,
            ready_timeout: Duration::from_secs(5),
        }
    }

    pub(crate) fn validate(&self) -> Result<(), String> {
        let ok = !self.master_name.is_empty()
            && self
                .master_name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'));
        if ok {
            Ok(())
        } else {
            Err(format!(
                "invalid sentinel master name {:?}",
                self.master_name
            ))
        }
    }

    /// Writes `sentinel.conf` for `port`. Sentinel rewrites this file itself while it runs.
    pub(crate) fn write_config(&self, folder: &NodeFolder, port: u16) -> io::Result<()> {
        let name = &self.master_name;
        let mut text = String::new();
        let _ = writeln!(text, "port {port}");
        let _ = writeln!(text, "bind 127.0.0.1");
        let _ = writeln!(text, "daemonize no");
        let _ = writeln!(text, "dir {}", quote(&folder.data)?);
        let _ = writeln!(text, "logfile {}", quote(&folder.log)?);
        let _ = writeln!(text, "sentinel resolve-hostnames no");
        let _ = writeln!(
            text,
            "sentinel monitor {name} {} {} {}",
            self.master.ip(),
            self.master.port(),
            self.quorum
        );
        let _ = writeln!(
            text,
            "sentinel down-after-milliseconds {name} {}",
            self.down_after_ms
        );
        let _ = writeln!(
            text,
            "sentinel failover-timeout {name} {}",
            self.failover_timeout_ms
        );
        let _ = writeln!(text, "sentinel parallel-syncs {name} 1");
        std::fs::write(&folder.config, text)
    }

    pub(crate) fn command(&self, folder: &NodeFolder) -> Command {
        let mut command = Command::new(&self.binary);
        command.arg(&folder.config).current_dir(&folder.root);
        command
    }
}

impl NodeRecipe for SentinelOptions {
    fn binary(&self) -> &Path {
        &self.binary
    }

    fn package(&self) -> &'static str {
        PACKAGE
    }

    fn validate(&self) -> Result<(), String> {
        SentinelOptions::validate(self)
    }

    fn config_file(&self) -> &'static str {
        CONFIG_FILE
    }

    fn ready_timeout(&self) -> Duration {
        self.ready_timeout
    }

    fn write_config(&self, folder: &NodeFolder, port: u16) -> io::Result<()> {
        SentinelOptions::write_config(self, folder, port)
    }

    fn command(&self, folder: &NodeFolder) -> Command {
        SentinelOptions::command(self, folder)
    }

    fn probe(&self, addr: SocketAddr) -> BoxFuture<'static, bool> {
        Box::pin(crate::backends::redis::process::redis_ping(
            addr,
            PROBE_TIMEOUT,
        ))
    }

    fn address_in_use(&self, output: &str) -> bool {
        crate::backends::redis::process::address_in_use(output)
    }
}
