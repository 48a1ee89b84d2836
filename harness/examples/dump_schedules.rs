//! Temporary: dumps every shipped scenario's schedule for seeds 1..=3.
use lockpick_harness::nemesis::build_schedule;
use lockpick_harness::scenario::{list_scenarios, load_scenario};
fn main() {
    let out = std::path::PathBuf::from(std::env::args().nth(1).unwrap());
    std::fs::create_dir_all(&out).unwrap();
    let mut paths: Vec<String> = list_scenarios()
        .into_iter()
        .map(|e| e.path.display().to_string())
        .collect();
    for e in std::fs::read_dir("/tmp/sched/extra").unwrap() {
        paths.push(e.unwrap().path().display().to_string());
    }
    for p in paths {
        let s = load_scenario(&p).unwrap();
        for seed in 1..=3u64 {
            for (tag, d) in [
                ("", s.workload.duration_ms),
                ("-x3", s.workload.duration_ms * 3),
            ] {
                let steps = build_schedule(&s, seed, d, s.workload.clients);
                std::fs::write(
                    out.join(format!("{}-{seed}{tag}.json", s.name)),
                    serde_json::to_vec_pretty(&steps).unwrap(),
                )
                .unwrap();
            }
        }
    }
}
