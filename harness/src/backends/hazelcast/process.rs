//! Hazelcast as a node kind: one member, its `hazelcast.xml` (advanced networking: a member
//! port its peers reach through lockpick's routers, a client port behind the member's client
//! proxy, a REST port for probes), its command line (the jar setup fetched, under OpenJDK), and
//! its readiness probe: the member is in the CP Subsystem (or, CP off, healthy).
//!
//! A CP member restarted after a crash comes back with a new identity, since its CP state
//! lived only in memory (CP Subsystem persistence is an Enterprise feature), and Hazelcast
//! makes it an AP member; the old one stays in every CP group, missing. The probe then does
//! what Hazelcast's docs tell an operator to do: remove the missing member (the one at this
//! member's own address, which only its dead predecessor can have) and promote this one, so a
//! restarted member takes its place in the groups, as a restarted etcd or ZooKeeper member does.

use crate::processes::folder::NodeFolder;
use crate::processes::http;
use crate::processes::kind::{BoxFuture, NodeRecipe, PROBE_TIMEOUT};
use crate::processes::ReservedPort;
use std::fmt::Write as _;
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The Debian package of the `java` the members run on (scripts/setup installs it when no JDK
/// is there); the jar itself is setup's (`servers/hazelcast-5.4`).
pub(crate) const JAVA_PACKAGE: &str = "openjdk-17-jdk-headless";
pub(crate) const CONFIG_FILE: &str = "hazelcast.xml";
/// The cluster name members and clients share (the adapter names it too).
pub(crate) const CLUSTER_NAME: &str = "lockpick";
/// The members' CP session TTL and heartbeat, in whole seconds as Hazelcast takes them: a
/// client whose heartbeats stop (a pause) loses its session, and with it the lock, after the
/// TTL. Hazelcast's defaults (300 s and 5 s) outlive a run.
pub const SESSION_TTL_S: u64 = 3;
const SESSION_HEARTBEAT_S: u64 = 1;
/// Hazelcast's system property naming the class of its clock, and lockpick's, from setup's jar.
const CLOCK_PROPERTY: &str = "com.hazelcast.clock.impl";
const CLOCK_CLASS: &str = "lockpick.ControlFileClock";
const CLOCK_JAR: &str = "lockpick-clock.jar";
/// The CP group the lock lives in (the adapter's `getLock(name)` without `@group`).
pub(super) const LOCK_GROUP: &str = "default";
/// How long a restarted member waits between two tries of the operator's recovery.
const RECOVERY_GAP: Duration = Duration::from_secs(2);

/// How to run one member.
#[derive(Debug)]
pub struct HzOptions {
    /// The Java launcher: a bare name is looked up in `PATH`.
    pub java: PathBuf,
    /// The member's jars (setup's `servers/hazelcast-5.4/target/lib`).
    pub class_path: String,
    /// The loopback port the member listens on for its peers (reserved by the caller).
    pub member_port: u16,
    /// Where the other members reach this one (its router): the address it advertises.
    pub public: SocketAddr,
    /// Every member's router, this one's included: the TCP-IP join list.
    pub members: Vec<SocketAddr>,
    /// The CP Subsystem on (`cp-member-count` = the members), or off: Hazelcast's "unsafe
    /// mode", where the CP API is served from the AP partitions.
    pub cp: bool,
    /// The REST port (probes and the operator's recovery), leased so no other node of this
    /// process takes it, and unbound for the member.
    pub rest: Arc<ReservedPort>,
    /// How long to wait, after spawning, until the member is ready.
    pub ready_timeout: Duration,
    /// Give the member Hazelcast's clock read from the control file `faketime.rc` in its
    /// folder (setup's `lockpick-clock.jar`, `servers/hazelcast-5.4/clock/`), so the nemesis
    /// can move the clock its CP sessions expire by, as libfaketime moves the other servers'
    /// (a JVM under libfaketime started several times slower: a member was not up in 60 s).
    pub faketime: bool,
    /// Starts so far (each writes the config): a member past its first is a restart.
    starts: Arc<AtomicU32>,
    /// When the recovery was last tried, so the 5 ms probes do not repeat it.
    recovered_at: Arc<Mutex<Option<Instant>>>,
}

impl HzOptions {
    /// A member on `member_port`, advertised at `public`, joining `members`.
    pub fn member(
        member_port: u16,
        public: SocketAddr,
        members: Vec<SocketAddr>,
        mut rest: ReservedPort,
        cp: bool,
    ) -> HzOptions {
        rest.release();
        HzOptions {
            java: PathBuf::from("java"),
            class_path: String::new(),
            member_port,
            public,
            members,
            cp,
            rest: Arc::new(rest),
            ready_timeout: Duration::from_secs(60),
            faketime: false,
            starts: Arc::new(AtomicU32::new(0)),
            recovered_at: Arc::new(Mutex::new(None)),
        }
    }

    /// Where the member's REST endpoint listens (probes and the operator's calls).
    pub(super) fn rest_addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.rest.port()))
    }

    /// The config of a member whose clients connect on `client_port`.
    fn config_text(&self, client_port: u16) -> String {
        let mut x = String::new();
        let _ = writeln!(x, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
        let _ = writeln!(
            x,
            r#"<hazelcast xmlns="http://www.hazelcast.com/schema/config">"#
        );
        let _ = writeln!(x, "  <cluster-name>{CLUSTER_NAME}</cluster-name>");
        let _ = writeln!(x, "  <properties>");
        for (key, value) in [
            ("hazelcast.phone.home.enabled", "false"),
            // Loopback only: with interfaces alone Hazelcast still binds every address.
            ("hazelcast.socket.bind.any", "false"),
            // A run is seconds long: members join at once, find a silent member in 5 s (not
            // 60), and, CP off, merge split brains 5 s after a heal (not 300).
            ("hazelcast.wait.seconds.before.join", "0"),
            ("hazelcast.heartbeat.interval.seconds", "1"),
            ("hazelcast.max.no.heartbeat.seconds", "5"),
            ("hazelcast.merge.first.run.delay.seconds", "5"),
            ("hazelcast.merge.next.run.delay.seconds", "5"),
        ] {
            let _ = writeln!(x, r#"    <property name="{key}">{value}</property>"#);
        }
        let _ = writeln!(x, "  </properties>");
        let _ = writeln!(x, r#"  <advanced-network enabled="true">"#);
        let _ = writeln!(x, "    <join>");
        let _ = writeln!(x, r#"      <auto-detection enabled="false"/>"#);
        let _ = writeln!(x, r#"      <multicast enabled="false"/>"#);
        let _ = writeln!(x, r#"      <tcp-ip enabled="true">"#);
        for m in &self.members {
            let _ = writeln!(x, "        <member>{m}</member>");
        }
        let _ = writeln!(x, "      </tcp-ip>");
        let _ = writeln!(x, "    </join>");
        let loopback =
            r#"<interfaces enabled="true"><interface>127.0.0.1</interface></interfaces>"#;
        let _ = writeln!(x, "    <member-server-socket-endpoint-config>");
        let _ = writeln!(
            x,
            r#"      <port auto-increment="false">{}</port>"#,
            self.member_port
        );
        // The members know each other by their routers, so every member link crosses its
        // link's proxy (the router tells the dialing member apart).
        let _ = writeln!(x, "      <public-address>{}</public-address>", self.public);
        let _ = writeln!(x, "      {loopback}");
        let _ = writeln!(x, "    </member-server-socket-endpoint-config>");
        let _ = writeln!(x, "    <client-server-socket-endpoint-config>");
        let _ = writeln!(
            x,
            r#"      <port auto-increment="false">{client_port}</port>"#
        );
        let _ = writeln!(x, "      {loopback}");
        let _ = writeln!(x, "    </client-server-socket-endpoint-config>");
        let _ = writeln!(x, "    <rest-server-socket-endpoint-config>");
        let _ = writeln!(
            x,
            r#"      <port auto-increment="false">{}</port>"#,
            self.rest.port()
        );
        let _ = writeln!(x, "      {loopback}");
        let _ = writeln!(x, "      <endpoint-groups>");
        let _ = writeln!(
            x,
            r#"        <endpoint-group name="HEALTH_CHECK" enabled="true"/>"#
        );
        let _ = writeln!(x, r#"        <endpoint-group name="CP" enabled="true"/>"#);
        let _ = writeln!(x, "      </endpoint-groups>");
        let _ = writeln!(x, "    </rest-server-socket-endpoint-config>");
        let _ = writeln!(x, "  </advanced-network>");
        let _ = writeln!(x, "  <cp-subsystem>");
        let cp_members = if self.cp { self.members.len() } else { 0 };
        let _ = writeln!(x, "    <cp-member-count>{cp_members}</cp-member-count>");
        if self.cp {
            let _ = writeln!(x, "    <group-size>{cp_members}</group-size>");
        }
        let _ = writeln!(
            x,
            "    <session-time-to-live-seconds>{SESSION_TTL_S}</session-time-to-live-seconds>"
        );
        let _ = writeln!(
            x,
            "    <session-heartbeat-interval-seconds>{SESSION_HEARTBEAT_S}</session-heartbeat-interval-seconds>"
        );
        // Never removed by time: a crashed member is replaced by its restart (module docs).
        let _ = writeln!(
            x,
            "    <missing-cp-member-auto-removal-seconds>0</missing-cp-member-auto-removal-seconds>"
        );
        // Raft's defaults find a dead leader after 5 missed 5 s heartbeats (25 s): 2 s here.
        let _ = writeln!(x, "    <raft-algorithm>");
        let _ = writeln!(
            x,
            "      <leader-election-timeout-in-millis>1000</leader-election-timeout-in-millis>"
        );
        let _ = writeln!(
            x,
            "      <leader-heartbeat-period-in-millis>500</leader-heartbeat-period-in-millis>"
        );
        let _ = writeln!(
            x,
            "      <max-missed-leader-heartbeat-count>4</max-missed-leader-heartbeat-count>"
        );
        let _ = writeln!(x, "    </raft-algorithm>");
        let _ = writeln!(x, "  </cp-subsystem>");
        let _ = writeln!(x, "</hazelcast>");
        x
    }

    fn command(&self, folder: &NodeFolder) -> Command {
        let mut command = Command::new(&self.java);
        command
            .args([
                "-Xms64m",
                "-Xmx256m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                // No /tmp/hsperfdata_<user>/<pid>: the JVM removes it only on a clean exit.
                "-XX:-UsePerfData",
            ])
            // The internals Hazelcast asks for at start (it warns and runs slower without).
            .args([
                "--add-modules",
                "java.se",
                "--add-exports",
                "java.base/jdk.internal.ref=ALL-UNNAMED",
                "--add-opens",
                "java.base/java.lang=ALL-UNNAMED",
                "--add-opens",
                "java.base/sun.nio.ch=ALL-UNNAMED",
                "--add-opens",
                "java.management/sun.management=ALL-UNNAMED",
                "--add-opens",
                "jdk.management/com.sun.management.internal=ALL-UNNAMED",
            ])
            .arg(format!("-Dhazelcast.config={}", folder.config.display()))
            // java.util.logging to stderr: the node's console log.
            .arg("-Dhazelcast.logging.type=jdk")
            .args(self.clock_properties(folder))
            .args(["-cp", &self.class_path])
            .arg("com.hazelcast.core.server.HazelcastMemberStarter")
            .current_dir(&folder.root);
        command
    }

    /// The system properties that give a member the clock of its control file, when clocks
    /// move (`faketime`).
    fn clock_properties(&self, folder: &NodeFolder) -> Vec<String> {
        if !self.faketime {
            return Vec::new();
        }
        let control = crate::processes::faketime::control_file(&folder.root);
        vec![
            format!("-D{CLOCK_PROPERTY}={CLOCK_CLASS}"),
            format!("-Dlockpick.clock.file={}", control.display()),
        ]
    }
}

/// What the probe found.
async fn ready(options: Probe) -> bool {
    let rest = options.rest;
    let get = |path: &'static str| http::request(rest, path, None, PROBE_TIMEOUT);
    if !options.cp {
        return get("/hazelcast/health/ready").await.is_some();
    }
    if get("/hazelcast/rest/cp-subsystem/members/local")
        .await
        .is_some()
    {
        return true;
    }
    if options.first_start {
        // Still discovering the initial CP members.
        return false;
    }
    {
        let mut at = options
            .recovered_at
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if at.is_some_and(|t| t.elapsed() < RECOVERY_GAP) {
            return false;
        }
        *at = Some(Instant::now());
    }
    let Some(listed) = get("/hazelcast/rest/cp-subsystem/members").await else {
        return false;
    };
    let me = format!("[{}]:{}", options.public.ip(), options.public.port());
    let body = rest_credentials();
    if let Some(old) = predecessor(&listed, &me) {
        let path = format!("/hazelcast/rest/cp-subsystem/members/{old}/remove");
        if http::request(rest, &path, Some(&body), RECOVERY_GAP)
            .await
            .is_none()
        {
            return false;
        }
    }
    let _ = http::request(
        rest,
        "/hazelcast/rest/cp-subsystem/members",
        Some(&body),
        RECOVERY_GAP,
    )
    .await;
    false
}

/// The body of an operator's REST call: the cluster's name and its (empty) password.
pub(super) fn rest_credentials() -> String {
    format!("{CLUSTER_NAME}&")
}

/// The uuid of the CP member listed (`[{"uuid":"…","address":"[127.0.0.1]:5711"},…]`) at
/// `address`: a restarted member's dead predecessor.
fn predecessor(listed: &str, address: &str) -> Option<String> {
    let members: serde_json::Value = serde_json::from_str(listed).ok()?;
    members.as_array()?.iter().find_map(|m| {
        (m.get("address")?.as_str()? == address)
            .then(|| m.get("uuid")?.as_str().map(str::to_owned))?
    })
}

/// What one probe needs, owned, for a `'static` future.
struct Probe {
    rest: SocketAddr,
    public: SocketAddr,
    cp: bool,
    first_start: bool,
    recovered_at: Arc<Mutex<Option<Instant>>>,
}

/// Whether freshly written member output says a port was taken.
pub(crate) fn address_in_use(output: &str) -> bool {
    output.contains("is already in use") || output.contains("Address already in use")
}

impl NodeRecipe for HzOptions {
    fn binary(&self) -> &Path {
        &self.java
    }

    fn package(&self) -> &'static str {
        JAVA_PACKAGE
    }

    fn validate(&self) -> Result<(), String> {
        if self.faketime && !self.class_path.contains(CLOCK_JAR) {
            return Err(format!(
                "find {CLOCK_JAR} among the member's jars for clock faults (run `bash scripts/setup`, which builds it from servers/hazelcast-5.4/clock/)"
            ));
        }
        if !self.members.contains(&self.public) {
            return Err(format!(
                "member at {} is missing from its own join list",
                self.public
            ));
        }
        Ok(())
    }

    fn config_file(&self) -> &'static str {
        CONFIG_FILE
    }

    fn ready_timeout(&self) -> Duration {
        self.ready_timeout
    }

    fn write_config(&self, folder: &NodeFolder, port: u16) -> io::Result<()> {
        self.starts.fetch_add(1, Ordering::SeqCst);
        std::fs::write(&folder.config, self.config_text(port))?;
        // A restarted member keeps the clock it had: the control file is made once.
        let control = crate::processes::faketime::control_file(&folder.root);
        if self.faketime && !control.exists() {
            crate::processes::faketime::set_clock(
                &control,
                crate::processes::faketime::ClockSetting::REAL,
            )?;
        }
        Ok(())
    }

    fn command(&self, folder: &NodeFolder) -> Command {
        HzOptions::command(self, folder)
    }

    fn probe(&self, _addr: SocketAddr) -> BoxFuture<'static, bool> {
        Box::pin(ready(Probe {
            rest: self.rest_addr(),
            public: self.public,
            cp: self.cp,
            first_start: self.starts.load(Ordering::SeqCst) <= 1,
            recovered_at: self.recovered_at.clone(),
        }))
    }

    fn address_in_use(&self, output: &str) -> bool {
        address_in_use(output)
    }

    /// Whether the member leads, by its own account in its log: with the CP Subsystem, the
    /// lock's CP group (its Raft leader, which alone commits and expires sessions: the last
    /// list of the group's members it logged, at each change of role or leader, marks it
    /// `LEADER`); in unsafe mode, which has no Raft, the cluster (its master, the oldest
    /// member, first in the last member list it logged). Neither the REST API nor the public
    /// Java API says who leads a CP group; the log does.
    fn is_leader(&self, _: SocketAddr, folder: &NodeFolder) -> BoxFuture<'static, bool> {
        let cp = self.cp;
        let leads = std::fs::read_to_string(&folder.console).is_ok_and(|log| {
            if cp {
                leads_group(&log, LOCK_GROUP)
            } else {
                is_master(&log)
            }
        });
        Box::pin(async move { leads })
    }
}

/// Whether the first member of the last `Members {size:…} [` list in a member's log, the
/// cluster's master, is the member itself (`this`).
fn is_master(log: &str) -> bool {
    let Some(at) = log.rfind("\nMembers {size:") else {
        return false;
    };
    log[at + 1..]
        .lines()
        .nth(1)
        .is_some_and(|first| first.trim_end().ends_with(" this"))
}

/// Whether the last `CP Group Members {groupId: <group>(…` list in a member's log marks the
/// member itself (`this`) as `LEADER`.
fn leads_group(log: &str, group: &str) -> bool {
    let head = format!("CP Group Members {{groupId: {group}(");
    let Some(at) = log.rfind(&head) else {
        return false;
    };
    log[at..]
        .lines()
        .skip(1)
        .take_while(|line| line.trim() != "]")
        .find(|line| line.trim_end().ends_with(" this"))
        .is_some_and(|me| me.trim_end().ends_with("- LEADER this"))
}

#[cfg(test)]
mod tests {
    use super::{is_master, leads_group, predecessor};

    /// A member's log as Hazelcast 5.4 writes it at changes of a CP group's leader (the
    /// METADATA group's lists and the default group's, interleaved).
    fn log(default_roles: &[&str], metadata_me: &str) -> String {
        let mut text = String::from("INFO: [127.0.0.1]:42077 [lockpick] [5.4.0] \n\n");
        for role in default_roles {
            text += &format!(
                "CP Group Members {{groupId: default(6080), size:3, term:1, logIndex:0}} [\n\
                 \tCPMember{{uuid=49b5, address=[127.0.0.1]:38429}}{}\n\
                 \tCPMember{{uuid=5ddf, address=[127.0.0.1]:42077}} - {role} this\n\
                 ]\n",
                if *role == "LEADER" { "" } else { " - LEADER" }
            );
        }
        text += &format!(
            "CP Group Members {{groupId: METADATA(0), size:3, term:2, logIndex:0}} [\n\
             \tCPMember{{uuid=5ddf, address=[127.0.0.1]:42077}} - {metadata_me} this\n\
             ]\n"
        );
        text
    }

    #[test]
    fn a_member_leads_the_group_its_last_list_names_it_leader_of() {
        assert!(leads_group(
            &log(&["FOLLOWER", "LEADER"], "FOLLOWER"),
            "default"
        ));
        assert!(!leads_group(
            &log(&["LEADER", "FOLLOWER"], "LEADER"),
            "default"
        ));
        assert!(!leads_group(&log(&["CANDIDATE"], "LEADER"), "default"));
        assert!(leads_group(&log(&["FOLLOWER"], "LEADER"), "METADATA"));
        assert!(
            !leads_group(&log(&[], "FOLLOWER"), "default"),
            "no list yet"
        );
    }

    #[test]
    fn the_master_is_first_in_the_last_member_list() {
        let list = |members: &[&str]| {
            let mut text = format!("\nMembers {{size:{}, ver:3}} [\n", members.len());
            for m in members {
                text += &format!("\tMember [127.0.0.1]:{m}\n");
            }
            text + "]\n"
        };
        let me_first = list(&["42077 - 5ddf this", "38429 - 49b5"]);
        let me_second = list(&["38429 - 49b5", "42077 - 5ddf this"]);
        assert!(is_master(&(me_second.clone() + &me_first)));
        assert!(!is_master(&(me_first + &me_second)));
        assert!(!is_master("INFO: starting\n"), "no list yet");
    }

    #[test]
    fn the_predecessor_is_the_cp_member_at_this_address() {
        let listed = r#"[{"uuid":"e0ab","address":"[127.0.0.1]:5711"},{"uuid":"e3db","address":"[127.0.0.1]:5712"}]"#;
        assert_eq!(
            predecessor(listed, "[127.0.0.1]:5712").as_deref(),
            Some("e3db")
        );
        assert_eq!(predecessor(listed, "[127.0.0.1]:5713"), None);
    }
}
