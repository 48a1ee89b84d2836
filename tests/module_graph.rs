//! No module cycles: within each crate, the modules that sit side by side in one folder (or one
//! `mod.rs`) must form layers, each using only those below it. A cycle between siblings is
//! where a new module ends up needing "everything", and where vocabulary has landed in the
//! wrong place; this test names the first cycle it finds and the imports that close it.
//!
//! The graph is read from the source text, as a reader would: every `crate::a::b` path, every
//! `super::x` and `self::x` path, and the names inside one level of `{…}` after them, outside
//! comments and outside `#[cfg(test)]` blocks (a test may use anything). A path into a module's
//! own child or ancestor is not an edge: only siblings are layered.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates whose modules must form layers, by their root file.
const CRATES: &[&str] = &[
    "src/main.rs",
    "harness/src/lib.rs",
    "checker/src/lib.rs",
    "reports/src/lib.rs",
];

/// One module: its path from the crate root (`["client", "process"]`) and its source files.
type ModPath = Vec<String>;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under the crate's folder, with its module path.
fn modules(crate_root: &Path) -> BTreeMap<ModPath, Vec<PathBuf>> {
    let dir = crate_root.parent().expect("a crate folder");
    let mut out: BTreeMap<ModPath, Vec<PathBuf>> = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read a source folder") {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(dir).expect("under the crate folder");
            let mut parts: Vec<String> = rel
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            let file = parts.pop().expect("a file name");
            let stem = file.trim_end_matches(".rs");
            if !matches!(stem, "mod" | "lib" | "main") {
                parts.push(stem.to_owned());
            }
            out.entry(parts).or_default().push(path);
        }
    }
    out
}

/// The text the graph is read from: no comments, nothing from the first `#[cfg(test)]` on.
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("read a source file");
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines()
        .map(|l| match l.find("//") {
            // A `//` inside a string ("http://…") is rare in paths that matter; cut anyway.
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module paths `code`, the source of module `here`, names.
fn referenced(code: &str, here: &[String]) -> Vec<ModPath> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    for anchor in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(anchor) {
            let start = from + at;
            from = start + anchor.len();
            // A whole word: not `foo_crate::`.
            if start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
                continue;
            }
            // The module this anchor stands for.
            let mut base: ModPath = match anchor {
                "crate::" => Vec::new(),
                // A file module's `self` is itself; `super` its parent. A `mod.rs` is the
                // folder's module: its `super` is the folder's parent.
                "self::" => here.to_vec(),
                _ => {
                    let mut p = here.to_vec();
                    p.pop();
                    p
                }
            };
            let mut rest = &code[from..];
            // `super::super::x`
            while let Some(r) = rest.strip_prefix("super::") {
                base.pop();
                rest = r;
            }
            if let Some(group) = rest.strip_prefix('{') {
                let inner = group.split('}').next().unwrap_or_default();
                for item in inner.split(',') {
                    out.push(extend(&base, item.trim()));
                }
            } else {
                out.push(extend(&base, rest));
            }
        }
    }
    out
}

/// `base` followed by the identifiers of `path` (`a::b::C`), as far as they go.
fn extend(base: &[String], path: &str) -> ModPath {
    let mut out = base.to_vec();
    for seg in path.split("::") {
        let ident: String = seg
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if ident.is_empty() {
            break;
        }
        let whole = ident.len() == seg.len();
        out.push(ident);
        // `a::B;` or `a::f(`: the path ends inside this segment.
        if !whole {
            break;
        }
    }
    out
}

/// The edges between siblings: `(parent, from child, to child)` → the files that make it.
type Edges = BTreeMap<(ModPath, String, String), BTreeSet<String>>;

/// The modules a file declares under `#[cfg(test)]` (`#[cfg(test)] mod recorded;`): test code,
/// which may use anything.
fn test_children(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("read a source file");
    let mut out = Vec::new();
    for (i, _) in text.match_indices("#[cfg(test)]") {
        let rest = text[i + "#[cfg(test)]".len()..].trim_start();
        let rest = rest
            .strip_prefix("pub(crate) ")
            .or_else(|| rest.strip_prefix("pub "))
            .unwrap_or(rest);
        if let Some(decl) = rest.strip_prefix("mod ") {
            let name: String = decl
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if decl[name.len()..].trim_start().starts_with(';') {
                out.push(name);
            }
        }
    }
    out
}

fn sibling_edges(crate_root: &str) -> (BTreeMap<ModPath, Vec<PathBuf>>, Edges) {
    let mut mods = modules(&root().join(crate_root));
    let tests: Vec<ModPath> = mods
        .iter()
        .flat_map(|(here, files)| {
            files.iter().flat_map(move |f| {
                test_children(f).into_iter().map(move |c| {
                    let mut p = here.clone();
                    p.push(c);
                    p
                })
            })
        })
        .collect();
    for t in tests {
        mods.remove(&t);
    }
    let mut edges = Edges::new();
    for (here, files) in &mods {
        for file in files {
            for target in referenced(&code_of(file), here) {
                // The longest prefix of the path that is a module.
                let Some(target) = (0..=target.len())
                    .rev()
                    .map(|n| target[..n].to_vec())
                    .find(|p| mods.contains_key(p))
                else {
                    continue;
                };
                let common = here.iter().zip(&target).take_while(|(a, b)| a == b).count();
                // Into a child or an ancestor of `here`: not between siblings.
                if common == here.len() || common == target.len() {
                    continue;
                }
                let rel = file.strip_prefix(root()).unwrap_or(file);
                edges
                    .entry((
                        here[..common].to_vec(),
                        here[common].clone(),
                        target[common].clone(),
                    ))
                    .or_default()
                    .insert(rel.display().to_string());
            }
        }
    }
    (mods, edges)
}

/// The strongly connected groups of more than one node (Tarjan).
fn cycles(nodes: &BTreeSet<String>, next: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        next: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<String, usize>,
        low: BTreeMap<String, usize>,
        stack: Vec<String>,
        on: BTreeSet<String>,
        out: Vec<Vec<String>>,
    }
    fn visit(s: &mut State, v: &str) {
        let i = s.index.len();
        s.index.insert(v.to_owned(), i);
        s.low.insert(v.to_owned(), i);
        s.stack.push(v.to_owned());
        s.on.insert(v.to_owned());
        for w in s.next.get(v).cloned().unwrap_or_default() {
            if !s.index.contains_key(&w) {
                visit(s, &w);
                let lw = s.low[&w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on.contains(&w) {
                let iw = s.index[&w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut group = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(&w);
                let done = w == v;
                group.push(w);
                if done {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                s.out.push(group);
            }
        }
    }
    let mut s = State {
        next,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in nodes {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// Every cycle among siblings in `crate_root`, described with the files that close it.
fn find_cycles(crate_root: &str) -> Vec<String> {
    let (mods, edges) = sibling_edges(crate_root);
    let mut report = Vec::new();
    let parents: BTreeSet<ModPath> = mods
        .keys()
        .filter(|p| !p.is_empty())
        .map(|p| p[..p.len() - 1].to_vec())
        .collect();
    for parent in parents {
        let mut nodes = BTreeSet::new();
        let mut next: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for ((p, a, b), _) in edges.range((parent.clone(), String::new(), String::new())..) {
            if *p != parent {
                break;
            }
            nodes.insert(a.clone());
            nodes.insert(b.clone());
            next.entry(a.clone()).or_default().insert(b.clone());
        }
        for group in cycles(&nodes, &next) {
            let mut lines = vec![format!(
                "{crate_root}: modules {} of `{}` form a cycle:",
                group.join(", "),
                if parent.is_empty() {
                    "crate".to_owned()
                } else {
                    parent.join("::")
                }
            )];
            for a in &group {
                for b in &group {
                    if let Some(files) = edges.get(&(parent.clone(), a.clone(), b.clone())) {
                        let files: Vec<&str> = files.iter().map(String::as_str).collect();
                        lines.push(format!("  {a} -> {b} (in {})", files.join(", ")));
                    }
                }
            }
            report.push(lines.join("\n"));
        }
    }
    report
}

#[test]
fn no_crate_has_a_module_cycle() {
    let found: Vec<String> = CRATES.iter().flat_map(|c| find_cycles(c)).collect();
    assert!(
        found.is_empty(),
        "move the shared item down into a module both can use (as harness/src/vocab/ holds the \
         scenario's words), or merge the two modules:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_reader_sees_a_planted_cycle() {
    // `a` uses `b` through a group and `b` uses `a` through super: the same shapes as above.
    let a = referenced("use crate::{b::Thing, c};", &["a".to_owned()]);
    assert!(
        a.contains(&vec!["b".to_owned(), "Thing".to_owned()]),
        "{a:?}"
    );
    let b = referenced("use super::a::X;", &["b".to_owned()]);
    assert_eq!(b, vec![vec!["a".to_owned(), "X".to_owned()]]);
    let nodes: BTreeSet<String> = ["a", "b", "c"].map(String::from).into();
    let next: BTreeMap<String, BTreeSet<String>> = [
        ("a".to_owned(), ["b".to_owned()].into()),
        ("b".to_owned(), ["a".to_owned()].into()),
    ]
    .into();
    assert_eq!(
        cycles(&nodes, &next),
        vec![vec!["a".to_owned(), "b".to_owned()]]
    );
    let layered: BTreeMap<String, BTreeSet<String>> =
        [("a".to_owned(), ["b".to_owned()].into())].into();
    assert!(cycles(&nodes, &layered).is_empty());
}
