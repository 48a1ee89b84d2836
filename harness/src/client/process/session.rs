//! One adapter process as a lock session: requests written to its stdin, replies read from
//! its stdout with a time limit that does not count the time it spent stopped (a GC pause),
//! SIGSTOP/SIGCONT on the client's pauses, SIGKILL when the session is dropped (the process
//! was retired or crashed, or the run ended). A protocol 2 adapter may also write event lines
//! unasked (what its library told it): read while a request waits for its reply, and between
//! requests by a reader task, each recorded in the history (`notice`) as it arrives.

use super::codec::{
    self, Init, InitSentinels, Notice, Op, Parsed, Reply, OLDEST_PROTOCOL_VERSION, PROTOCOL_VERSION,
};
use super::inside::{pause_inside, Request};
use super::spawn::{hello_path, spawn_adapter, stderr_path};
use super::Config;
use crate::client::adapter_error::{tail, AdapterError};
use crate::client::lock::{Connecting, Grant, LockSession, Outcome, Told};
use crate::client::pause::{PauseHook, PausePoints};
use crate::processes::Child;
use lockpick_checker::history::{EventKind, Process, Value, F};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::Notify;

/// How many stderr lines an error quotes.
const STDERR_TAIL_LINES: usize = 20;
/// How long to wait for an adapter that closed its stdout to be reaped, for its exit status.
const EXIT_WAIT: Duration = Duration::from_millis(500);

/// One adapter process; cloned for the watchdog (requests are serialized by the lock).
#[derive(Clone)]
pub struct ProcessSession {
    shared: Arc<Shared>,
    io: Arc<tokio::sync::Mutex<Pipes>>,
    /// Extra history fields of the last acquire (the adapter's `note`).
    detail: Arc<Mutex<Value>>,
    /// Told before a request takes the pipes: the reader of unasked lines lets go of them.
    wanted: Arc<Notify>,
}

struct Shared {
    config: Arc<Config>,
    who: Connecting,
    /// Killed when the last clone of the session goes.
    child: Child,
    clock: Arc<PauseClock>,
    /// Registered on the client's pause points; lives as long as the session.
    _hook: Arc<PauseHook>,
    /// The client's pause points, for a pause inside a request.
    points: Arc<PausePoints>,
    /// The adapter's processes below the one lockpick spawned, listed once it answered init:
    /// a stop reaches them at once ([`crate::processes::signal_child_known`]).
    tree: Arc<Mutex<Vec<u32>>>,
    renew: bool,
    broken: Arc<Mutex<Option<AdapterError>>>,
    /// The adapter's hello, once checked: which events it may send.
    hello: OnceLock<codec::Hello>,
    /// The latest notices the library sent this process, with when they came (at most
    /// [`KEPT_NOTICES`]): what a documented holder honours before it writes.
    notices: Mutex<std::collections::VecDeque<(String, Instant)>>,
    /// Woken at each notice.
    notice_sent: Arc<Notify>,
}

/// Notices kept per process for [`LockSession::told_since`]: a holding asks only about those
/// since its grant, a few at most.
const KEPT_NOTICES: usize = 32;

struct Pipes {
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    /// A request was sent and its reply not read (its caller gave up): the pipe is out of
    /// step, nothing more may be asked.
    in_flight: bool,
    /// The start of a line not yet complete (reads of stdout may be cut short between
    /// requests, `read_until` keeps what it read here).
    partial: Vec<u8>,
    /// A protocol break found between requests, reported by the next request.
    stray: Option<AdapterError>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        // Fails only if it already exited; the reaper thread reaps it either way.
        let _ = self.child.signal(libc::SIGKILL);
    }
}

/// How long the adapter has been stopped, so its replies' time limits leave that time out.
#[derive(Default)]
struct PauseClock {
    state: Mutex<(Option<Instant>, Duration)>,
}

impl PauseClock {
    fn set(&self, paused: bool) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match (paused, state.0) {
            (true, None) => state.0 = Some(Instant::now()),
            (false, Some(since)) => {
                state.0 = None;
                state.1 += since.elapsed();
            }
            _ => {}
        }
    }

    /// Total time stopped so far, and whether it is stopped now.
    fn stopped(&self) -> (Duration, bool) {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let current = state.0.map(|since| since.elapsed()).unwrap_or_default();
        (state.1 + current, state.0.is_some())
    }
}

/// Why waiting for a line ended without one.
enum NoLine {
    Timeout,
    Broke(AdapterError),
}

impl ProcessSession {
    /// Spawns the adapter, sends `init` and checks its hello.
    pub(super) async fn start(
        config: Arc<Config>,
        broken: Arc<Mutex<Option<AdapterError>>>,
        who: Connecting,
        points: &Arc<PausePoints>,
    ) -> Result<ProcessSession, AdapterError> {
        let spawned = spawn_adapter(&config, &who).await?;
        let child = spawned.child;
        let pipes = (|| {
            let stdin = ChildStdin::from_std(spawned.stdin?).ok()?;
            let stdout = ChildStdout::from_std(spawned.stdout?).ok()?;
            Some(Pipes {
                stdin,
                stdout: BufReader::new(stdout),
                next_id: 1,
                in_flight: false,
                partial: Vec::new(),
                stray: None,
            })
        })();
        let clock = Arc::new(PauseClock::default());
        let tree: Arc<Mutex<Vec<u32>>> = Arc::default();
        let hook: Arc<PauseHook> = {
            let clock = clock.clone();
            let tree = tree.clone();
            let pid = child.pid();
            Arc::new(move |paused| {
                clock.set(paused);
                let signal = if paused { libc::SIGSTOP } else { libc::SIGCONT };
                let known = tree.lock().unwrap_or_else(|p| p.into_inner()).clone();
                // A retired adapter's hook may outlive its process by a moment: the registry
                // refuses to signal a pid that is not a live child of ours.
                let _ = crate::processes::signal_child_known(pid, &known, signal);
            })
        };
        points.on_pause(&hook);
        let shared = Arc::new(Shared {
            config,
            who,
            child,
            clock,
            _hook: hook,
            points: points.clone(),
            tree: tree.clone(),
            renew: false,
            broken,
            hello: OnceLock::new(),
            notices: Mutex::default(),
            notice_sent: Arc::default(),
        });
        let Some(mut pipes) = pipes else {
            return Err(shared.broke("its pipes could not be set up", None));
        };
        let hello = shared.hello(&mut pipes).await?;
        *tree.lock().unwrap_or_else(|p| p.into_inner()) =
            crate::processes::descendants(shared.child.pid());
        let mut shared = shared;
        if let Some(s) = Arc::get_mut(&mut shared) {
            s.renew = hello.ops.iter().any(|op| op == "renew");
        }
        let io = Arc::new(tokio::sync::Mutex::new(pipes));
        let wanted = Arc::new(Notify::new());
        if hello.events.as_ref().is_some_and(|e| !e.is_empty()) {
            tokio::spawn(read_unasked(
                Arc::downgrade(&shared),
                io.clone(),
                wanted.clone(),
            ));
        }
        Ok(ProcessSession {
            shared,
            io,
            detail: Arc::default(),
            wanted,
        })
    }

    /// Sends `op` and waits for its reply: `limit` counts time the adapter ran, not the time
    /// it was stopped. A protocol break is kept for the driver and ends the operation `info`.
    async fn request(&self, op: Op, holder: &str, limit: Duration) -> Outcome<Reply> {
        self.wanted.notify_one();
        let mut pipes = self.io.lock().await;
        if let Some(e) = pipes.stray.take() {
            pipes.in_flight = true;
            return self.shared.keep(e);
        }
        if pipes.in_flight {
            return Outcome::Info("adapter-out-of-step".to_owned());
        }
        let id = pipes.next_id;
        pipes.next_id += 1;
        let line = codec::request_line(op, id, holder);
        let verb = op_verb(op);
        let inside = self.shared.points.take_inside(verb);
        pipes.in_flight = true;
        let (stopped_before, _) = self.shared.clock.stopped();
        if let Err(e) = write_line(&mut pipes.stdin, &line).await {
            let broke = self
                .shared
                .broke_after_exit(&format!("its stdin closed ({e}) before {}", op.name()))
                .await;
            return self.shared.keep(broke);
        }
        let sent = Instant::now();
        if let Some(inside) = inside {
            let request = Request {
                points: &self.shared.points,
                pids: self.shared.stop_pids(),
                process: self.shared.who.process,
                op: verb,
                id,
                fd: pipes.stdout.get_ref().as_raw_fd(),
                buffered: !pipes.stdout.buffer().is_empty() || !pipes.partial.is_empty(),
                sent,
            };
            pause_inside(request, inside).await;
        }
        let waiting = format!("its reply to {}", op.name());
        let Pipes {
            stdout, partial, ..
        } = &mut *pipes;
        let line = match self
            .shared
            .read_line(stdout, partial, limit, &waiting)
            .await
        {
            Ok(line) => line,
            Err(NoLine::Timeout) => return Outcome::Info("timeout".to_owned()),
            Err(NoLine::Broke(e)) => return self.shared.keep(e),
        };
        let reply = match codec::parse_line(&line) {
            Ok(Parsed::Reply(reply)) => reply,
            Ok(Parsed::Hello(_)) => {
                let e = self
                    .shared
                    .broke("it sent a second hello", Some(line.clone()));
                return self.shared.keep(e);
            }
            // `read_line` records event lines and reads on.
            Ok(Parsed::Event(_)) => unreachable!("read_line takes event lines"),
            Err(what) => {
                let e = self.shared.broke(&what, Some(line.clone()));
                return self.shared.keep(e);
            }
        };
        if reply.id() != id {
            let what = format!(
                "its reply carries id {} but the {} it answers had id {id}",
                reply.id(),
                op.name()
            );
            let e = self.shared.broke(&what, Some(line));
            return self.shared.keep(e);
        }
        pipes.in_flight = false;
        // Timed only when nothing stopped the adapter meanwhile: the range of a pause inside
        // the next such request.
        let (stopped_after, _) = self.shared.clock.stopped();
        if stopped_after == stopped_before {
            self.shared.points.note_duration(verb, sent.elapsed());
        }
        Outcome::Ok(reply)
    }
}

/// The history verb of a request.
fn op_verb(op: Op) -> F {
    match op {
        Op::Acquire => F::Acquire,
        Op::Release => F::Release,
        Op::Renew => F::Renew,
    }
}

impl Shared {
    /// The processes whose state shows that a stop took hold: the adapter's (below the
    /// namespace's `unshare`), or the spawned one if it has none.
    fn stop_pids(&self) -> Vec<u32> {
        let tree = self.tree.lock().unwrap_or_else(|p| p.into_inner());
        if tree.is_empty() {
            vec![self.child.pid()]
        } else {
            tree.clone()
        }
    }

    /// Sends `init`, reads and checks the hello.
    async fn hello(&self, pipes: &mut Pipes) -> Result<codec::Hello, AdapterError> {
        let config = &self.config;
        let params = &config.params;
        let init = Init {
            kind: "init",
            id: 0,
            protocol: OLDEST_PROTOCOL_VERSION,
            newest_protocol: PROTOCOL_VERSION,
            nodes: config.nodes.iter().map(ToString::to_string).collect(),
            lock: params.lock.clone(),
            ttl_ms: params.ttl_ms,
            acquire_timeout_ms: params.acquire_timeout_ms,
            retry_delay_ms: [params.retry_delay.min, params.retry_delay.max],
            op_timeout_ms: params.op_timeout_ms,
            client: self.who.client,
            process: self.who.process,
            seed: self.who.seed,
            extra: config.spec.extra.clone(),
            sentinels: config.sentinels.as_ref().map(|s| InitSentinels {
                master: s.master.clone(),
                addrs: s.addrs.iter().map(ToString::to_string).collect(),
                nat: s
                    .nat
                    .iter()
                    .map(|(named, proxy)| (named.to_string(), proxy.to_string()))
                    .collect(),
            }),
        };
        if let Err(e) = write_line(&mut pipes.stdin, &codec::init_line(&init)).await {
            return Err(self
                .broke_after_exit(&format!("its stdin closed ({e}) before init"))
                .await);
        }
        let line = match self
            .read_line(
                &mut pipes.stdout,
                &mut pipes.partial,
                config.start_timeout,
                "its hello (the answer to init; no other request was sent)",
            )
            .await
        {
            Ok(line) => line,
            Err(NoLine::Broke(e)) => return Err(e),
            Err(NoLine::Timeout) => {
                let what = format!(
                    "it did not answer init within {} ms",
                    config.start_timeout.as_millis()
                );
                return Err(self.broke(&what, None));
            }
        };
        let hello =
            match codec::parse_line(&line) {
                Ok(Parsed::Hello(hello)) => hello,
                Ok(Parsed::Reply(Reply::Fail { id: 0, reason })) => {
                    return Err(AdapterError::RefusedInit {
                        client: self.who.client,
                        command: self.config.spec.command_line(),
                        reason,
                    })
                }
                Ok(Parsed::Reply(Reply::Info { id: 0, reason })) => {
                    let stderr = stderr_path(&self.who.run_dir, self.who.process);
                    return Err(AdapterError::StartFailed {
                        client: self.who.client,
                        process: self.who.process,
                        command: self.config.spec.command_line(),
                        reason,
                        stderr_tail: tail(&stderr, STDERR_TAIL_LINES),
                        stderr,
                    });
                }
                Ok(Parsed::Reply(_)) => return Err(self.broke(
                    "it answered init with a reply, not a hello (or a `fail` or `info` with id 0)",
                    Some(line),
                )),
                Ok(Parsed::Event(_)) => unreachable!("read_line takes event lines"),
                Err(what) => return Err(self.broke(&what, Some(line))),
            };
        let problem = if hello.id != 0 {
            Some(format!("its hello carries id {}, init had id 0", hello.id))
        } else if let Some(problem) = codec::hello_problem(&hello) {
            Some(problem)
        } else if let Some(op) = hello
            .ops
            .iter()
            .find(|op| !["acquire", "release", "renew"].contains(&op.as_str()))
        {
            Some(format!(
                "its hello names op {op:?}; allowed: acquire, release, renew"
            ))
        } else if !["acquire", "release"]
            .iter()
            .all(|op| hello.ops.iter().any(|o| o == op))
        {
            Some("its hello must list both acquire and release in ops".to_owned())
        } else if params.watchdog && !hello.ops.iter().any(|o| o == "renew") {
            Some(format!(
                "the scenario sets `watchdog = true` but {} {} cannot renew (its ops: {})",
                hello.library,
                hello.version,
                hello.ops.join(", ")
            ))
        } else {
            None
        };
        match problem {
            Some(what) => Err(self.broke(&what, Some(line))),
            None => {
                record_hello(&self.who.run_dir, &line);
                let _ = self.hello.set(hello.clone());
                Ok(hello)
            }
        }
    }

    /// Reads one line within `limit` of the adapter's running time; event lines met on the
    /// way are checked and recorded, and the wait goes on for the line asked for.
    async fn read_line(
        &self,
        stdout: &mut BufReader<ChildStdout>,
        partial: &mut Vec<u8>,
        limit: Duration,
        waiting: &str,
    ) -> Result<String, NoLine> {
        let started = Instant::now();
        let (stopped_before, _) = self.clock.stopped();
        let mut deadline = started + limit;
        loop {
            let read = stdout.read_until(b'\n', partial);
            tokio::pin!(read);
            let read = loop {
                match tokio::time::timeout_at(deadline.into(), &mut read).await {
                    Ok(read) => break read,
                    Err(_) => {
                        let (stopped, now_stopped) = self.clock.stopped();
                        let extended = started + limit + (stopped - stopped_before);
                        let now = Instant::now();
                        if now_stopped {
                            deadline = now + Duration::from_millis(10);
                        } else if extended > now {
                            deadline = extended;
                        } else {
                            return Err(NoLine::Timeout);
                        }
                    }
                }
            };
            match read {
                Ok(0) => {
                    return Err(NoLine::Broke(
                        self.broke_after_exit(&format!(
                            "it closed its stdout while lockpick waited for {waiting}"
                        ))
                        .await,
                    ))
                }
                Ok(_) => {
                    let line = take_line(partial);
                    match self.take_event(&line) {
                        Ok(true) => continue,
                        Ok(false) => return Ok(line),
                        Err(e) => return Err(NoLine::Broke(*e)),
                    }
                }
                Err(e) => {
                    return Err(NoLine::Broke(
                        self.broke(&format!("its stdout could not be read ({e})"), None),
                    ))
                }
            }
        }
    }

    /// If `line` is an event line: checks it against the hello and records it in the history
    /// (true), or says how it broke the protocol. False for any other line.
    fn take_event(&self, line: &str) -> Result<bool, Box<AdapterError>> {
        let Ok(Parsed::Event(notice)) = codec::parse_line(line) else {
            return Ok(false);
        };
        let Some(hello) = self.hello.get() else {
            return Err(Box::new(self.broke(
                "it sent an event line before its hello (events may come only after the hello that declares them)",
                Some(line.to_owned()),
            )));
        };
        if let Some(what) = codec::notice_problem(hello, &notice) {
            return Err(Box::new(self.broke(&what, Some(line.to_owned()))));
        }
        self.record_notice(&notice);
        Ok(true)
    }

    /// The library told this process something: one `notice` in the history, now. A notice
    /// before the workload starts (the library connecting, a server still settling after a
    /// reset) is about no holding and no part of the history: it is left out.
    fn record_notice(&self, notice: &Notice) {
        if !self.points.recorder().is_some_and(|r| r.started()) {
            return;
        }
        {
            let mut kept = self.notices.lock().unwrap_or_else(|p| p.into_inner());
            if kept.len() == KEPT_NOTICES {
                kept.pop_front();
            }
            kept.push_back((notice.event.clone(), Instant::now()));
        }
        self.notice_sent.notify_waiters();
        let Some(recorder) = self.points.recorder() else {
            return;
        };
        recorder.record(
            Process::Client(self.who.process),
            EventKind::Info,
            F::Notice,
            Some(&self.config.params.lock),
            Value {
                token: notice.token,
                event: Some(notice.event.clone()),
                note: notice.reason.clone(),
                ..Value::default()
            },
            None,
        );
    }

    /// A protocol break by this adapter.
    fn broke(&self, what: &str, line: Option<String>) -> AdapterError {
        let stderr = stderr_path(&self.who.run_dir, self.who.process);
        AdapterError::Broke {
            client: self.who.client,
            process: self.who.process,
            command: self.config.spec.command_line(),
            what: what.to_owned(),
            line,
            stderr_tail: tail(&stderr, STDERR_TAIL_LINES),
            stderr,
        }
    }

    /// A break by an adapter that probably exited: says how, once it is reaped, and what to
    /// install only when its stderr shows that something is missing.
    async fn broke_after_exit(&self, what: &str) -> AdapterError {
        let exit = tokio::time::timeout(EXIT_WAIT, self.child.wait()).await;
        let what = match exit {
            Ok(how) => {
                let stderr = stderr_path(&self.who.run_dir, self.who.process);
                let text = std::fs::read_to_string(stderr).unwrap_or_default();
                let program = self.config.spec.command.first().map_or("", String::as_str);
                match missing_package(&text, program) {
                    Some(hint) => format!("{what} (it exited: {how}; {hint})"),
                    None => format!("{what} (it exited: {how})"),
                }
            }
            Err(_) => what.to_owned(),
        };
        self.broke(&what, None)
    }

    /// Keeps `error` for the driver (the run stops with it) and ends the operation `info`.
    fn keep<T>(&self, error: AdapterError) -> Outcome<T> {
        self.broken
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(error);
        Outcome::Info("protocol-error".to_owned())
    }
}

/// What an adapter's stderr `text` says is missing (a module, a package, the right to make its
/// PID namespace), and how to get it, if it says so; `program` is the interpreter it ran under.
fn missing_package(text: &str, program: &str) -> Option<String> {
    let quoted = |after: &str| {
        let rest = &text[text.find(after)? + after.len()..];
        let name = rest.split(['\'', '"']).next()?;
        (!name.is_empty()).then(|| name.to_owned())
    };
    if text.contains("unshare failed") {
        return Some(
            "this system does not let lockpick make the PID namespace each adapter runs in (so \
             that nothing it starts outlives lockpick): in a container, allow `unshare` (e.g. \
             `docker run --cap-add SYS_ADMIN`, or a seccomp profile that permits it); not as \
             root, enable unprivileged user namespaces (`sysctl kernel.unprivileged_userns_clone=1`)"
                .to_owned(),
        );
    }
    if let Some(module) = quoted("No module named '") {
        let top = module.split('.').next().unwrap_or(&module).to_owned();
        return Some(format!(
            "the Python module `{top}` is not installed for {program}: the shipped adapters run \
             clients/python/.venv/bin/python, which `bash scripts/setup` makes; for your own \
             adapter, install it into the interpreter you run (`{program} -m pip install ...`) \
             or run that venv's python"
        ));
    }
    if let Some(module) = quoted("Cannot find module '") {
        if module.starts_with(['/', '.']) {
            return Some(format!("the file {module} does not exist"));
        }
        return Some(format!(
            "the Node module `{module}` is not installed: run `npm ci` (or `npm install`) in \
             the adapter's folder, beside its package.json; `bash scripts/setup` does it for \
             the shipped adapters"
        ));
    }
    None
}

/// The complete line read into `partial` (lossy if it is not UTF-8: the parser then names
/// what is wrong), without its newline; `partial` is left empty.
fn take_line(partial: &mut Vec<u8>) -> String {
    let bytes = std::mem::take(partial);
    String::from_utf8_lossy(&bytes)
        .trim_end_matches(['\n', '\r'])
        .to_owned()
}

/// Reads what an adapter writes while no request waits for a reply: event lines are recorded
/// as they come; any other line is a break, reported by the next request. Lets go of the
/// pipes whenever a request wants them (`wanted`), and ends with the session (or at the
/// adapter's end of output, which the next request reports).
async fn read_unasked(
    shared: Weak<Shared>,
    io: Arc<tokio::sync::Mutex<Pipes>>,
    wanted: Arc<Notify>,
) {
    loop {
        let mut guard = io.lock().await;
        let pipes = &mut *guard;
        if pipes.in_flight || pipes.stray.is_some() {
            return;
        }
        let read = tokio::select! {
            biased;
            _ = wanted.notified() => None,
            read = pipes.stdout.read_until(b'\n', &mut pipes.partial) => Some(read),
        };
        let Some(read) = read else {
            drop(guard);
            tokio::task::yield_now().await;
            continue;
        };
        let Some(shared) = shared.upgrade() else {
            return;
        };
        match read {
            Ok(n) if n > 0 && pipes.partial.ends_with(b"\n") => {
                let line = take_line(&mut pipes.partial);
                match shared.take_event(&line) {
                    Ok(true) => {}
                    Ok(false) => {
                        pipes.stray = Some(shared.broke(
                            "it wrote a line while no request was in flight (only event lines may come unasked, protocol 2)",
                            Some(line),
                        ))
                    }
                    Err(e) => pipes.stray = Some(*e),
                }
            }
            // End of output or a read error: the next request meets it and says so.
            _ => return,
        }
    }
}

async fn write_line(stdin: &mut ChildStdin, line: &str) -> std::io::Result<()> {
    stdin.write_all(line.as_bytes()).await?;
    stdin.write_all(b"\n").await?;
    stdin.flush().await
}

impl ProcessSession {
    /// The stderr file of this session's process.
    pub fn stderr_path(&self) -> PathBuf {
        stderr_path(&self.shared.who.run_dir, self.shared.who.process)
    }

    /// The adapter's pid (tests check that it is gone after the session).
    pub fn pid(&self) -> u32 {
        self.shared.child.pid()
    }

    fn op_limit(&self) -> Duration {
        Duration::from_millis(self.shared.config.params.op_timeout_ms)
    }

    /// `ok`/`fail`/`info` of a release or renew.
    async fn simple(&self, op: Op, grant: &Grant) -> Outcome<()> {
        self.request(op, &grant.holder, self.op_limit())
            .await
            .and_then(|reply| match reply {
                Reply::Ok { .. } => Outcome::Ok(()),
                Reply::Fail { reason, .. } => Outcome::Fail(reason),
                Reply::Info { reason, .. } => Outcome::Info(reason),
            })
    }
}

impl LockSession for ProcessSession {
    async fn acquire(&mut self, holder: &str, deadline: Instant) -> Outcome<Grant> {
        let limit = deadline.saturating_duration_since(Instant::now()) + self.op_limit();
        let reply = self.request(Op::Acquire, holder, limit).await;
        reply.and_then(|reply| match reply {
            Reply::Ok {
                token,
                lease_ms,
                note,
                owner,
                ..
            } => {
                *self.detail.lock().unwrap_or_else(|p| p.into_inner()) = Value {
                    note,
                    ..Value::default()
                };
                Outcome::Ok(Grant {
                    token,
                    holder: holder.to_owned(),
                    lease_ms,
                    // The adapter reports the lease left when it replied.
                    sent_at: Instant::now(),
                    // The library's requests are its own.
                    request_sent: None,
                    owner,
                })
            }
            Reply::Fail { reason, .. } => Outcome::Fail(reason),
            Reply::Info { reason, .. } => Outcome::Info(reason),
        })
    }

    async fn release(&mut self, grant: &Grant) -> Outcome<()> {
        self.simple(Op::Release, grant).await
    }

    async fn renew(&mut self, grant: &Grant) -> Outcome<()> {
        if !self.shared.renew {
            return Outcome::Fail("renew-unsupported".to_owned());
        }
        self.simple(Op::Renew, grant).await
    }

    fn last_detail(&mut self) -> Value {
        std::mem::take(&mut *self.detail.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn notice_sent(&self) -> impl std::future::Future<Output = ()> + Send {
        let sent = self.shared.notice_sent.clone();
        async move { sent.notified().await }
    }

    fn told_since(&self, since: Instant) -> Option<Told> {
        let kept = self
            .shared
            .notices
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        Told::from_notices(
            kept.iter()
                .filter(|(_, at)| *at >= since)
                .map(|(e, _)| e.as_str()),
        )
    }
}

/// Keeps the first hello of a run (`clients/hello.json`: which library and version ran, as the
/// adapter read them from what is installed) for the run's readers. Every process of a run
/// runs the same adapter, so the first one is the run's; a failure to write loses only that.
fn record_hello(run_dir: &std::path::Path, line: &str) {
    use std::io::Write as _;
    let path = hello_path(run_dir);
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
    {
        let _ = writeln!(file, "{}", line.trim_end());
    }
}

#[cfg(test)]
mod tests {
    use super::missing_package;

    #[test]
    fn only_a_missing_module_or_package_in_the_stderr_gets_install_advice() {
        let python = "Traceback (most recent call last):\nModuleNotFoundError: No module named 'redis.asyncio'\n";
        let hint = missing_package(python, "python3").unwrap();
        assert!(
            hint.starts_with("the Python module `redis` is not installed for python3"),
            "{hint}"
        );
        let node = "Error: Cannot find module 'ioredis'\nRequire stack:\n";
        assert!(missing_package(node, "node")
            .unwrap()
            .contains("`ioredis` is not installed: run `npm ci`"));
        let script = "Error: Cannot find module '/tmp/x/adapter.js'\n";
        assert_eq!(
            missing_package(script, "node").unwrap(),
            "the file /tmp/x/adapter.js does not exist"
        );
        let denied = "unshare: unshare failed: Operation not permitted\n";
        assert!(missing_package(denied, "node")
            .unwrap()
            .contains("PID namespace"));
        // An adapter that worked and then failed says nothing about installing.
        assert_eq!(
            missing_package("adapter: release raised ConnectionError\n", "python3"),
            None
        );
    }
}
