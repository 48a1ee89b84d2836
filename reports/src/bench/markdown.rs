//! `bench.md`: the benchmark as markdown tables, one row per lock and client count.

use super::BenchRecord;

/// The benchmark as markdown; `charts` is the folder the SVGs are linked from, relative to
/// where the markdown goes (empty: beside it).
pub fn bench_markdown(record: &BenchRecord, charts: &str) -> String {
    let mut md = String::new();
    md.push_str(&format!(
        "Measured by lockpick {} on {} ({}), seed {}, {} ms per run, no fault, no hold and \
         no think time: every client asks again as soon as it released.\n\n",
        record.lockpick_version, record.started, record.machine, record.seed, record.duration_ms
    ));
    md.push_str(&format!(
        "![grants per second by clients]({charts}handoff.svg)\n\n\
         ![acquire latency p50 and p99 by clients]({charts}latency.svg)\n\n"
    ));
    md.push_str(
        "| lock | clients | grants/s | acquire p50 ms | acquire p99 ms | server CPU ms per grant | \
         failed / unknown acquires | verdict |\n|---|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for p in &record.points {
        let lock = match &p.library {
            Some(lib) => format!("{} ({lib})", p.row),
            None => p.row.clone(),
        };
        if let Some(e) = &p.error {
            md.push_str(&format!(
                "| {lock} | {} | — | — | — | — | — | error: {} |\n",
                p.clients,
                e.replace('|', "\\|")
            ));
            continue;
        }
        let ms = |v: Option<f64>| v.map_or("—".to_owned(), |v| format!("{v:.2}"));
        md.push_str(&format!(
            "| {lock} | {} | {:.0} | {} | {} | {} | {} / {} | {} |\n",
            p.clients,
            p.grants_per_sec(),
            ms(p.acquire_p50_ms),
            ms(p.acquire_p99_ms),
            p.cpu_ms_per_grant()
                .map_or("—".to_owned(), |v| format!("{v:.3}")),
            p.failed,
            p.unknown,
            p.verdict
        ));
    }
    md.push_str(&format!("\nRepeat: `{}`\n", record.command));
    md
}
