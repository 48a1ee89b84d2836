//! The README's first-adapter walk-through as the tests hold it to the files in
//! docs/examples/first-adapter/: each language's code block is the file a test runs.

use std::path::Path;

/// The repository's root.
pub fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The fenced code blocks of `lang` in the README's "Your first adapter" section, in order.
pub fn first_adapter_blocks(lang: &str) -> Vec<String> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let start = readme
        .find("### Your first adapter")
        .expect("the README has the walk-through");
    let section = &readme[start..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let fence = format!("```{lang}\n");
    let mut blocks = Vec::new();
    let mut rest = section;
    while let Some(at) = rest.find(&fence) {
        let body = &rest[at + fence.len()..];
        let end = body.find("```").expect("closed fence");
        blocks.push(body[..end].to_owned());
        rest = &body[end..];
    }
    blocks
}
