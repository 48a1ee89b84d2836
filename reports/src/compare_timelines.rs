//! The comparison page's timelines: one small timeline per lock, all on the same time axis,
//! so that where each lock's holds broke under the same fault schedule reads at a glance.

use crate::charts::{timeline_svg, Links, TimelineSpec};
use crate::error::ReportError;
use crate::view::{Lane, RunView, ViewBuilder};
use lockpick_checker::history::HistoryReader;
use lockpick_checker::lock::TimeWindow;
use lockpick_checker::results::RunResults;
use std::collections::BTreeSet;
use std::path::Path;

/// At most this many lanes per lock: the comparison shows the shape, the run's report the
/// whole.
const MAX_LANES: usize = 8;

/// The timeline of each run (`dir`, its results), in order, over the longest run's time.
pub(crate) fn aligned_timelines(runs: &[(&Path, &RunResults)]) -> Result<Vec<String>, ReportError> {
    let views = runs
        .iter()
        .map(|(dir, r)| run_view(dir, r))
        .collect::<Result<Vec<_>, _>>()?;
    let end_ns = views.iter().map(|v| v.end_ns).max().unwrap_or(0);
    // No evidence rows on this page: the titles say what each mark is, without links.
    let evidence = BTreeSet::new();
    let links = Links {
        evidence: &evidence,
        history_upto: None,
    };
    views
        .iter()
        .zip(runs)
        .map(|(view, (_, r))| {
            // The processes in violations first, so that a broken lock shows where it broke.
            let involved: BTreeSet<u64> = (r.lock.violations.iter())
                .flat_map(|f| f.processes.iter().copied())
                .collect();
            let mut lanes: Vec<&Lane> = view.lanes.iter().collect();
            lanes.sort_by_key(|l| (!involved.contains(&l.process), l.process));
            lanes.truncate(MAX_LANES);
            lanes.sort_by_key(|l| l.process);
            let windows: Vec<TimeWindow> =
                r.lock.violations.iter().filter_map(|f| f.window).collect();
            timeline_svg(
                view,
                &TimelineSpec {
                    from_ns: 0,
                    to_ns: end_ns,
                    lanes,
                    violations: &windows,
                    links,
                    // Compared backends share one time axis; their servers' records stay on
                    // each run's own page.
                    server: &[],
                },
            )
        })
        .collect()
}

/// The view of the run in `dir`, from its history in one streaming pass.
fn run_view(dir: &Path, r: &RunResults) -> Result<RunView, ReportError> {
    let path = dir.join(&r.history);
    let parse = |e: lockpick_checker::history::ReadError| ReportError::Parse {
        path: path.clone(),
        message: e.to_string(),
    };
    let mut reader = HistoryReader::open(&path).map_err(parse)?;
    let mut builder = ViewBuilder::default();
    while let Some(e) = reader.next_event().map_err(parse)? {
        builder.push(&e.to_owned());
    }
    Ok(builder.finish())
}
