//! What plotters cannot draw, written as SVG beside its output: an SVG `<title>` on each
//! hold, write and fault (shown on hover, no JavaScript), a link from it to its history line
//! (the report's evidence row when the page has it, else the run's `history.html` row), and
//! the hatching past a lease's end.

use crate::html::escape;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// The pattern that hatches a hold past its lease, defined once per SVG (identical in each,
/// so a page with several charts resolves it the same whichever it finds).
const HATCH_DEFS: &str = r##"<defs><pattern id="lease-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#ffa726"/><line x1="0" y1="0" x2="0" y2="6" stroke="#e65100" stroke-width="3"/></pattern></defs>"##;

/// A rectangle in the SVG's pixels: left, top, right, bottom.
pub type Px = (i32, i32, i32, i32);

/// Where a chart's marks link their history lines to.
#[derive(Debug, Clone, Copy)]
pub struct Links<'a> {
    /// History indices the page has an evidence row (`#ev-N`) for.
    pub evidence: &'a BTreeSet<u64>,
    /// The last index the run's `history.html` has a row (`#h-N`) for; `None`: no such page
    /// beside this one.
    pub history_upto: Option<u64>,
}

impl Links<'_> {
    /// Where history line `index` is shown, if anywhere.
    fn href(&self, index: u64) -> Option<String> {
        if self.evidence.contains(&index) {
            Some(format!("#ev-{index}"))
        } else if self.history_upto.is_some_and(|last| index <= last) {
            Some(format!("{}#h-{index}", crate::history_page::HISTORY_PAGE))
        } else {
            None
        }
    }
}

/// The elements to add to one SVG.
pub struct Overlay<'a> {
    links: Links<'a>,
    /// The hatches, drawn over the chart.
    hatches: String,
    /// The hover targets, drawn last so that they are on top.
    targets: String,
    /// How many more targets may be added: a bound on the SVG's size in a long run.
    budget: usize,
}

impl<'a> Overlay<'a> {
    pub fn new(links: Links<'a>, budget: usize) -> Overlay<'a> {
        Overlay {
            links,
            hatches: String::new(),
            targets: String::new(),
            budget,
        }
    }

    /// Hatches `px`: the part of a hold past its lease.
    pub fn hatch(&mut self, (x0, y0, x1, y1): Px) {
        let _ = write!(
            self.hatches,
            r#"<rect class="past-lease" x="{x0}" y="{y0}" width="{}" height="{}" fill="url(#lease-hatch)"/>"#,
            (x1 - x0).max(1),
            (y1 - y0).max(1)
        );
    }

    /// An invisible target over `px` that shows `title` on hover and links to the history
    /// line `index` where it is shown ([`Links`]).
    pub fn target(&mut self, class: &str, (x0, y0, x1, y1): Px, title: &str, index: u64) {
        if self.budget == 0 {
            return;
        }
        self.budget -= 1;
        let rect = format!(
            r##"<rect class="{class}" x="{x0}" y="{y0}" width="{}" height="{}" fill="#000" fill-opacity="0"><title>{}</title></rect>"##,
            (x1 - x0).max(3),
            (y1 - y0).max(3),
            escape(title)
        );
        if let Some(href) = self.links.href(index) {
            let _ = write!(self.targets, r##"<a href="{href}">{rect}</a>"##);
        } else {
            self.targets.push_str(&rect);
        }
    }

    /// `svg` with the overlay added before its end.
    pub fn apply(self, svg: String) -> String {
        let Some(end) = svg.rfind("</svg>") else {
            return svg;
        };
        let defs = if self.hatches.is_empty() {
            ""
        } else {
            HATCH_DEFS
        };
        format!(
            "{}{defs}{}{}{}",
            &svg[..end],
            self.hatches,
            self.targets,
            &svg[end..]
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_link_only_to_lines_the_page_has_and_titles_are_escaped() {
        let evidence = BTreeSet::from([7]);
        let links = Links {
            evidence: &evidence,
            history_upto: None,
        };
        let mut o = Overlay::new(links, 2);
        o.target("hold", (0, 0, 10, 10), "a < b", 7);
        o.target("write", (0, 0, 1, 1), "w", 8);
        o.target("write", (0, 0, 1, 1), "over budget", 9);
        let svg = o.apply("<svg></svg>".to_owned());
        assert!(
            svg.contains(r##"<a href="#ev-7"><rect class="hold""##),
            "{svg}"
        );
        assert!(svg.contains("<title>a &lt; b</title>"), "{svg}");
        assert!(!svg.contains("#ev-8"), "{svg}");
        assert!(svg.contains("<title>w</title>"), "{svg}");
        assert!(!svg.contains("over budget"), "{svg}");
        assert!(!svg.contains("lease-hatch"), "no hatch, no pattern");
        assert!(svg.ends_with("</svg>"));
    }

    #[test]
    fn a_line_not_in_the_evidence_links_to_the_history_page_when_it_has_that_row() {
        let evidence = BTreeSet::from([7]);
        let links = Links {
            evidence: &evidence,
            history_upto: Some(100),
        };
        let mut o = Overlay::new(links, 10);
        o.target("hold", (0, 0, 10, 10), "in the evidence", 7);
        o.target("write", (0, 0, 1, 1), "on the history page", 8);
        o.target("write", (0, 0, 1, 1), "past the page's last row", 101);
        let svg = o.apply("<svg></svg>".to_owned());
        assert!(svg.contains(r##"<a href="#ev-7">"##), "{svg}");
        assert!(svg.contains(r##"<a href="history.html#h-8">"##), "{svg}");
        assert!(!svg.contains("#h-101"), "{svg}");
        assert!(!svg.contains("#h-7"), "the evidence row comes first: {svg}");
    }
}
