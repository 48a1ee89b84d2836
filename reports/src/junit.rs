//! A suite run as a JUnit XML report, the format CI systems read (Jenkins, GitLab, the GitHub
//! test-report actions): one `<testsuite>` per scenario, one `<testcase>` per seed. A mismatch
//! is a `<failure>` whose text is the violation sentences and the reproduce command; a harness
//! error is an `<error>`; a case the time budget left out is `<skipped>`. The output follows
//! the Ant/Jenkins schema (`docs/junit.xsd`, which the tests validate against).

use crate::suite_record::{CaseStatus, SuiteCase, SuiteRecord};
use lockpick_checker::verdict::Verdict;
use std::fmt::Write as _;

/// The JUnit XML of `record`.
pub fn junit_xml(record: &SuiteRecord) -> String {
    let timestamp = iso_timestamp(&record.started);
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"lockpick suite\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
        record.cases.len(),
        record.count(CaseStatus::Mismatch),
        record.count(CaseStatus::Error),
        record.count(CaseStatus::Skipped),
        record.secs
    );
    for (id, scenario) in scenarios(record).into_iter().enumerate() {
        let cases: Vec<&SuiteCase> = record
            .cases
            .iter()
            .filter(|c| c.scenario == scenario)
            .collect();
        let count = |s: CaseStatus| cases.iter().filter(|c| c.status == s).count();
        let secs: f64 = cases.iter().map(|c| c.secs).sum();
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" package=\"lockpick\" id=\"{id}\" timestamp=\"{timestamp}\" hostname=\"localhost\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{secs:.3}\">",
            attr(&scenario),
            cases.len(),
            count(CaseStatus::Mismatch),
            count(CaseStatus::Error),
            count(CaseStatus::Skipped),
        );
        out.push_str("    <properties>\n");
        let expected = cases.first().map(|c| c.expected.as_str()).unwrap_or("");
        for (name, value) in [
            ("expected", expected),
            ("lockpick-version", record.lockpick_version.as_str()),
            ("command", record.command.as_str()),
        ] {
            let _ = writeln!(
                out,
                "      <property name=\"{name}\" value=\"{}\"/>",
                attr(value)
            );
        }
        out.push_str("    </properties>\n");
        for case in &cases {
            testcase(&mut out, case);
        }
        out.push_str("    <system-out></system-out>\n    <system-err></system-err>\n");
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// Scenario names in the order the suite first ran them.
fn scenarios(record: &SuiteRecord) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for c in &record.cases {
        if !names.contains(&c.scenario) {
            names.push(c.scenario.clone());
        }
    }
    names
}

fn testcase(out: &mut String, case: &SuiteCase) {
    let _ = write!(
        out,
        "    <testcase name=\"seed {}\" classname=\"lockpick.{}\" time=\"{:.3}\"",
        case.seed,
        attr(&case.scenario),
        case.secs
    );
    let verdict = case.verdict.as_deref().unwrap_or("none");
    let body = |what: &str| {
        let mut text = case.message.clone();
        if let Some(run) = &case.run {
            let _ = write!(text, "\nstore: {run}");
        }
        let _ = write!(text, "\nreproduce: {}", case.reproduce);
        format!(
            ">\n      <{what} message=\"{}\" type=\"{}\">{}</{what}>\n    </testcase>\n",
            attr(&headline(case, verdict)),
            match case.status {
                CaseStatus::Mismatch => "verdict-mismatch",
                _ => "harness-error",
            },
            text_node(&text)
        )
    };
    match case.status {
        CaseStatus::Passed => out.push_str("/>\n"),
        CaseStatus::Mismatch => out.push_str(&body("failure")),
        CaseStatus::Error => out.push_str(&body("error")),
        CaseStatus::Skipped => {
            let _ = write!(
                out,
                ">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                attr(&case.message)
            );
        }
    }
}

/// The one-line message of a failed case.
fn headline(case: &SuiteCase, verdict: &str) -> String {
    match case.status {
        CaseStatus::Mismatch => format!(
            "{} seed {}: {} (expected {})",
            case.scenario,
            case.seed,
            Verdict::from_name(verdict)
                .map_or_else(|| verdict.to_uppercase(), |v| v.headline().to_owned()),
            case.expected
        ),
        _ => case.message.lines().next().unwrap_or_default().to_owned(),
    }
}

/// `YYYYMMDDTHHMMSSZ` → `YYYY-MM-DDTHH:MM:SS` (the schema's timestamp has no zone).
pub(crate) fn iso_timestamp(stamp: &str) -> String {
    let d: Vec<char> = stamp.chars().filter(char::is_ascii_digit).collect();
    if d.len() < 14 {
        return "1970-01-01T00:00:00".to_owned();
    }
    let s = |a: usize, b: usize| d[a..b].iter().collect::<String>();
    format!(
        "{}-{}-{}T{}:{}:{}",
        s(0, 4),
        s(4, 6),
        s(6, 8),
        s(8, 10),
        s(10, 12),
        s(12, 14)
    )
}

/// Text that XML 1.0 can carry: characters it forbids (most control characters, which a
/// history or an error message may hold) become U+FFFD.
fn xml_chars(text: &str) -> impl Iterator<Item = char> + '_ {
    text.chars().map(|c| match c {
        '\t' | '\n' | '\r' => c,
        c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => '\u{FFFD}',
        c => c,
    })
}

/// An attribute value, escaped (newlines and tabs kept as character references so they
/// survive attribute-value normalisation).
pub(crate) fn attr(text: &str) -> String {
    escape(text, true)
}

/// Element text, escaped.
pub(crate) fn text_node(text: &str) -> String {
    escape(text, false)
}

fn escape(text: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in xml_chars(text) {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            '\n' if attribute => out.push_str("&#10;"),
            '\r' if attribute => out.push_str("&#13;"),
            '\t' if attribute => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_forbidden_characters() {
        assert_eq!(attr("a<b>&\"c\"\n"), "a&lt;b&gt;&amp;&quot;c&quot;&#10;");
        assert_eq!(text_node("x\u{1b}[31m<y>"), "x\u{FFFD}[31m&lt;y&gt;");
    }

    #[test]
    fn timestamp_from_run_stamp() {
        assert_eq!(iso_timestamp("20261124T031500Z"), "2026-11-24T03:15:00");
        assert_eq!(iso_timestamp("garbage"), "1970-01-01T00:00:00");
    }
}
