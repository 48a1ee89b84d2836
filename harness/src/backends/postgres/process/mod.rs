//! PostgreSQL as a node kind: `initdb` once into the node folder, then `postgres` on a loopback
//! port with every setting in a config file of the node folder, a readiness probe that runs
//! `SELECT 1`, and the clean-up of the one System V segment postgres leaves when it is killed.
//!
//! Facts measured with Debian's PostgreSQL 15 here: postgres exits at once when run as root,
//! so as root it runs as [`crate::processes::run_as::SERVER_USER`] with the node folder handed to that
//! user; its backends call `setsid()`, so signals reach them only one by one (the registry
//! signals a node's whole process tree), and PDEATHSIG does not reach them at all (postgres
//! runs as PID 1 of a PID namespace of its own, see [`crate::processes::pid_namespace`]); a postmaster killed with SIGKILL leaves a 56-byte
//! System V segment behind (the data-folder interlock), marked for removal once the server
//! is ready so that no exit path leaks it; with `unix_socket_directories = ''` and
//! `dynamic_shared_memory_type = mmap` nothing is written outside the node folder.

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

mod replica;

use crate::processes::folder::NodeFolder;
use crate::processes::kind::{BoxFuture, NodeKind, NodeRecipe, PROBE_TIMEOUT};
use crate::processes::pid_namespace;
use crate::processes::run_as::{self, Account};
pub use replica::replicas_streaming;

/// Debian package that provides `postgres` and `initdb` (PostgreSQL 15 on Debian 12).
pub(crate) const PACKAGE: &str = "postgresql";
pub(crate) const CONFIG_FILE: &str = "postgresql.conf";
/// Where Debian installs each major version's server binaries: `/usr/lib/postgresql/<N>/bin`.
const DEBIAN_ROOT: &str = "/usr/lib/postgresql";
/// The superuser initdb creates; clients log in as it, without a password, over loopback.
pub const USER: &str = "lockpick";
/// The database clients connect to (initdb makes it).
pub const DATABASE: &str = "postgres";
/// How long a restart waits for the previous server's workers to exit.
const DETACH_WAIT: Duration = Duration::from_secs(5);
/// initdb's output, in the node folder.
const INITDB_LOG: &str = "initdb.log";

/// How to run one PostgreSQL server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgOptions {
    /// The server binary, with `initdb` beside it: by default `postgres` in the newest
    /// `/usr/lib/postgresql/<N>/bin`, else a bare name looked up in `PATH`.
    pub binary: PathBuf,
    /// `fsync` (and `full_page_writes`): off, a committed transaction survives a kill of
    /// the server but not of the machine.
    pub fsync: bool,
    /// `synchronous_commit`: off, a commit is acknowledged before its WAL leaves the server's
    /// memory, so a SIGKILL loses the last ~0.2–0.6 s of acknowledged commits.
    pub synchronous_commit: bool,
    /// Extra `name value` settings (e.g. `tcp_keepalives_idle 5`, `idle_session_timeout
    /// 2000`), written after lockpick's own lines so they win. Names are letters, digits, `_`
    /// and `.`; values are quoted by lockpick.
    pub extra_config: Vec<(String, String)>,
    /// How long to wait for the first answer to `SELECT 1` after spawning.
    pub ready_timeout: Duration,
    /// Run under libfaketime like Redis, so the nemesis can move `now()` (see
    /// [`crate::processes::faketime`]).
    pub faketime: bool,
    /// A streaming replica of the primary reached at this address (`pg_basebackup -R` from
    /// it instead of `initdb`, see [`replica`]), instead of a primary of its own.
    pub replica_of: Option<SocketAddr>,
}

impl Default for PgOptions {
    fn default() -> PgOptions {
        PgOptions {
            binary: debian_bindir()
                .map(|dir| dir.join("postgres"))
                .unwrap_or_else(|| PathBuf::from("postgres")),
            fsync: false,
            synchronous_commit: false,
            extra_config: Vec::new(),
            ready_timeout: Duration::from_secs(15),
            faketime: false,
            replica_of: None,
        }
    }
}

/// The newest `/usr/lib/postgresql/<N>/bin` that has a `postgres`.
fn debian_bindir() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir(DEBIAN_ROOT)
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let bin = entry.path().join("bin");
            bin.join("postgres").is_file().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

impl PgOptions {
    /// `initdb`, beside the server binary.
    fn initdb(&self) -> PathBuf {
        self.binary.with_file_name("initdb")
    }

    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.faketime {
            crate::processes::faketime::check_installed()?;
        }
        pid_namespace::check_installed()?;
        run_as::server_account()?;
        for (name, value) in &self.extra_config {
            let name_ok = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
            if !name_ok || value.contains(['\n', '\r', '\0']) {
                return Err(format!(
                    "invalid extra postgres setting {name:?} = {value:?}: names are letters, \
                     digits, '_' and '.', values one line"
                ));
            }
        }
        Ok(())
    }

    /// Creates the database cluster in `folder.data` unless it exists (a restart keeps it):
    /// `initdb`, or for a replica a copy of its primary (`pg_basebackup`). Run before every
    /// start, like the config writer; blocking, since it runs `initdb` (0.3–1 s here), once
    /// per node.
    pub(crate) fn init(&self, folder: &NodeFolder) -> io::Result<()> {
        let account = run_as::server_account().map_err(io::Error::other)?;
        if let Some(account) = account {
            run_as::check_reachable(&folder.root, account).map_err(io::Error::other)?;
        }
        if folder.data.join("PG_VERSION").is_file() {
            return Ok(());
        }
        if let Some(account) = account {
            for path in [&folder.root, &folder.data] {
                run_as::give(path, account)?;
            }
        }
        if let Some(primary) = self.replica_of {
            return replica::base_backup(self, folder, primary, account);
        }
        let mut command = Command::new(self.initdb());
        command
            .arg("--pgdata")
            .arg(&folder.data)
            .args(["--username", USER, "--auth", "trust", "--encoding", "UTF8"])
            .args(["--locale", "C", "--no-sync", "--no-instructions"]);
        run_setup(
            command,
            folder,
            INITDB_LOG,
            account,
            &format!("initdb {}", folder.data.display()),
        )
    }

    /// Writes `postgresql.conf` into the node folder for `port`, after [`PgOptions::init`].
    pub(crate) fn write_config(&self, folder: &NodeFolder, port: u16) -> io::Result<()> {
        self.init(folder)?;
        wait_detached(&folder.data);
        std::fs::write(&folder.config, self.config_text(port))?;
        // The server log is the console: postgres logs to stderr. Made here so that it exists
        // for log tails and belongs to lockpick.
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(&folder.log)?;
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

    fn config_text(&self, port: u16) -> String {
        let on_off = |on: bool| if on { "on" } else { "off" };
        let mut lines: Vec<(&str, String)> = vec![
            ("listen_addresses", "127.0.0.1".into()),
            ("port", port.to_string()),
            // No unix socket: nothing in /var/run/postgresql, and no socket path that could
            // exceed 107 bytes in a deep store. Clients come over TCP through the proxy.
            ("unix_socket_directories", String::new()),
            // posix would put segments in /dev/shm, outside the store, leaked on SIGKILL.
            ("dynamic_shared_memory_type", "mmap".into()),
            ("shared_buffers", "16MB".into()),
            ("max_connections", "100".into()),
            ("fsync", on_off(self.fsync).into()),
            ("full_page_writes", on_off(self.fsync).into()),
            ("synchronous_commit", on_off(self.synchronous_commit).into()),
            ("logging_collector", "off".into()),
            ("log_destination", "stderr".into()),
            ("log_line_prefix", "%m [%p] %a ".into()),
            ("timezone", "UTC".into()),
            ("log_timezone", "UTC".into()),
        ];
        for (name, value) in &self.extra_config {
            lines.push((name, value.clone()));
        }
        let mut text = String::new();
        for (name, value) in lines {
            // Writing to a String cannot fail.
            let _ = writeln!(text, "{name} = '{}'", value.replace('\'', "''"));
        }
        text
    }

    /// postgres in a PID namespace of its own (see [`pid_namespace`]): no backend outlives
    /// lockpick, even a stopped one.
    pub(crate) fn command(&self, folder: &NodeFolder) -> Command {
        // validate() ran before: the account is known or the node was refused.
        let account = run_as::server_account().ok().flatten();
        let preload = self.faketime.then(crate::processes::faketime::preload);
        let mut command = pid_namespace::command(&self.binary, account, preload.as_deref());
        command
            .arg("-D")
            .arg(&folder.data)
            .arg("-c")
            .arg(format!("config_file={}", folder.config.display()))
            .current_dir(&folder.root);
        if self.faketime {
            let control = crate::processes::faketime::control_file(&folder.root);
            crate::processes::faketime::clock_env(&mut command, &control);
        }
        command
    }

    /// Once the server is ready: marks its System V interlock segment for removal, so that
    /// the kernel frees it when the last process detaches, however the server ends. postgres
    /// only uses it to find a previous server's segment at start; it creates a new one then.
    pub(crate) fn on_ready(&self, folder: &NodeFolder) {
        if let Some(id) = shmem_id(&folder.data) {
            // SAFETY: IPC_RMID takes no buffer; a wrong id fails harmlessly with EINVAL.
            unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
        }
    }
}

/// Before a restart: waits (at most [`DETACH_WAIT`]) until the previous server's workers have
/// left its System V segment. The supervisor waits for the postmaster only; its SIGKILLed
/// workers exit a moment later, and a postgres started before that refuses to run
/// ("pre-existing shared memory block is still in use").
fn wait_detached(data: &Path) {
    let Some(id) = shmem_id(data) else { return };
    let deadline = std::time::Instant::now() + DETACH_WAIT;
    while std::time::Instant::now() < deadline {
        // SAFETY: shmid_ds is plain data; IPC_STAT fills the valid, writable buffer.
        let mut ds: libc::shmid_ds = unsafe { std::mem::zeroed() };
        // SAFETY: see above; an unknown id fails with EINVAL and touches nothing.
        if unsafe { libc::shmctl(id, libc::IPC_STAT, &mut ds) } != 0 || ds.shm_nattch == 0 {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The System V segment id postgres records on line 7 of `postmaster.pid` ("key id").
fn shmem_id(data: &Path) -> Option<libc::c_int> {
    let pid_file = std::fs::read_to_string(data.join("postmaster.pid")).ok()?;
    pid_file
        .lines()
        .nth(6)?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Runs a blocking setup tool of the node (initdb, pg_basebackup) in the node folder, as the
/// server's account, with its output in `log` there; `what` names it in the error, which
/// carries that output.
pub(super) fn run_setup(
    mut command: Command,
    folder: &NodeFolder,
    log: &str,
    account: Option<Account>,
    what: &str,
) -> io::Result<()> {
    let log_path = folder.root.join(log);
    let out = File::create(&log_path)?;
    command
        .current_dir(&folder.root)
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out);
    as_account(&mut command, account);
    die_with_parent(&mut command);
    let program = command.get_program().to_owned();
    let status = command.status().map_err(|err| {
        io::Error::new(
            err.kind(),
            format!("run {}: {err}", Path::new(&program).display()),
        )
    })?;
    if !status.success() {
        let output = std::fs::read_to_string(&log_path).unwrap_or_default();
        return Err(io::Error::other(format!(
            "{what} failed ({status}):\n{output}"
        )));
    }
    Ok(())
}

fn as_account(command: &mut Command, account: Option<Account>) {
    use std::os::unix::process::CommandExt;
    if let Some(account) = account {
        // std drops the supplementary groups itself when root sets a uid.
        command.uid(account.uid).gid(account.gid);
    }
}

/// initdb runs from the calling thread, which waits for it: PDEATHSIG then ends it with
/// lockpick. (Its own `postgres --boot` child ends when initdb's pipe to it closes.)
fn die_with_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: prctl is async-signal-safe and allocates nothing.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) == -1
            {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Whether freshly written server output says the port was taken.
pub(crate) fn address_in_use(output: &str) -> bool {
    output.contains("Address already in use")
}

/// Connects as [`USER`] and runs `SELECT 1`; true when it answered within `timeout`. A server
/// still starting or recovering answers "the database system is starting up": false.
pub async fn pg_ready(addr: SocketAddr, timeout: Duration) -> bool {
    tokio::time::timeout(timeout, select_one(addr))
        .await
        .is_ok_and(|ok| ok)
}

async fn select_one(addr: SocketAddr) -> bool {
    let mut config = tokio_postgres::Config::new();
    config
        .host(addr.ip().to_string())
        .port(addr.port())
        .user(USER)
        .dbname(DATABASE);
    let Ok((client, connection)) = config.connect(tokio_postgres::NoTls).await else {
        return false;
    };
    let driver = tokio::spawn(connection);
    let ok = client.simple_query("SELECT 1").await.is_ok();
    drop(client);
    let _ = driver.await;
    ok
}

impl NodeRecipe for PgOptions {
    fn binary(&self) -> &Path {
        &self.binary
    }

    fn package(&self) -> &'static str {
        PACKAGE
    }

    fn validate(&self) -> Result<(), String> {
        PgOptions::validate(self)
    }

    fn config_file(&self) -> &'static str {
        CONFIG_FILE
    }

    fn ready_timeout(&self) -> Duration {
        self.ready_timeout
    }

    fn write_config(&self, folder: &NodeFolder, port: u16) -> io::Result<()> {
        PgOptions::write_config(self, folder, port)
    }

    fn command(&self, folder: &NodeFolder) -> Command {
        PgOptions::command(self, folder)
    }

    fn probe(&self, addr: SocketAddr) -> BoxFuture<'static, bool> {
        Box::pin(pg_ready(addr, PROBE_TIMEOUT))
    }

    fn address_in_use(&self, output: &str) -> bool {
        address_in_use(output)
    }

    fn on_ready(&self, folder: &NodeFolder) {
        PgOptions::on_ready(self, folder)
    }

    fn promote(&self, addr: SocketAddr) -> BoxFuture<'static, Result<(), String>> {
        Box::pin(replica::promote(addr))
    }
}

impl From<PgOptions> for NodeKind {
    fn from(options: PgOptions) -> NodeKind {
        NodeKind::new(options)
    }
}
