//! README is the index of the reference: every page in docs/ is linked from it, and every
//! link it makes to a file of the repository points at one that exists.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The targets of README's markdown links that are paths in the repository (no scheme, no
/// anchor-only link), without their `#fragment`.
fn readme_links() -> BTreeSet<String> {
    let text = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut links = BTreeSet::new();
    for (i, _) in text.match_indices("](") {
        let rest = &text[i + 2..];
        let Some(end) = rest.find(')') else { continue };
        let target = &rest[..end];
        if target.contains("://") || target.starts_with('#') || target.starts_with("mailto:") {
            continue;
        }
        let path = target.split('#').next().unwrap_or(target);
        links.insert(path.trim_end_matches('/').to_owned());
    }
    links
}

#[test]
fn every_docs_page_is_linked_from_the_readme() {
    let links = readme_links();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md")
            && !path.to_string_lossy().ends_with(".matrix.md")
        {
            let name = format!("docs/{}", path.file_name().unwrap().to_string_lossy());
            if !links.contains(&name) {
                missing.push(name);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "README.md links none of {missing:?}: add each to its \"Where to go next\" list"
    );
}

#[test]
fn every_repository_path_the_readme_links_exists() {
    let broken: Vec<String> = readme_links()
        .into_iter()
        .filter(|p| !Path::new(&root().join(p)).exists())
        .collect();
    assert!(
        broken.is_empty(),
        "README.md links paths that do not exist: {broken:?}"
    );
}
