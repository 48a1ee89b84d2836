//! Standard output that its reader may close (`lockpick list | head -1`): every line the
//! commands print goes through [`out!`]/[`outln!`], which stop writing, quietly, at the first
//! failed write instead of panicking as `println!` does (Rust ignores SIGPIPE, so a closed pipe
//! is an `EPIPE` error on the write). The command still finishes its work (a run is stored and
//! its report written whole); `main` then exits with [`crate::exit_code::STDOUT_CLOSED`].

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `args` to stdout and flushes, unless an earlier write failed; a failure ends all
/// later writes.
pub fn write(args: std::fmt::Arguments<'_>) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if out.write_fmt(args).and_then(|()| out.flush()).is_err() {
        CLOSED.store(true, Ordering::Relaxed);
    }
}

/// Whether a write to stdout failed (its reader went away).
pub fn closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

/// `print!` that ends quietly when stdout is closed.
macro_rules! out {
    ($($arg:tt)*) => { $crate::stdout::write(format_args!($($arg)*)) };
}

/// `println!` that ends quietly when stdout is closed.
macro_rules! outln {
    () => { $crate::stdout::write(format_args!("\n")) };
    ($($arg:tt)*) => {{
        $crate::stdout::write(format_args!($($arg)*));
        $crate::stdout::write(format_args!("\n"));
    }};
}
