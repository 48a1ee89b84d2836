//! etcd as a node kind: one member of a cluster, its command line, readiness probe (the
//! member sees a leader) and leader probe.
//!
//! Members are started together ([`crate::processes::Supervisor::start_cluster`]): a lone member of a
//! new three-member cluster never becomes ready. Tear-down is SIGKILL, as for every node: a
//! SIGTERM'd leader first tries to hand over leadership and hangs for seconds when the others
//! are going down too.

use crate::processes::kind::{BoxFuture, NodeRecipe, PROBE_TIMEOUT};
use std::fmt::Write as _;
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::processes::folder::NodeFolder;
use crate::processes::http;

/// Debian package that provides `etcd`.
pub(crate) const PACKAGE: &str = "etcd-server";
/// The member's command line, written for the record: etcd is configured by flags.
pub(crate) const CONFIG_FILE: &str = "etcd.args";

/// How to run one etcd member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EtcdOptions {
    /// The server binary: a bare name is looked up in `PATH`.
    pub binary: PathBuf,
    /// The member's name in the cluster (the node name).
    pub member: String,
    /// The loopback port the member listens on for its peers; reserved by the caller.
    pub peer_port: u16,
    /// Every member's name and the peer address the *others* dial to reach it (a proxy or
    /// router in front of its `peer_port`), this member included. The same for every member:
    /// etcd derives member ids from these addresses.
    pub cluster: Vec<(String, SocketAddr)>,
    /// `--initial-cluster-token`: keeps members of different clusters apart.
    pub token: String,
    /// Raft heartbeat interval; etcd's default is 100 ms.
    pub heartbeat_ms: u64,
    /// Raft election timeout; etcd's default is 1000 ms. Leases shorter than 1.5 × this are
    /// extended by etcd to that minimum.
    pub election_ms: u64,
    /// How long to wait, after spawning, for the member to see a leader.
    pub ready_timeout: Duration,
}

impl EtcdOptions {
    /// A member of `cluster` with the fast timing used by lockpick (50 ms heartbeat, 500 ms
    /// election timeout: a three-member loopback cluster is up in well under a second).
    pub fn member(member: &str, peer_port: u16, cluster: Vec<(String, SocketAddr)>) -> EtcdOptions {
        EtcdOptions {
            binary: PathBuf::from("etcd"),
            member: member.to_string(),
            peer_port,
            cluster,
            token: "lockpick".to_string(),
            heartbeat_ms: 50,
            election_ms: 500,
            ready_timeout: Duration::from_secs(15),
        }
    }

    pub(crate) fn validate(&self) -> Result<(), String> {
        if !self.cluster.iter().any(|(name, _)| *name == self.member) {
            return Err(format!(
                "member {} is missing from its own cluster list",
                self.member
            ));
        }
        if self.heartbeat_ms == 0 || self.election_ms < 5 * self.heartbeat_ms {
            return Err(format!(
                "election timeout {} ms must be at least 5 heartbeats of {} ms",
                self.election_ms, self.heartbeat_ms
            ));
        }
        Ok(())
    }

    fn args(&self, folder: &NodeFolder, client_port: u16) -> io::Result<Vec<String>> {
        let path = |p: &std::path::Path| {
            p.to_str().map(str::to_owned).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("path {} is not UTF-8", p.display()),
                )
            })
        };
        let advertised = self
            .cluster
            .iter()
            .find(|(name, _)| *name == self.member)
            .map(|(_, addr)| *addr)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "member not in cluster"))?;
        let mut initial = String::new();
        for (name, addr) in &self.cluster {
            let sep = if initial.is_empty() { "" } else { "," };
            let _ = write!(initial, "{sep}{name}=http://{addr}");
        }
        let client = format!("http://127.0.0.1:{client_port}");
        Ok(vec![
            format!("--name={}", self.member),
            format!("--data-dir={}", path(&folder.data)?),
            format!("--listen-client-urls={client}"),
            format!("--advertise-client-urls={client}"),
            format!("--listen-peer-urls=http://127.0.0.1:{}", self.peer_port),
            format!("--initial-advertise-peer-urls=http://{advertised}"),
            format!("--initial-cluster={initial}"),
            format!("--initial-cluster-token={}", self.token),
            // Ignored once the data dir holds a WAL, so a restart rejoins the same cluster.
            "--initial-cluster-state=new".to_string(),
            format!("--heartbeat-interval={}", self.heartbeat_ms),
            format!("--election-timeout={}", self.election_ms),
            // etcd 3.5's default, off in 3.4 (Debian's): without it a member cut off from the
            // others keeps raising its term, and when the cut heals it unseats the leader and
            // forces elections, each of which extends every lease; waiters were seen getting
            // nothing for over 4 s after a heal.
            "--pre-vote=true".to_string(),
            "--logger=zap".to_string(),
            format!("--log-outputs={}", path(&folder.log)?),
        ])
    }

    /// Writes the command line to `etcd.args`, one flag per line, for whoever reads the run.
    pub(crate) fn write_config(&self, folder: &NodeFolder, client_port: u16) -> io::Result<()> {
        let mut text = self.args(folder, client_port)?.join("\n");
        text.push('\n');
        std::fs::write(&folder.config, text)
    }

    /// The command line, read back from `etcd.args` so that it is exactly what was recorded.
    pub(crate) fn command(&self, folder: &NodeFolder) -> Command {
        let args = std::fs::read_to_string(&folder.config).unwrap_or_default();
        let mut command = Command::new(&self.binary);
        command.args(args.lines()).current_dir(&folder.root);
        command
    }
}

/// Whether freshly written member output says a port was taken.
pub(crate) fn address_in_use(output: &str) -> bool {
    output.contains("address already in use")
}

/// True once the member at client address `addr` reports itself healthy: it has a leader and
/// can serve a request through it.
pub async fn etcd_health(addr: SocketAddr, timeout: Duration) -> bool {
    http::request(addr, "/health", None, timeout)
        .await
        .is_some_and(|body| body.replace(' ', "").contains("\"health\":\"true\""))
}

/// The server version the member at client address `addr` reports (`GET /version`:
/// `{"etcdserver":"3.6.16","etcdcluster":"3.6.0"}`), `None` if it does not answer.
pub async fn etcd_version(addr: SocketAddr, timeout: Duration) -> Option<String> {
    let body = http::request(addr, "/version", None, timeout).await?;
    let answer: serde_json::Value = serde_json::from_str(&body).ok()?;
    answer
        .get("etcdserver")
        .and_then(|v| v.as_str())
        .map(str::to_owned)
}

/// What one member says of the cluster (`/v3/maintenance/status`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Status {
    /// The answering member's own id.
    pub member: u64,
    pub leader: u64,
    pub term: u64,
    pub applied: u64,
    /// The member's alarms and errors (`errors`), empty when there are none.
    pub errors: Vec<String>,
}

/// What the member at client address `addr` says of the cluster (`/v3/maintenance/status`),
/// `None` if it does not answer in time or answers something else.
pub(crate) async fn etcd_status(addr: SocketAddr, timeout: Duration) -> Option<Status> {
    let body = http::request(addr, "/v3/maintenance/status", Some("{}"), timeout).await?;
    parse_status(&body)
}

/// The leader, term, applied index and errors of a status answer. The JSON gateway writes
/// 64-bit numbers as strings, and these fields in camel case (3.4 and 3.6 alike).
fn parse_status(body: &str) -> Option<Status> {
    let status: serde_json::Value = serde_json::from_str(body).ok()?;
    let number = |field: &str| -> Option<u64> {
        match status.get(field) {
            // A field at its zero value is left out.
            None => Some(0),
            Some(v) => v.as_str()?.parse().ok(),
        }
    };
    let errors = match status.get("errors") {
        None => Vec::new(),
        Some(v) => (v.as_array()?.iter())
            .map(|e| e.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()?,
    };
    let member =
        (status.pointer("/header/member_id")).map_or(Some(0), |v| v.as_str()?.parse().ok())?;
    Some(Status {
        member,
        leader: number("leader")?,
        term: number("raftTerm")?,
        applied: number("raftAppliedIndex")?,
        errors,
    })
}

/// True if the member at client address `addr` is the leader right now.
pub async fn etcd_is_leader(addr: SocketAddr, timeout: Duration) -> bool {
    etcd_status(addr, timeout)
        .await
        .is_some_and(|s| s.leader != 0 && s.member == s.leader)
}

impl NodeRecipe for EtcdOptions {
    fn binary(&self) -> &Path {
        &self.binary
    }

    fn package(&self) -> &'static str {
        PACKAGE
    }

    fn validate(&self) -> Result<(), String> {
        EtcdOptions::validate(self)
    }

    fn config_file(&self) -> &'static str {
        CONFIG_FILE
    }

    fn ready_timeout(&self) -> Duration {
        self.ready_timeout
    }

    fn write_config(&self, folder: &NodeFolder, port: u16) -> io::Result<()> {
        EtcdOptions::write_config(self, folder, port)
    }

    fn command(&self, folder: &NodeFolder) -> Command {
        EtcdOptions::command(self, folder)
    }

    fn probe(&self, addr: SocketAddr) -> BoxFuture<'static, bool> {
        Box::pin(etcd_health(addr, PROBE_TIMEOUT))
    }

    fn address_in_use(&self, output: &str) -> bool {
        address_in_use(output)
    }

    fn is_leader(&self, addr: SocketAddr, _: &NodeFolder) -> BoxFuture<'static, bool> {
        Box::pin(etcd_is_leader(addr, PROBE_TIMEOUT))
    }
}

/// An etcd member as a node kind, for callers outside this crate (tests starting a cluster by
/// hand with [`crate::processes::Supervisor::start_cluster`]).
impl From<EtcdOptions> for crate::processes::NodeKind {
    fn from(options: EtcdOptions) -> crate::processes::NodeKind {
        crate::processes::NodeKind::new(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_answer_gives_leader_term_applied_index_and_errors() {
        // As etcd 3.4.23 and 3.6.16 answer (3.6 adds fields, with spaces after commas).
        let v34 = r#"{"header":{"cluster_id":"14841639068965178418","member_id":"10276657743932975437","revision":"1","raft_term":"2"},"version":"3.4.23","dbSize":"20480","leader":"10276657743932975437","raftIndex":"4","raftTerm":"2","raftAppliedIndex":"4","dbSizeInUse":"16384"}"#;
        let v36 = r#"{"header":{"cluster_id":"1", "member_id":"2", "revision":"1", "raft_term":"2"}, "version":"3.6.16", "dbSize":"20480", "leader":"10276657743932975437", "raftIndex":"4", "raftTerm":"2", "raftAppliedIndex":"4", "dbSizeInUse":"16384", "storageVersion":"3.6.0", "dbSizeQuota":"2147483648", "downgradeInfo":{}}"#;
        let want = Status {
            member: 10276657743932975437,
            leader: 10276657743932975437,
            term: 2,
            applied: 4,
            errors: Vec::new(),
        };
        assert_eq!(parse_status(v34), Some(want.clone()));
        assert_eq!(parse_status(v36), Some(Status { member: 2, ..want }));
        let alarmed = r#"{"leader":"5","raftTerm":"3","raftAppliedIndex":"9","errors":["memberID:5 alarm:NOSPACE "]}"#;
        assert_eq!(parse_status(alarmed).unwrap().errors.len(), 1);
        // No leader: the field is left out.
        let leaderless = parse_status(r#"{"raftTerm":"3","raftAppliedIndex":"9"}"#);
        assert_eq!(leaderless.unwrap().leader, 0);
        assert_eq!(parse_status("no json"), None);
        assert_eq!(
            parse_status(r#"{"leader":7}"#),
            None,
            "a number where etcd writes a string"
        );
    }
}
