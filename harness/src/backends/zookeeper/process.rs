//! ZooKeeper as a node kind: one server of an ensemble, its `zoo.cfg` and `myid`, command line
//! (the Debian jars under OpenJDK), readiness probe (the server has joined a quorum, as leader
//! or follower) and leader probe, both through the `srvr` four-letter word.

use crate::processes::kind::{BoxFuture, NodeRecipe, PROBE_TIMEOUT};
use std::fmt::Write as _;
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::processes::folder::NodeFolder;

/// The tick of the ZooKeeper servers lockpick runs: session timeouts (the lock's TTL) may be
/// 2 to 20 ticks.
pub const ZK_TICK_MS: u64 = 250;

/// Debian package that provides the ZooKeeper jars (Java itself is `default-jre-headless`).
pub(crate) const PACKAGE: &str = "zookeeper";
pub(crate) const CONFIG_FILE: &str = "zoo.cfg";
/// The Debian server's class path: its jar names the rest in its manifest; slf4j-simple logs.
pub(crate) const DEBIAN_CLASS_PATH: &str =
    "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar";

/// One server of the ensemble as another server, or this one, reaches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZkPeer {
    /// The server id (`myid`), from 1.
    pub id: u32,
    /// Quorum (follower ↔ leader) address.
    pub quorum: SocketAddr,
    /// Leader election address.
    pub election: SocketAddr,
}

/// How to run one ZooKeeper server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZkOptions {
    /// The Java launcher: a bare name is looked up in `PATH`.
    pub java: PathBuf,
    /// The server's jars (Debian's by default; another release's, fetched by setup).
    pub class_path: String,
    /// This server: its id and the ports it listens on (reserved by the caller).
    pub me: ZkPeer,
    /// The other servers, at the addresses *this* server dials (proxies or routers).
    pub peers: Vec<ZkPeer>,
    /// ZooKeeper's time unit; session timeouts are allowed from 2 to 20 ticks.
    pub tick_ms: u64,
    /// How long to wait, after spawning, until the server has joined a quorum.
    pub ready_timeout: Duration,
}

impl ZkOptions {
    /// Server `me` of an ensemble with `peers`, with a 250 ms tick (sessions of 0.5–5 s).
    pub fn server(me: ZkPeer, peers: Vec<ZkPeer>) -> ZkOptions {
        ZkOptions {
            java: PathBuf::from("java"),
            class_path: DEBIAN_CLASS_PATH.to_owned(),
            me,
            peers,
            tick_ms: 250,
            ready_timeout: Duration::from_secs(30),
        }
    }

    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.me.id == 0 || self.peers.iter().any(|p| p.id == 0 || p.id == self.me.id) {
            return Err("server ids must be distinct and at least 1".to_string());
        }
        if self.tick_ms == 0 {
            return Err("tick must be at least 1 ms".to_string());
        }
        Ok(())
    }

    /// Writes `zoo.cfg` for a server whose clients connect on `client_port`, and `myid`.
    pub(crate) fn write_config(&self, folder: &NodeFolder, client_port: u16) -> io::Result<()> {
        let data = folder
            .data
            .to_str()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "data path is not UTF-8"))?;
        let mut text = String::new();
        let _ = writeln!(text, "tickTime={}", self.tick_ms);
        let _ = writeln!(text, "initLimit=20");
        let _ = writeln!(text, "syncLimit=8");
        let _ = writeln!(text, "dataDir={data}");
        let _ = writeln!(text, "clientPort={client_port}");
        let _ = writeln!(text, "clientPortAddress=127.0.0.1");
        // Else every server wants port 8080 for its admin console.
        let _ = writeln!(text, "admin.enableServer=false");
        // `dump`: the leader's sessions, for the server record to tell an expiry (watch.rs).
        let _ = writeln!(
            text,
            "4lw.commands.whitelist=ruok,srvr,stat,mntr,conf,wchs,wchc,dump"
        );
        let _ = writeln!(text, "maxSessionTimeout={}", 20 * self.tick_ms);
        let _ = writeln!(text, "standaloneEnabled={}", self.peers.is_empty());
        let mut all: Vec<&ZkPeer> = self.peers.iter().chain([&self.me]).collect();
        all.sort_by_key(|p| p.id);
        for p in all {
            let _ = writeln!(
                text,
                "server.{}={}:{}:{}:participant",
                p.id,
                p.quorum.ip(),
                p.quorum.port(),
                p.election.port()
            );
        }
        std::fs::write(&folder.config, text)?;
        std::fs::write(folder.data.join("myid"), format!("{}\n", self.me.id))
    }

    pub(crate) fn command(&self, folder: &NodeFolder) -> Command {
        let mut command = Command::new(&self.java);
        command
            // Small and quick to start: the servers hold a few hundred nodes.
            .args([
                "-Xms32m",
                "-Xmx256m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                // No /tmp/hsperfdata_<user>/<pid>: the JVM removes it only on a clean exit,
                // and we kill members, so every run would leave one behind.
                "-XX:-UsePerfData",
            ])
            .arg(format!(
                "-Dorg.slf4j.simpleLogger.logFile={}",
                folder.log.display()
            ))
            .arg("-Dorg.slf4j.simpleLogger.showDateTime=true")
            .arg("-Dzookeeper.jmx.log4j.disable=true")
            // A server that lost its quorum backs off its election messages up to 60 s by
            // default, so after a healed partition it rejoins a minute later: cap it at 1 s.
            .arg("-Dzookeeper.fastleader.maxNotificationInterval=1000")
            .args(["-cp", &self.class_path])
            .arg("org.apache.zookeeper.server.quorum.QuorumPeerMain")
            .arg(&folder.config)
            .current_dir(&folder.root);
        command
    }
}

/// Whether freshly written server output says a port was taken.
pub(crate) fn address_in_use(output: &str) -> bool {
    output.contains("Address already in use")
}

/// The server's `Mode:` from `srvr` (`leader`, `follower`, `standalone`), `None` while it is
/// not serving (no quorum yet: it answers "not currently serving requests") or on timeout.
pub async fn zk_mode(addr: SocketAddr, timeout: Duration) -> Option<String> {
    let answer = tokio::time::timeout(timeout, four_letter_word(addr, b"srvr"))
        .await
        .ok()?
        .ok()?;
    parse_srvr(&answer).mode
}

/// What one member's `srvr` says: its mode and its last zxid, each `None` when the answer
/// has no such line (a member without a quorum answers "not currently serving requests").
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct MemberState {
    pub mode: Option<String>,
    pub zxid: Option<u64>,
}

pub(super) fn parse_srvr(text: &str) -> MemberState {
    let line = |prefix: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(prefix))
            .map(str::trim)
    };
    MemberState {
        mode: line("Mode: ").map(str::to_owned),
        zxid: line("Zxid: ")
            .and_then(|z| z.strip_prefix("0x"))
            .and_then(|hex| u64::from_str_radix(hex, 16).ok()),
    }
}

/// The server's version from `srvr` (`Zookeeper version: 3.9.5-293c895…, built on …`): the
/// release number before the build's hash (`3.9.5`), `None` on timeout.
pub async fn zk_version(addr: SocketAddr, timeout: Duration) -> Option<String> {
    let answer = tokio::time::timeout(timeout, four_letter_word(addr, b"srvr"))
        .await
        .ok()?
        .ok()?;
    parse_version(&answer)
}

fn parse_version(srvr: &str) -> Option<String> {
    let full = srvr
        .lines()
        .find_map(|l| l.strip_prefix("Zookeeper version: "))?;
    let release = full.split([',', '-']).next()?.trim();
    (!release.is_empty()).then(|| release.to_owned())
}

/// True once the server serves clients as part of a quorum (or standalone).
pub async fn zk_serving(addr: SocketAddr, timeout: Duration) -> bool {
    zk_mode(addr, timeout).await.is_some()
}

/// True if the server at client address `addr` leads the ensemble right now.
pub async fn zk_is_leader(addr: SocketAddr, timeout: Duration) -> bool {
    zk_mode(addr, timeout).await.as_deref() == Some("leader")
}

/// The server's whole answer to the four-letter word `word`.
pub(super) async fn four_letter_word(addr: SocketAddr, word: &[u8; 4]) -> io::Result<String> {
    let mut stream = TcpStream::connect(addr).await?;
    stream.write_all(word).await?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await?;
    Ok(String::from_utf8_lossy(&answer).into_owned())
}

impl NodeRecipe for ZkOptions {
    fn binary(&self) -> &Path {
        &self.java
    }

    fn package(&self) -> &'static str {
        PACKAGE
    }

    fn validate(&self) -> Result<(), String> {
        ZkOptions::validate(self)
    }

    fn config_file(&self) -> &'static str {
        CONFIG_FILE
    }

    fn ready_timeout(&self) -> Duration {
        self.ready_timeout
    }

    fn write_config(&self, folder: &NodeFolder, port: u16) -> io::Result<()> {
        ZkOptions::write_config(self, folder, port)
    }

    fn command(&self, folder: &NodeFolder) -> Command {
        ZkOptions::command(self, folder)
    }

    fn probe(&self, addr: SocketAddr) -> BoxFuture<'static, bool> {
        Box::pin(zk_serving(addr, PROBE_TIMEOUT))
    }

    fn address_in_use(&self, output: &str) -> bool {
        address_in_use(output)
    }

    fn is_leader(&self, addr: SocketAddr, _: &NodeFolder) -> BoxFuture<'static, bool> {
        Box::pin(zk_is_leader(addr, PROBE_TIMEOUT))
    }
}

#[cfg(test)]
mod tests {
    use super::parse_version;

    #[test]
    fn the_release_is_read_from_srvr() {
        let debian = "Zookeeper version: 3.8.0-${mvngit.commit.id}, built on 2023-02-11 00:00 UTC\nLatency min/avg/max: 0/0.0/0\nMode: follower\n";
        assert_eq!(parse_version(debian).as_deref(), Some("3.8.0"));
        let central = "Zookeeper version: 3.9.5-293c895a8d966a3ecb92872be4a1daf87d725da2, built on 2026-02-11 20:18 UTC\nMode: leader\n";
        assert_eq!(parse_version(central).as_deref(), Some("3.9.5"));
        assert_eq!(
            parse_version("This ZooKeeper instance is not currently serving requests\n"),
            None
        );
    }
}
