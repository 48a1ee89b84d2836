//! The pages under docs/measured/ are suite records rendered by `lockpick report
//! STORE/suite/<time> --markdown` (never typed), and the known-bug catalogue's page covers the
//! catalogue: an entry added since its last ten-seed run shows here as missing, so the page is
//! made again with it rather than quoted without it.

use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn page(name: &str) -> String {
    let path = root().join("docs/measured").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The page's rows: (scenario, runs as expected, runs).
fn rows(page: &str) -> Vec<(String, u64, u64)> {
    page.lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split(" | ").collect();
            let scenario = cells.first()?.strip_prefix("| `")?.strip_suffix('`')?;
            let (k, n) = cells.get(2)?.split_once('/')?;
            Some((scenario.to_owned(), k.parse().ok()?, n.parse().ok()?))
        })
        .collect()
}

#[test]
fn every_measured_page_is_a_rendered_suite_record() {
    for entry in std::fs::read_dir(root().join("docs/measured")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("from the suite record `suite/")
                && text.contains("Do not edit by hand: `lockpick report STORE/suite/"),
            "{} is not a page `lockpick report STORE/suite/<time> --markdown` wrote",
            path.display()
        );
        assert!(!rows(&text).is_empty(), "{}: no rows", path.display());
    }
}

#[test]
fn the_known_bug_page_has_every_catalogue_entry_over_ten_seeds() {
    let page = page("known-bugs.md");
    let rows = rows(&page);
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(root().join("scenarios/known-bugs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        match rows.iter().find(|r| r.0 == name) {
            Some((_, _, n)) => assert_eq!(*n, 10, "{name}: {n} runs, not 10 seeds"),
            None => missing.push(name),
        }
    }
    assert!(
        missing.is_empty(),
        "docs/measured/known-bugs.md has no row for {missing:?}: run `lockpick suite --filter \
         known-bugs --seeds 10 --markdown docs/measured/known-bugs.md` again"
    );
}
