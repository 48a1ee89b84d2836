//! Standalone reproduction: redlock 2.0.0's `validity_time` underflows when one try takes longer
//! than the TTL. Three masters (quorum 2); master 3 is put to sleep with `DEBUG SLEEP` just
//! before client 1's `lock()`, so that try SETs masters 1 and 2 at once and waits ~2 s on
//! master 3, longer than the 1000 ms TTL. A release build grants that try with a wrapped
//! validity (~2^64 ms) although its keys on masters 1 and 2 have expired, and client 2 is then
//! granted the same resource. A debug build panics in `lock()` instead (badboy/redlock-rs#20).
//!
//! Usage: redlock-wrap-repro PORT1 PORT2 PORT3 (three redis-servers on 127.0.0.1 with
//! `enable-debug-command` on). Exit 1 when the bug shows, 0 when it does not.

use redlock::RedLock;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::exit;
use std::time::{Duration, Instant};

const RESOURCE: &[u8] = b"repro-resource";
const TTL_MS: usize = 1000;
const SLEEP_S: u32 = 2;

fn now(t0: Instant) -> String {
    format!("{:>6.3} s", t0.elapsed().as_secs_f64())
}

/// PTTL of the resource on one master, and whether it still holds `val` there.
fn key_state(uri: &str, val: &[u8]) -> String {
    let mut con = redis::Client::open(uri).unwrap().get_connection().unwrap();
    let pttl: i64 = redis::cmd("PTTL").arg(RESOURCE).query(&mut con).unwrap();
    let owner: Option<Vec<u8>> = redis::cmd("GET").arg(RESOURCE).query(&mut con).unwrap();
    match owner {
        None => "key gone (expired)".to_string(),
        Some(v) if v == val => format!("key held by this lock, PTTL {pttl} ms"),
        Some(_) => format!("key held by another lock, PTTL {pttl} ms"),
    }
}

fn main() {
    let ports: Vec<String> = std::env::args().skip(1).collect();
    assert_eq!(
        ports.len(),
        3,
        "usage: redlock-wrap-repro PORT1 PORT2 PORT3"
    );
    let uris: Vec<String> = ports
        .iter()
        .map(|p| format!("redis://127.0.0.1:{p}/"))
        .collect();
    let build = if cfg!(debug_assertions) {
        "debug (overflow checks on)"
    } else {
        "release (overflow checks off)"
    };
    println!("build: {build}; masters: {}", uris.join(" "));
    println!("TTL {TTL_MS} ms; drift = {TTL_MS} * 0.01 + 2 = 12 ms; master 3 sleeps {SLEEP_S} s");

    // Master 3 falls asleep: DEBUG SLEEP on a connection of its own, in a thread.
    let t0 = Instant::now();
    let mut sleeper_con = redis::Client::open(uris[2].as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let sleeper = std::thread::spawn(move || {
        let r: redis::RedisResult<redis::Value> = redis::cmd("DEBUG")
            .arg("SLEEP")
            .arg(SLEEP_S)
            .query(&mut sleeper_con);
        r.map(|_| ())
    });
    // Wait until it is asleep for sure: a PING with a 100 ms read timeout gets no answer
    // (probes 10 ms apart, for at most about 1 s: the thread may not have sent DEBUG yet).
    let mut asleep = false;
    for _ in 0..100 {
        // A raw socket: redis-rs's get_connection() itself waits for a reply (CLIENT SETINFO).
        let mut probe =
            TcpStream::connect(("127.0.0.1", ports[2].parse::<u16>().unwrap())).unwrap();
        probe
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        probe.write_all(b"PING\r\n").unwrap();
        let mut buf = [0u8; 16];
        if probe.read(&mut buf).is_err() {
            asleep = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    if !asleep {
        println!("not reproduced: master 3 never went to sleep (is enable-debug-command on?)");
        exit(0);
    }
    println!(
        "[{}] master 3 is asleep (a PING to it timed out); client 1 calls lock()",
        now(t0)
    );

    let rl1 = RedLock::new(uris.clone());
    let started = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(|| rl1.lock(RESOURCE, TTL_MS)));
    let took = started.elapsed();
    sleeper.join().unwrap().expect("DEBUG SLEEP");
    match result {
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            println!(
                "[{}] client 1: lock() panicked after {} ms: {msg}",
                now(t0),
                took.as_millis()
            );
            println!(
                "BUG REPRODUCED: in a debug build, a try slower than the TTL panics in lock() \
                 ('{msg}', redlock.rs:152) instead of being refused (the panic upstream #20 reports)"
            );
            exit(1);
        }
        Ok(Err(e)) => {
            println!("not reproduced: client 1's lock() returned an error: {e}");
            exit(0);
        }
        Ok(Ok(None)) => {
            println!(
                "not reproduced: client 1's lock() refused the slow try ({} ms): None",
                took.as_millis()
            );
            exit(0);
        }
        Ok(Ok(Some(lock1))) => {
            let v = lock1.validity_time;
            println!(
                "[{}] client 1: lock() -> Some(Lock), validity_time = {v} ms (try took {} ms)",
                now(t0),
                took.as_millis()
            );
            if v <= TTL_MS {
                println!("not reproduced: the validity is sane ({v} ms), not wrapped");
                exit(0);
            }
            let years = v as f64 / 1000.0 / 3600.0 / 24.0 / 365.25;
            println!(
                "           = 2^64 - {} ms, about {:.0} million years; \
                 {TTL_MS} - 12 - {} = {} in real arithmetic",
                u64::MAX as u128 + 1 - v as u128,
                years / 1e6,
                took.as_millis(),
                TTL_MS as i64 - 12 - took.as_millis() as i64
            );
            for (i, uri) in uris.iter().enumerate() {
                println!(
                    "           master {}: {}",
                    i + 1,
                    key_state(uri, &lock1.val)
                );
            }
            let rl2 = RedLock::new(uris.clone());
            match rl2.lock(RESOURCE, TTL_MS) {
                Ok(Some(lock2)) => {
                    println!(
                        "[{}] client 2: lock() -> Some(Lock), validity_time = {} ms",
                        now(t0),
                        lock2.validity_time
                    );
                    for (i, uri) in uris.iter().enumerate() {
                        println!(
                            "           master {}: {}",
                            i + 1,
                            key_state(uri, &lock2.val)
                        );
                    }
                    println!(
                        "BUG REPRODUCED: client 1 was granted a {} ms try against a {TTL_MS} ms \
                         TTL with validity_time {v} (wrapped usize), and client 2 was granted the \
                         same resource while client 1 still believes it holds it",
                        took.as_millis()
                    );
                    rl2.unlock(&lock2);
                    rl1.unlock(&lock1);
                    exit(1);
                }
                other => {
                    let what = match other {
                        Ok(None) => "None".to_string(),
                        Err(e) => format!("error {e}"),
                        Ok(Some(_)) => unreachable!(),
                    };
                    println!(
                        "BUG REPRODUCED: client 1 was granted a {} ms try against a {TTL_MS} ms \
                         TTL with validity_time {v} (wrapped usize); client 2's lock() gave {what}",
                        took.as_millis()
                    );
                    rl1.unlock(&lock1);
                    exit(1);
                }
            }
        }
    }
}
