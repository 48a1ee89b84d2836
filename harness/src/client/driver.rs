//! The loop one logical client runs: acquire → (read) → write with the token → hold → release,
//! recording every invocation and completion, retiring its process after an unknown outcome,
//! and stopping where the nemesis armed a pause or crash. With many locks each round picks
//! its lock from the client's seeded random stream, so a seed repeats the choice.

use super::broken::Broken;
use super::lock::{Connecting, Grant, LockClient, LockSession, Outcome};
use super::pause::{Interrupt, PausePoints};
use super::start_gate::StartGate;
use super::watchdog::Watchdog;
use crate::recorder::Recorder;
use crate::resource::Resource;
use crate::vocab::{Discipline, PausePoint, WorkloadKind, WorkloadSpec};
use lockpick_checker::history::{EventKind, Process, Value, F};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Everything one client needs.
pub struct ClientCtx {
    /// The logical client (0-based); its first process id is the same number.
    pub index: usize,
    pub recorder: Arc<Recorder>,
    /// The run's lock names ([`LockSpec::names`](crate::vocab::LockSpec::names)); every
    /// recorded operation names the one its round picked.
    pub locks: Arc<[String]>,
    pub workload: WorkloadSpec,
    pub acquire_timeout: Duration,
    pub watchdog: bool,
    /// Whether the client checks its lease before writing.
    pub discipline: Discipline,
    pub resource: Resource,
    pub points: Arc<PausePoints>,
    /// The next never-used process id, shared by all clients.
    pub next_process: Arc<AtomicU64>,
    pub seed: u64,
    /// Cancelled when the run's time is up or it is interrupted: no new operation starts.
    pub stop: CancellationToken,
    /// Cancelled on SIGINT/SIGTERM only: it also cuts a client pause short, so that an
    /// interrupted run ends (and is checked) whatever pause it is in.
    pub interrupt: CancellationToken,
    /// Where a client that broke the harness reports it; the run then stops with that error.
    pub broken: Arc<Broken>,
    /// The run's folder (adapter processes write their stderr under `clients/` there).
    pub run_dir: PathBuf,
    /// Where the client waits with its first session until every client has one.
    pub start: Arc<StartGate>,
}

/// What happened to the current process in one round.
enum Round {
    Continue,
    /// An operation ended in `info`: the process is retired.
    Retire,
    /// The nemesis crashed this client.
    Crashed,
}

struct Client<L: LockClient> {
    lock: Arc<L>,
    ctx: ClientCtx,
    process: u64,
    rng: ChaCha8Rng,
    /// The lock of the current round, an index into `ctx.locks`.
    current: usize,
}

/// Runs one logical client until `ctx.stop` is cancelled or the nemesis crashes it.
pub async fn run_client<L: LockClient>(lock: Arc<L>, ctx: ClientCtx) {
    let rng = ChaCha8Rng::seed_from_u64(
        ctx.seed ^ (ctx.index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
    );
    let process = ctx.index as u64;
    // An adapter session records a pause it takes inside a request itself.
    ctx.points.record_to(ctx.recorder.clone());
    let mut client = Client {
        lock,
        ctx,
        process,
        rng,
        current: 0,
    };
    client.run().await;
}

impl<L: LockClient> Client<L> {
    async fn run(&mut self) {
        let first = self.connect().await;
        // At the start line even without a session (the run stopped), so nobody waits for it.
        if !self.ctx.start.arrive(&self.ctx.stop).await {
            return;
        }
        let Some(mut session) = first else {
            return;
        };
        loop {
            let think = self.ctx.workload.think_ms.draw(&mut self.rng);
            if self.sleep_or_stop(think).await {
                return;
            }
            match self.round(&mut session).await {
                Round::Continue => {}
                Round::Crashed => return,
                Round::Retire => {
                    // Gone before its successor connects, as a process that gave up would
                    // be: kept while the new session is sought (seconds, when servers are
                    // down), a built-in ZooKeeper session went on pinging and kept its lock
                    // node alive, and every waiter starved behind it.
                    drop(session);
                    if self.stop_if_broken() {
                        return;
                    }
                    self.process = self.ctx.next_process.fetch_add(1, Ordering::SeqCst);
                    match self.connect().await {
                        Some(s) => session = s,
                        None => return,
                    }
                }
            }
        }
    }

    /// Opens a session, retrying until it works or the run stops.
    async fn connect(&mut self) -> Option<L::Session> {
        loop {
            if self.ctx.stop.is_cancelled() {
                return None;
            }
            let who = Connecting {
                client: self.ctx.index,
                process: self.process,
                seed: self.rng.random(),
                run_dir: self.ctx.run_dir.clone(),
            };
            match self.lock.connect_as(who, self.ctx.points.clone()).await {
                Ok(s) => return Some(s),
                Err(_) => {
                    if self.stop_if_broken() || self.sleep_or_stop(100).await {
                        return None;
                    }
                }
            }
        }
    }

    /// Reports a client that broke the harness, which stops the run; true if there was one.
    fn stop_if_broken(&self) -> bool {
        match self.lock.broken() {
            Some(error) => {
                self.ctx.broken.report(error);
                true
            }
            None => false,
        }
    }

    /// Sleeps `ms`; true if the run stopped meanwhile.
    async fn sleep_or_stop(&self, ms: u64) -> bool {
        tokio::select! {
            _ = self.ctx.stop.cancelled() => true,
            _ = tokio::time::sleep(Duration::from_millis(ms)) => self.ctx.stop.is_cancelled(),
        }
    }

    fn record(&self, kind: EventKind, f: F, value: Value, error: Option<String>) {
        self.ctx.recorder.record(
            Process::Client(self.process),
            kind,
            f,
            Some(&self.ctx.locks[self.current]),
            value,
            error,
        );
    }

    /// Records the completion of an operation; true if it retired the process.
    fn complete<T>(&self, f: F, outcome: &Outcome<T>, value: Value) -> bool {
        match outcome {
            Outcome::Ok(_) => {
                self.record(EventKind::Ok, f, value, None);
                false
            }
            Outcome::Fail(e) => {
                self.record(EventKind::Fail, f, value, Some(e.clone()));
                false
            }
            Outcome::Info(e) => {
                self.record(EventKind::Info, f, value, Some(e.clone()));
                true
            }
        }
    }

    /// One acquire … release round.
    async fn round(&mut self, session: &mut L::Session) -> Round {
        // One lock draws nothing, so single-lock runs keep the random stream they always had.
        if self.ctx.locks.len() > 1 {
            self.current = self.rng.random_range(0..self.ctx.locks.len());
            session.select_lock(self.current);
        }
        let holder = format!("{}-{:016x}", self.process, self.rng.random::<u64>());
        let lease_ms = self.lock.lease_ms();
        self.record(
            EventKind::Invoke,
            F::Acquire,
            Value {
                lease_ms,
                holder: Some(holder.clone()),
                ..Value::default()
            },
            None,
        );
        let deadline = Instant::now() + self.ctx.acquire_timeout;
        let outcome = tokio::select! {
            o = session.acquire(&holder, deadline) => o,
            _ = self.ctx.stop.cancelled() => Outcome::Info(lockpick_checker::history::RUN_ENDED.to_owned()),
        };
        let detail = session.last_detail();
        // A documented holder honours what the library tells it from the grant's reply on.
        let granted_at = Instant::now();
        let grant = match outcome {
            Outcome::Ok(grant) => grant,
            other => {
                let retire = self.complete(F::Acquire, &other, detail);
                return if retire {
                    Round::Retire
                } else {
                    Round::Continue
                };
            }
        };
        self.record(
            EventKind::Ok,
            F::Acquire,
            Value {
                token: grant.token,
                holder: Some(grant.holder.clone()),
                owner: grant.owner.clone(),
                lease_ms: grant.lease_ms,
                sent_ns: grant.request_sent.map(|at| {
                    at.saturating_duration_since(self.ctx.recorder.start())
                        .as_nanos() as u64
                }),
                ..detail
            },
            None,
        );

        // A library that claims no lease (`lease_ms` null) is renewed at the pace of the
        // lease lockpick asked for.
        let renewed = grant.lease_ms.or(lease_ms);
        let watchdog = (self.ctx.watchdog && renewed.is_some()).then(|| {
            Watchdog::start(
                session.clone(),
                Grant {
                    lease_ms: renewed,
                    ..grant.clone()
                },
                Process::Client(self.process),
                self.ctx.locks[self.current].clone(),
                self.ctx.recorder.clone(),
                self.ctx.points.clone(),
            )
        });
        let round = self.hold(&grant, session, granted_at).await;
        let renew_unknown = match watchdog {
            Some(w) => w.stop().await.unknown,
            None => false,
        };
        let round = match round {
            Round::Continue => self.release(session, &grant).await,
            other => other,
        };
        match round {
            Round::Continue if renew_unknown => Round::Retire,
            other => other,
        }
    }

    /// What the holder does with the lock, up to (not including) the release.
    async fn hold(&mut self, grant: &Grant, session: &L::Session, granted_at: Instant) -> Round {
        if self.interrupt(PausePoint::AfterAcquire).await {
            return Round::Crashed;
        }
        let int = match self.ctx.workload.kind {
            WorkloadKind::FencedWrite => None,
            WorkloadKind::Counter => {
                self.record(EventKind::Invoke, F::Read, Value::default(), None);
                let read = self.ctx.resource.read(self.current).await;
                let value = match &read {
                    Outcome::Ok(n) => Value {
                        int: Some(*n),
                        ..Value::default()
                    },
                    _ => Value::default(),
                };
                if self.complete(F::Read, &read, value) {
                    return Round::Retire;
                }
                match read {
                    Outcome::Ok(n) => Some(n + 1),
                    _ => return Round::Continue,
                }
            }
        };
        // A careful client checks its lease before using the lock; the GC pause that breaks
        // it comes after this check (point `before-write`). A trusting one writes because the
        // lock said it holds it, as a library's user does: a lock that grants an expired
        // lease then shows it.
        match (self.ctx.discipline, grant.lease_ms) {
            (Discipline::Careful, Some(lease)) => {
                if grant.sent_at.elapsed() >= Duration::from_millis(lease) {
                    return Round::Continue;
                }
            }
            // A documented one does what the library's docs say of a loss or suspension
            // notice: no write under a lock the library said it lost or may have lost.
            (Discipline::Documented, _) => {
                if session.told_since(granted_at).is_some() {
                    return Round::Continue;
                }
            }
            (Discipline::Careful | Discipline::Trusting, _) => {}
        }
        if self.interrupt(PausePoint::BeforeWrite).await {
            return Round::Crashed;
        }
        self.record(
            EventKind::Invoke,
            F::Write,
            Value {
                token: grant.token,
                int,
                ..Value::default()
            },
            None,
        );
        let (written, max_token) = match self
            .ctx
            .resource
            .write(self.current, grant.token, int)
            .await
        {
            Outcome::Ok(ack) if ack.accepted => (Outcome::Ok(()), ack.max_token),
            Outcome::Ok(ack) => (Outcome::Fail("stale-token".to_owned()), ack.max_token),
            Outcome::Fail(e) => (Outcome::Fail(e), None),
            Outcome::Info(e) => (Outcome::Info(e), None),
        };
        let value = Value {
            token: grant.token,
            max_token,
            int,
            ..Value::default()
        };
        if self.complete(F::Write, &written, value) {
            return Round::Retire;
        }
        let hold = Duration::from_millis(self.ctx.workload.hold_ms.draw(&mut self.rng));
        if self.ctx.discipline == Discipline::Documented {
            // Told it lost the lock (or may have), a documented holder gives it up at once
            // rather than at the end of its hold.
            let until = tokio::time::Instant::now() + hold;
            loop {
                if session.told_since(granted_at).is_some() {
                    return Round::Continue;
                }
                tokio::select! {
                    _ = tokio::time::sleep_until(until) => break,
                    _ = session.notice_sent() => {}
                }
            }
        } else {
            tokio::time::sleep(hold).await;
        }
        if self.interrupt(PausePoint::BeforeRelease).await {
            return Round::Crashed;
        }
        Round::Continue
    }

    async fn release(&mut self, session: &mut L::Session, grant: &Grant) -> Round {
        self.record(
            EventKind::Invoke,
            F::Release,
            Value {
                holder: Some(grant.holder.clone()),
                token: grant.token,
                ..Value::default()
            },
            None,
        );
        let released = session.release(grant).await;
        if self.complete(F::Release, &released, Value::default()) {
            Round::Retire
        } else {
            Round::Continue
        }
    }

    /// Takes an interrupt armed for `point`: pauses in place, or reports a crash (true).
    async fn interrupt(&mut self, point: PausePoint) -> bool {
        let Some(interrupt) = self.ctx.points.take(point) else {
            return false;
        };
        let nemesis = |f: F, value: Value| {
            self.ctx
                .recorder
                .record(Process::Nemesis, EventKind::Info, f, None, value, None);
        };
        match interrupt {
            Interrupt::Pause { ms } => {
                nemesis(
                    F::Pause,
                    Value {
                        client: Some(self.process),
                        point: Some(point.name().to_owned()),
                        ms: Some(ms),
                        ..Value::default()
                    },
                );
                self.ctx.points.set_paused(true);
                // Not cut short by the end of the run: the pause is the experiment. An
                // interrupt does cut it: the user wants the run to end now, and the resume
                // says so, so nobody reads the shorter pause as the scenario's.
                let paused = Instant::now();
                let cut = tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(ms)) => false,
                    _ = self.ctx.interrupt.cancelled() => true,
                };
                self.ctx.points.set_paused(false);
                nemesis(
                    F::Resume,
                    Value {
                        client: Some(self.process),
                        note: cut.then(|| {
                            format!(
                                "cut short by the interrupt after {} of {ms} ms",
                                paused.elapsed().as_millis()
                            )
                        }),
                        ..Value::default()
                    },
                );
                false
            }
            // Never armed for the loop's points: an adapter session takes it inside a request.
            Interrupt::PauseInside(_) => false,
            Interrupt::Crash => {
                nemesis(
                    F::Crash,
                    Value {
                        client: Some(self.process),
                        point: Some(point.name().to_owned()),
                        ..Value::default()
                    },
                );
                true
            }
        }
    }
}
