//! The first-adapter walk-through (the README's Python one, docs/first-adapter.md's Node, Go
//! and Java ones) as the tests hold it to the files in docs/examples/first-adapter/: each
//! language's code block is the file a test runs.

use std::path::Path;

/// The repository's root.
pub fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The fenced code blocks of `lang` in the first-adapter walk-through, in order: the README's
/// "Your first adapter" section (Python), then docs/first-adapter.md (Node, Go, Java).
pub fn first_adapter_blocks(lang: &str) -> Vec<String> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let start = readme
        .find("## Your first adapter")
        .expect("the README has the walk-through");
    let section = &readme[start..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
    let docs = std::fs::read_to_string(repo().join("docs/first-adapter.md")).unwrap();
    let fence = format!("```{lang}\n");
    let mut blocks = Vec::new();
    for text in [section, docs.as_str()] {
        let mut rest = text;
        while let Some(at) = rest.find(&fence) {
            let body = &rest[at + fence.len()..];
            let end = body.find("```").expect("closed fence");
            blocks.push(body[..end].to_owned());
            rest = &body[end..];
        }
    }
    blocks
}
