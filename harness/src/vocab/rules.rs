//! The rules scenario values must follow beyond their types: which names are safe to use as a
//! folder or a lock key, which text is safe to print, and the largest numbers a run can take.
//! docs/scenarios.md mirrors this file.

/// The longest scenario or lock name.
pub const NAME_MAX_CHARS: usize = 100;
/// The longest description.
pub const DESCRIPTION_MAX_CHARS: usize = 1000;
/// The most `[[nemesis]]` entries one scenario may have.
pub const MAX_FAULT_ENTRIES: usize = 1000;
/// The most steps (fault starts, ends and clock flips) a run's schedule may hold; the
/// schedule is drawn whole before the run and written to `schedule.json`.
pub const MAX_SCHEDULE_STEPS: u64 = 100_000;
/// The longest workload, and the latest a fault may first start or recur: one day.
pub const MAX_RUN_MS: u64 = 86_400_000;
/// The longest a fault may last (a client or node pause, a crash before the restart, a
/// partition, latency, a clock fault): one hour. A pause longer than the run keeps the run
/// waiting for it, so it must end some time.
pub const MAX_FAULT_MS: u64 = 3_600_000;
/// The largest latency or jitter a latency fault may add: one hour (Toxiproxy takes them as
/// int64 milliseconds; the proxy client as 32-bit).
pub const MAX_LATENCY_MS: u64 = 3_600_000;
/// The shortest clock-strobe period: every flip rewrites the nodes' libfaketime files and
/// records two history events.
pub const MIN_STROBE_PERIOD_MS: u64 = 10;
/// The largest clock offset, either way: about 100 years.
pub const MAX_CLOCK_OFFSET_MS: i64 = 3_155_760_000_000;
/// The largest `count` of a recurring fault.
pub const MAX_FAULT_COUNT: u32 = 1_000_000;
/// The most independent locks one run may spread its operations over (`[workload] locks`).
pub const MAX_LOCKS: usize = 100_000;
/// The most clients a run may have (`[workload] clients`, `--clients`).
pub const MAX_CLIENTS: usize = 1000;

/// Whether `name` may name a scenario (its store folder) or a lock (a ZooKeeper node under
/// `/locks/`, an etcd key under `lockpick/lock/`, a Redis key `lockpick:token:<name>`):
/// 1 to [`NAME_MAX_CHARS`] of `A-Z a-z 0-9 . _ -`, not starting with `.`. The one rule is
/// what all three allow as one path component, and it keeps `..`, `/`, NUL, newlines and
/// terminal escapes out of paths and output. `Err` says what is wrong.
pub fn check_name(name: &str) -> Result<(), String> {
    let rule = format!("allowed: 1 to {NAME_MAX_CHARS} of A-Z a-z 0-9 . _ -, not starting with .");
    let count = name.chars().count();
    if count == 0 {
        return Err(format!("the name is empty; {rule}"));
    }
    if count > NAME_MAX_CHARS {
        return Err(format!("the name has {count} characters; {rule}"));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(format!(
            "{} contains {}; {rule}",
            shown(name),
            char_name(bad)
        ));
    }
    if name.starts_with('.') {
        return Err(format!("{} starts with .; {rule}", shown(name)));
    }
    Ok(())
}

/// Whether free text (a description) is safe to print: at most `max` characters and no
/// control characters (a newline could forge an output line, an escape could rewrite the
/// terminal).
pub fn check_text(text: &str, max: usize) -> Result<(), String> {
    let count = text.chars().count();
    if count > max {
        return Err(format!(
            "{count} characters; allowed: at most {max}, printable, one line"
        ));
    }
    match text.chars().find(|c| c.is_control()) {
        Some(bad) => Err(format!(
            "contains {}; allowed: at most {max} printable characters, one line",
            char_name(bad)
        )),
        None => Ok(()),
    }
}

/// A value for a message: quoted and escaped, and cut short if long.
fn shown(value: &str) -> String {
    const KEEP: usize = 40;
    if value.chars().count() > KEEP {
        let head: String = value.chars().take(KEEP).collect();
        format!("{head:?}…")
    } else {
        format!("{value:?}")
    }
}

fn char_name(c: char) -> String {
    if c.is_control() || c.is_whitespace() {
        format!("the character U+{:04X}", c as u32)
    } else {
        format!("the character {c:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_allow_the_portable_set_only() {
        for good in [
            "redis-gc-pause",
            "a",
            "A.b_c-9",
            &"x".repeat(NAME_MAX_CHARS),
        ] {
            assert_eq!(check_name(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "..",
            "../x",
            "/etc",
            "a/b",
            ".hidden",
            "a\nlockpick: scenario x with seed 0",
            "a\u{0}b",
            "\u{1b}[31mred",
            "a b",
            "é",
            &"x".repeat(NAME_MAX_CHARS + 1),
        ] {
            let err = check_name(bad).unwrap_err();
            assert!(
                err.contains("allowed: 1 to 100 of A-Z a-z 0-9 . _ -"),
                "{err}"
            );
            assert!(!err.contains('\n') && !err.contains('\u{1b}'), "{err:?}");
        }
    }

    #[test]
    fn text_rejects_control_characters_and_length() {
        assert_eq!(check_text("a fine – description", 100), Ok(()));
        assert!(check_text("two\nlines", 100)
            .unwrap_err()
            .contains("U+000A"));
        assert!(check_text("\u{1b}]0;title\u{7}", 100)
            .unwrap_err()
            .contains("U+001B"));
        assert!(check_text(&"x".repeat(101), 100)
            .unwrap_err()
            .contains("at most 100"));
    }
}
