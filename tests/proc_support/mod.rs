//! Processes seen through /proc, for the tests that check no server outlives lockpick.

#![allow(dead_code)]

/// Live or zombie children of `pid`, from /proc.
pub fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // Fields after the parenthesised name: state, ppid, …
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let mut fields = rest.split_whitespace();
        let _state = fields.next();
        if fields.next().and_then(|p| p.parse::<u32>().ok()) == Some(pid) {
            out.push(child);
        }
    }
    out
}

/// Whether `pid` runs (a zombie is dead, only not yet reaped).
pub fn alive(pid: u32) -> bool {
    state(pid).is_some_and(|s| s != 'Z' && s != 'X')
}

/// The state letter of `pid` (`R`, `S`, `T`, `Z`, …), `None` if there is no such process.
pub fn state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 2..].chars().next()
}
