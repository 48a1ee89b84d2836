//! Generates valid fenced-write lock histories of any length, written straight to a file so
//! the generator itself holds nothing: processes take turns on each lock (acquire, write with
//! the granted token, release) while the others wait with an acquire in flight.

use std::io::{self, Write};

/// What to generate.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Client processes.
    pub processes: u64,
    /// Lock names (`lock-0` …); each lock has its own turn order and fencing tokens.
    pub locks: u64,
    /// Events to write (rounded down to whole turns).
    pub events: u64,
}

/// Writes the history to `out` and returns how many events it wrote.
///
/// Process `p` works on lock `p % locks`: the processes of one lock take turns on it (the
/// holder acquires, writes with its token, releases and asks again; the others wait with an
/// acquire in flight). Every step is 1 µs after the last.
pub fn write_history(shape: Shape, out: &mut impl Write) -> io::Result<u64> {
    let locks = shape.locks.clamp(1, shape.processes.max(1));
    let mut index = 0u64;
    let line = |out: &mut dyn Write,
                index: &mut u64,
                p: u64,
                kind: &str,
                f: &str,
                lock: u64,
                value: &str| {
        let value = if value.is_empty() {
            String::new()
        } else {
            format!(",\"value\":{{{value}}}")
        };
        let r = writeln!(
            out,
            "{{\"v\":1,\"index\":{},\"time_ns\":{},\"process\":{p},\"type\":\"{kind}\",\"f\":\"{f}\",\"lock\":\"lock-{lock}\"{value}}}",
            *index,
            1000 * (*index + 1)
        );
        *index += 1;
        r
    };
    // Everyone asks for its lock first.
    for p in 0..shape.processes {
        line(out, &mut index, p, "invoke", "acquire", p % locks, "")?;
    }
    let mut token = vec![0u64; locks as usize];
    // Per lock, whose turn it is (the n-th process of that lock).
    let mut turn = vec![0u64; locks as usize];
    let members = |l: u64| (0..shape.processes).filter(move |p| p % locks == l).count() as u64;
    let mut lock = 0u64;
    while index + 6 <= shape.events {
        let l = lock as usize;
        let p = lock + locks * turn[l];
        token[l] += 1;
        let t = token[l];
        let max = if t > 1 {
            format!(",\"max_token\":{}", t - 1)
        } else {
            String::new()
        };
        line(
            out,
            &mut index,
            p,
            "ok",
            "acquire",
            lock,
            &format!("\"token\":{t}"),
        )?;
        line(
            out,
            &mut index,
            p,
            "invoke",
            "write",
            lock,
            &format!("\"token\":{t}"),
        )?;
        line(
            out,
            &mut index,
            p,
            "ok",
            "write",
            lock,
            &format!("\"token\":{t}{max}"),
        )?;
        line(
            out,
            &mut index,
            p,
            "invoke",
            "release",
            lock,
            &format!("\"token\":{t}"),
        )?;
        line(out, &mut index, p, "ok", "release", lock, "")?;
        line(out, &mut index, p, "invoke", "acquire", lock, "")?;
        turn[l] = (turn[l] + 1) % members(lock);
        lock = (lock + 1) % locks;
    }
    Ok(index)
}
