//! A matrix file of one cell (redis × a client pause) for the tests of pages judged again by
//! a file: its expectation and note are what those tests change.

/// The text, the cell expected `expect` ("valid: why") with `note` if any.
pub(super) fn one_pause_cell(expect: &str, note: Option<&str>) -> String {
    let note = note.map_or_else(String::new, |n| format!("note.pause = \"{n}\""));
    format!(
        r#"
name = "m"
seeds = 1
[workload]
clients = 3
duration = "2x lease + 1000ms"

[[row]]
lock = "redis"
ttl_ms = 300
expect = {{ pause = "{expect}" }}
{note}

[[column]]
name = "pause"
about = "a GC pause"
fault = "client-pause"
point = "before-write"
duration = "2x lease"
"#
    )
}
