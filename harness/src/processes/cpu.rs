//! CPU time a node's whole process tree has used, from /proc: what a lock costs its servers.

use super::registry::descendants;

/// Clock ticks per second of /proc's CPU times (`sysconf(_SC_CLK_TCK)`).
fn ticks_per_sec() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as u64
    } else {
        100
    }
}

/// User + system CPU time of `pid` itself plus that of its children it already reaped, in
/// clock ticks; `None` once it is gone.
fn own_and_reaped_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After "pid (comm)": state is field 3, utime..cstime are fields 14..17.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    let sum = fields
        .get(11..15)?
        .iter()
        .map(|f| f.parse::<u64>().ok())
        .sum::<Option<u64>>()?;
    Some(sum)
}

/// CPU milliseconds used so far by `root` and every live process below it. A live process's
/// own time is in its stat line; a child that exited and was reaped has its time in its
/// parent's `cutime`/`cstime`, so summing both over the live tree counts everything once
/// (PostgreSQL's short-lived backends included). `None` if `root` is gone.
pub fn tree_cpu_ms(root: u32) -> Option<u64> {
    let mut ticks = own_and_reaped_ticks(root)?;
    for pid in descendants(root) {
        ticks += own_and_reaped_ticks(pid).unwrap_or(0);
    }
    Some(ticks * 1000 / ticks_per_sec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_cpu_a_child_burned_and_that_of_reaped_grandchildren() {
        // A shell that spins a grandchild for a while, waits for it, then sleeps: the
        // grandchild's time must show in the tree's total after it exited.
        use std::os::unix::process::CommandExt;
        // A process group of its own, so that the kill below reaches the sleep too (it would
        // otherwise outlive the test by 30 s, holding the test's output open).
        let mut child = std::process::Command::new("sh")
            .args([
                "-c",
                "sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'; sleep 30",
            ])
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = child.id();
        let mut total = 0;
        // Wait until the spinner has finished (the tree is the shell and its sleep).
        for _ in 0..600 {
            std::thread::sleep(std::time::Duration::from_millis(50));
            let names: Vec<String> = descendants(pid)
                .iter()
                .filter_map(|p| std::fs::read_to_string(format!("/proc/{p}/comm")).ok())
                .collect();
            if names.iter().any(|n| n.trim() == "sleep") {
                total = tree_cpu_ms(pid).unwrap();
                break;
            }
        }
        // SAFETY: kill(2) with the group id of the shell spawned above; no memory is shared.
        unsafe { libc::kill(-(pid as libc::pid_t), libc::SIGKILL) };
        child.wait().unwrap();
        assert!(
            total >= 10,
            "the spinning grandchild's CPU was counted: {total} ms"
        );
        assert_eq!(tree_cpu_ms(pid), None, "a reaped root has no tree");
    }
}
