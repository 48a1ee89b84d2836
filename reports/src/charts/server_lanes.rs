//! The server's own record of the lock under the clients' lanes: one lane per node (per lock,
//! when a run has several), a bar for each value the node held, in the holds' blue when the
//! value is a process's (labelled with it) and grey when it is nobody's, with a tick where
//! the server let it go; each bar titled with whose value it was and how it ended. Set beside
//! the lanes above, it shows where a client believed it held what the server no longer had.

use super::common::{drawn, secs, Tl, CHART_WIDTH, FAIL, GREY, HOLD};
use super::overlay::{Overlay, Px};
use crate::error::ReportError;
use lockpick_checker::faults::secs as secs_text;
use lockpick_checker::lock::{Ownership, RecordEnd, ServerView};
use plotters::prelude::*;

/// One node's lane: what it held of one lock.
pub struct ServerLane<'a> {
    /// `n1`, or `n1 lock` when the run has more than one lock with records.
    pub label: String,
    /// The node whose records these are: a fault of that node is drawn on this lane.
    pub node: String,
    pub records: Vec<&'a Ownership>,
}

/// The lanes of a run's server record, by lock then node; none without a record.
pub fn server_lanes(view: Option<&ServerView>) -> Vec<ServerLane<'_>> {
    let Some(view) = view else {
        return Vec::new();
    };
    let several = view.locks.len() > 1;
    let mut out = Vec::new();
    for lock in &view.locks {
        for node in &lock.nodes {
            out.push(ServerLane {
                label: if several {
                    format!("{node} {}", lock.lock)
                } else {
                    node.clone()
                },
                node: node.clone(),
                records: lock.records.iter().filter(|r| &r.node == node).collect(),
            });
        }
    }
    out
}

/// What a record's title says: the node, whose value, from when to when, and how it ended.
fn record_title(r: &Ownership, run_end_ns: u64) -> String {
    let whose = match r.process {
        Some(p) => format!("p{p}'s value"),
        None => "a value of no process the history shows".to_owned(),
    };
    let end = match (r.end_ns, r.ended) {
        (Some(e), Some(how)) => {
            let how = match how {
                RecordEnd::Expired => "expired",
                RecordEnd::Deleted => "deleted",
                RecordEnd::Overwritten => "overwritten",
                RecordEnd::Reset => "lost with every record of its node: a restart, or a failover",
            };
            let seen = match r.observed_end_ns {
                Some(o) if o != e => format!(", seen at {}", secs_text(o)),
                _ => String::new(),
            };
            format!("until {} ({how}{seen})", secs_text(e))
        }
        (Some(e), None) => format!("until {}", secs_text(e)),
        (None, _) => format!("still held at {}", secs_text(run_end_ns)),
    };
    format!(
        "{} held {whose} {:?} of key {:?} from {} {end} (server record #{})",
        r.node,
        r.value,
        r.key,
        secs_text(r.start_ns),
        r.set_index
    )
}

/// Draws `lane` at row `y` of `chart` over `(lo, hi)` seconds.
pub(super) fn draw_server_lane(
    chart: &mut Tl<'_, '_>,
    lane: &ServerLane<'_>,
    y: f64,
    (lo, hi): (f64, f64),
    run_end_ns: u64,
    overlay: &mut Overlay<'_>,
) -> Result<(), ReportError> {
    let min_w = (hi - lo) / CHART_WIDTH as f64;
    let px_per_s = CHART_WIDTH as f64 / (hi - lo).max(1e-9);
    for r in &lane.records {
        let end_ns = r.end_ns.unwrap_or(run_end_ns);
        let (a, b) = (secs(r.start_ns), secs(end_ns));
        if b < lo || a > hi {
            continue;
        }
        let (a, b) = (a.max(lo), b.min(hi).max(a.max(lo) + min_w));
        let color = if r.process.is_some() { HOLD } else { GREY };
        drawn(chart.draw_series(std::iter::once(Rectangle::new(
            [(a, y + 0.3), (b, y + 0.7)],
            color.mix(0.55).filled(),
        ))))?;
        // The server let it go here (not a client's release): the moment to compare with
        // the holder's lane above.
        if matches!(r.ended, Some(RecordEnd::Expired | RecordEnd::Reset)) && b <= hi {
            drawn(chart.draw_series(std::iter::once(PathElement::new(
                vec![(b, y + 0.15), (b, y + 0.85)],
                FAIL.stroke_width(2),
            ))))?;
        }
        if let Some(p) = r.process {
            let text = format!("p{p}");
            if (b - a) * px_per_s > 8.0 * text.len() as f64 {
                // Anchored at its top left: a little above the bar's middle row.
                drawn(chart.draw_series(std::iter::once(Text::new(
                    text,
                    (a + 2.0 / px_per_s, y + 0.66),
                    ("sans-serif", 10).into_font().color(&BLACK),
                ))))?;
            }
        }
        let (x0, top) = chart.backend_coord(&(a, y + 0.7));
        let (x1, bottom) = chart.backend_coord(&(b, y + 0.3));
        let px: Px = (x0, top, x1, bottom);
        // Server record lines are not history lines: the title links nowhere.
        overlay.target("server-record", px, &record_title(r, run_end_ns), u64::MAX);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockpick_checker::lock::LockServerView;

    fn record(node: &str, process: Option<u64>, from: u64, to: Option<u64>) -> Ownership {
        Ownership {
            node: node.into(),
            key: "lockpick:lock:l".into(),
            value: "1-abc".into(),
            process,
            start_ns: from,
            set_index: 4,
            end_ns: to,
            ended: to.map(|_| RecordEnd::Expired),
            observed_end_ns: to.map(|t| t + 3_000_000),
            end_index: to.map(|_| 5),
            overwritten_by: None,
        }
    }

    #[test]
    fn a_lane_per_node_and_titles_that_say_whose_and_how_it_ended() {
        let view = ServerView {
            events: 2,
            locks: vec![LockServerView {
                lock: "l".into(),
                nodes: vec!["n1".into(), "n2".into()],
                majority: 2,
                records: vec![
                    record("n1", Some(1), 307_000_000, Some(606_000_000)),
                    record("n2", None, 100_000_000, None),
                ],
                ..LockServerView::default()
            }],
            ..ServerView::default()
        };
        let lanes = server_lanes(Some(&view));
        assert_eq!(
            lanes.iter().map(|l| l.label.as_str()).collect::<Vec<_>>(),
            ["n1", "n2"]
        );
        assert_eq!(lanes[0].records.len(), 1);
        let t = record_title(lanes[0].records[0], 2_000_000_000);
        assert_eq!(
            t,
            "n1 held p1's value \"1-abc\" of key \"lockpick:lock:l\" from 0.307 s until 0.606 s (expired, seen at 0.609 s) (server record #4)"
        );
        let t = record_title(lanes[1].records[0], 2_000_000_000);
        assert!(
            t.contains("a value of no process")
                && t.ends_with("still held at 2.000 s (server record #4)"),
            "{t}"
        );
        assert!(server_lanes(None).is_empty());
    }
}
