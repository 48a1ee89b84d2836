//! A history with a library's notice (format 2): `lockpick check` prints it beside the loss in
//! the summary, and report.html lists it in its table (lost at, learned at, delay, the write
//! in between).

use std::process::Command;

/// Process 0 holds token 1 with a 100 ms lease from 0.005 s; process 1 is granted at 0.150 s;
/// process 0 writes at 0.120 s (after its lease ran out) and is told `lost` at 0.200 s.
const HISTORY: &str = r#"{"v":2,"index":0,"time_ns":5000000,"process":0,"type":"invoke","f":"acquire","lock":"l","value":{"lease_ms":100}}
{"v":2,"index":1,"time_ns":10000000,"process":0,"type":"ok","f":"acquire","lock":"l","value":{"token":1,"lease_ms":100}}
{"v":2,"index":2,"time_ns":20000000,"process":1,"type":"invoke","f":"acquire","lock":"l","value":{"lease_ms":100}}
{"v":2,"index":3,"time_ns":120000000,"process":0,"type":"invoke","f":"write","lock":"l","value":{"token":1,"int":1}}
{"v":2,"index":4,"time_ns":121000000,"process":0,"type":"ok","f":"write","lock":"l","value":{"token":1,"int":1}}
{"v":2,"index":5,"time_ns":150000000,"process":1,"type":"ok","f":"acquire","lock":"l","value":{"token":2,"lease_ms":100}}
{"v":2,"index":6,"time_ns":200000000,"process":0,"type":"info","f":"notice","lock":"l","value":{"event":"lost","note":"refresh found the key gone"}}
{"v":2,"index":7,"time_ns":210000000,"process":1,"type":"invoke","f":"release","lock":"l","value":{"token":2}}
{"v":2,"index":8,"time_ns":211000000,"process":1,"type":"ok","f":"release","lock":"l"}
"#;

#[test]
fn check_prints_and_reports_when_the_holder_learned_beside_when_it_lost() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("history.jsonl"), HISTORY).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_lockpick"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("check")
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains(
            "TOLD: process 0 (lock \"l\", acquired #1) was told `lost` at 0.200 s (#6), 95.000 ms after it lost the lock at 0.105 s (lease ran out, #0); 1 write(s) in between (#3)"
        ),
        "{stdout}{stderr}"
    );
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    let table = &html[html
        .find(r#"<table id="learned">"#)
        .expect("the notices' table")..];
    let table = &table[..table.find("</table>").unwrap()];
    for cell in [
        "<td>lost</td>",
        "0.105 s — lease ran out",
        "0.200 s",
        "95.000 ms late",
        r##"yes: <a href="#ev-3">#3</a>"##,
        "refresh found the key gone",
    ] {
        assert!(table.contains(cell), "{cell} not in {table}");
    }
}
