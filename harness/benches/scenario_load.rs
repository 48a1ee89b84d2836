//! Times loading a scenario with many `[[nemesis]]` entries (the most allowed, 1000, and 4000,
//! which is refused), to show loading is linear in the entries: it once counted newlines from
//! the top of the file for each entry. Run with
//! `cargo bench -p lockpick-harness --bench scenario_load`.

use lockpick_harness::scenario::parse_scenario;
use std::path::Path;
use std::time::Instant;

fn text(entries: usize) -> String {
    let mut t = String::from(
        "name = \"many\"\n[backend]\nkind = \"redlock\"\n[workload]\nkind = \"counter\"\nclients = 4\nduration_ms = 60000\n",
    );
    for i in 0..entries {
        t.push_str(&format!(
            "[[nemesis]]\nfault = \"latency\"\nnodes = [\"n{}\"]\nlatency_ms = 5\nat_ms = {}\nduration_ms = 10\n",
            i % 5 + 1,
            i * 10
        ));
    }
    t
}

fn main() {
    for entries in [250, 500, 1000, 4000] {
        let t = text(entries);
        let rounds = 5;
        let started = Instant::now();
        let mut outcome = String::new();
        for _ in 0..rounds {
            outcome = match parse_scenario(Path::new("many.toml"), &t) {
                Ok(s) => format!("loaded, {} faults", s.nemesis.faults.len()),
                Err(e) => format!(
                    "refused: {}",
                    e.to_string().chars().take(90).collect::<String>()
                ),
            };
        }
        let ms = started.elapsed().as_secs_f64() * 1e3 / rounds as f64;
        println!(
            "{entries:>5} entries ({:>7} bytes): {ms:>8.2} ms per load; {outcome}",
            t.len()
        );
    }
}
