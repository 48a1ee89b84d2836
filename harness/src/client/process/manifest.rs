//! What an adapter declares about itself in `lockpick-adapter.json`, and the checks made on a
//! scenario's adapter command and `init` options when the scenario loads, before any server
//! starts.
//!
//! The declaration is a file, not part of the hello, because the hello comes only after a
//! server and a proxy are up and the adapter has started: a typo in `init` would cost a whole
//! server start to find, and could not be refused by `lockpick list`. A file beside the
//! adapter is readable by every language without a library (JSON), so the Go and Java adapters
//! can add one as the Python, Node and Rust ones have:
//!
//! ```json
//! {"init": {"auto_renewal": "bool", "threshold_ms": "integer"}}
//! ```
//!
//! Types: `bool`, `integer`, `number`, `string`. The file is found from the command: the last
//! part naming an existing file (the script, or the program itself for a compiled adapter),
//! then `lockpick-adapter.json` in its folder or in one of the two folders above it (a binary
//! in `target/release/` finds the one beside its `Cargo.toml`).

use crate::processes::find_binary;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The file name of an adapter's declaration.
pub const MANIFEST: &str = "lockpick-adapter.json";

/// How many folders above the adapter's file are searched for the declaration.
const LEVELS_UP: usize = 2;

/// The type an `init` option must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InitType {
    Bool,
    Integer,
    Number,
    String,
}

impl InitType {
    fn fits(self, value: &toml::Value) -> bool {
        match self {
            InitType::Bool => value.is_bool(),
            InitType::Integer => value.is_integer(),
            InitType::Number => value.is_integer() || value.is_float(),
            InitType::String => value.is_str(),
        }
    }
}

impl fmt::Display for InitType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InitType::Bool => "a boolean (true or false)",
            InitType::Integer => "an integer",
            InitType::Number => "a number",
            InitType::String => "a string",
        })
    }
}

/// An adapter's declaration, as read from its file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The `init` options the adapter takes (its `extra`), and their types.
    #[serde(default)]
    pub init: BTreeMap<String, InitType>,
    /// What the library gives its users to use the lock safely, as its documentation tells
    /// them to: what `[client] discipline = "documented"` honours.
    #[serde(default)]
    pub gives: Gives,
    #[serde(skip)]
    pub path: PathBuf,
}

/// What a library gives its users besides the lock (`gives` in `lockpick-adapter.json`):
///
/// ```json
/// {"gives": {"notices": ["lost", "suspended", "reconnected"],
///            "token": "the lock node's sequence number",
///            "docs": "https://… (the page that tells users what to do with them)"}}
/// ```
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gives {
    /// The notices the adapter forwards (protocol events), of `lost`, `suspended`,
    /// `reconnected`.
    #[serde(default)]
    pub notices: Vec<String>,
    /// The fencing token the library hands each holder, in words; absent when it gives none.
    #[serde(default)]
    pub token: Option<String>,
    /// Where the library's documentation says how to use them.
    #[serde(default)]
    pub docs: Option<String>,
}

impl Gives {
    /// Whether it gives anything a documented holder acts on.
    pub fn anything(&self) -> bool {
        !self.notices.is_empty() || self.token.is_some()
    }
}

impl Manifest {
    /// Why `value` is not allowed for option `key`, or `None` if it is.
    pub fn refuse(&self, key: &str, value: &toml::Value) -> Option<String> {
        match self.init.get(key) {
            Some(ty) if ty.fits(value) => None,
            Some(ty) => Some(format!(
                "{} is not allowed; allowed: {ty} (declared in {})",
                describe(value),
                self.path.display()
            )),
            None => Some(format!(
                "the adapter takes no option `{key}`; allowed: {} (declared in {})",
                self.allowed(),
                self.path.display()
            )),
        }
    }

    fn allowed(&self) -> String {
        if self.init.is_empty() {
            return "none".to_owned();
        }
        self.init
            .iter()
            .map(|(k, ty)| format!("{k} ({ty})"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn describe(value: &toml::Value) -> String {
    match value {
        toml::Value::String(_) => format!("a string ({value})"),
        toml::Value::Integer(_) => format!("an integer ({value})"),
        toml::Value::Float(_) => format!("a float ({value})"),
        toml::Value::Boolean(_) => format!("a boolean ({value})"),
        toml::Value::Datetime(_) => format!("a date ({value})"),
        toml::Value::Array(_) => "an array".to_owned(),
        toml::Value::Table(_) => "a table".to_owned(),
    }
}

/// The declaration of the adapter `command` (paths already absolute) leads to: `Ok(None)` when
/// there is none, an error (naming the file) when there is one that cannot be read.
pub fn find(command: &[String]) -> Result<Option<Manifest>, String> {
    let Some(file) = command
        .iter()
        .rev()
        .map(Path::new)
        .find(|p| p.components().count() > 1 && p.is_file())
    else {
        return Ok(None);
    };
    let real = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_owned());
    let Some(path) = real
        .ancestors()
        .skip(1)
        .take(LEVELS_UP + 1)
        .map(|dir| dir.join(MANIFEST))
        .find(|p| p.is_file())
    else {
        return Ok(None);
    };
    read(&path).map(Some)
}

/// Reads the declaration at `path`; at most 64 KiB are read.
pub fn read(path: &Path) -> Result<Manifest, String> {
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(64 * 1024).read_to_string(&mut text))
        .map_err(|e| format!("{} cannot be read: {e}", path.display()))?;
    let mut manifest: Manifest = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{} is not an adapter declaration ({e}); allowed: {{\"init\": {{\"<option>\": \
             \"bool\" | \"integer\" | \"number\" | \"string\"}}, \"gives\": {{\"notices\": \
             [\"lost\", \"suspended\", \"reconnected\"], \"token\": \"<what it is>\", \"docs\": \
             \"<url>\"}}}}",
            path.display()
        )
    })?;
    if let Some(bad) = manifest
        .gives
        .notices
        .iter()
        .find(|n| !super::codec::EVENTS.contains(&n.as_str()))
    {
        return Err(format!(
            "{}: `gives.notices` names \"{bad}\"; allowed: {}",
            path.display(),
            super::codec::EVENTS.join(", ")
        ));
    }
    manifest.path = path.to_owned();
    Ok(manifest)
}

/// Runtimes an adapter may be run by, with the Debian package (or setup step) that brings
/// them: a missing one is an installation to make, not a typo in the scenario.
pub const RUNTIMES: &[(&str, &str)] = &[
    (
        "python3",
        "the Debian package `python3` (and `python3-venv`), or `bash scripts/setup`",
    ),
    (
        "python",
        "the Debian package `python-is-python3`, or name `python3`",
    ),
    (
        "node",
        "the Debian packages `nodejs` and `npm`, or `bash scripts/setup`",
    ),
    (
        "nodejs",
        "the Debian package `nodejs`, or `bash scripts/setup`",
    ),
    ("java", "the Debian package `default-jre-headless`"),
    ("go", "the Debian package `golang-go`"),
];

/// Folders in a path that an installation makes (a venv, npm packages, a build): a file under
/// one that is missing is not installed yet, not misspelt.
const INSTALLED: &[&str] = &["/.venv/", "/node_modules/", "/target/"];

/// Whether a missing `path` is something `bash scripts/setup` (or a build) makes.
pub fn is_installed_path(path: &str) -> bool {
    INSTALLED.iter().any(|dir| path.contains(dir))
}

/// Checks the command as the scenario gives it (paths absolute): its program exists (a bare
/// name on `PATH`), the files it names with `./` or `../` exist, and an interpreter is not
/// given a program as its script (`python3 .venv/bin/python adapter.py`). A runtime or an
/// installed file that is missing is left to the start, which says how to install it.
pub fn check_command(command: &[String], rebased: &[bool]) -> Result<(), String> {
    let Some((program, args)) = command.split_first() else {
        return Ok(());
    };
    let program_path = Path::new(program);
    let bare = program_path.components().count() == 1 && !program_path.is_absolute();
    let found = find_binary(program_path);
    if found.is_none() {
        let runtime = bare && RUNTIMES.iter().any(|(name, _)| *name == program);
        if !runtime && !is_installed_path(program) {
            let what = if bare {
                format!("program `{program}` is not on PATH")
            } else if program_path.exists() {
                format!("{program} is not an executable file")
            } else if !program_path.is_absolute() && !rebased.first().copied().unwrap_or(false) {
                // `.venv/bin/python`, meant beside the scenario: only ./ and ../ say so.
                let cwd = std::env::current_dir()
                    .map_or_else(|_| "?".to_owned(), |d| d.display().to_string());
                format!(
                    "{program} does not exist in lockpick's working directory ({cwd}); a path \
                     relative to the scenario file's folder starts with ./ or ../ (\"./{program}\")"
                )
            } else {
                format!("{program} does not exist")
            };
            return Err(format!(
                "{what}; allowed: a runtime on PATH (e.g. python3, node) or the path of an \
                 executable, then the adapter and its arguments"
            ));
        }
    }
    for (part, rebased) in command.iter().zip(rebased) {
        if *rebased && !Path::new(part).exists() && !is_installed_path(part) {
            return Err(format!(
                "{part} does not exist; allowed: paths relative to the scenario file's folder"
            ));
        }
    }
    if let (Some(program), Some(first)) = (found, args.first()) {
        if let Some(first_path) = find_binary(Path::new(first)) {
            if is_elf(&first_path) && is_elf(&program) {
                return Err(format!(
                    "`{}` is given the program {first} as its script (an interpreter named \
                     twice?); allowed: one program, then the adapter and its arguments, e.g. \
                     [\"{first}\", \"./adapter.py\"]",
                    command[0]
                ));
            }
        }
    }
    Ok(())
}

/// Whether `path` is a compiled program (ELF), not a script.
fn is_elf(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && magic == *b"\x7fELF"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn the_declaration_beside_the_script_or_two_folders_up_is_found_and_checks_types() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            MANIFEST,
            r#"{"init": {"auto_renewal": "bool"}}"#,
        );
        let binary = write(dir.path(), "target/release/adapter", "");
        let command = vec!["/bin/sh".to_owned(), binary.display().to_string()];
        let manifest = find(&command).unwrap().expect("two folders up");
        assert_eq!(
            manifest.refuse("auto_renewal", &toml::Value::Boolean(true)),
            None
        );
        let table = toml::Value::Table(toml::Table::new());
        let why = manifest.refuse("auto_renewal", &table).unwrap();
        assert!(
            why.starts_with("a table is not allowed; allowed: a boolean"),
            "{why}"
        );
        let why = manifest
            .refuse("auto_renwal", &toml::Value::Boolean(true))
            .unwrap();
        assert!(
            why.contains("takes no option `auto_renwal`; allowed: auto_renewal (a boolean"),
            "{why}"
        );
        assert!(find(&["/bin/sh".to_owned()]).unwrap().is_none());
    }

    #[test]
    fn a_declaration_that_is_not_one_is_an_error_naming_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), MANIFEST, r#"{"init": {"x": "boolean"}}"#);
        let e = read(&path).unwrap_err();
        assert!(
            e.contains(&path.display().to_string()) && e.contains("\"bool\""),
            "{e}"
        );
    }

    #[test]
    fn unknown_programs_missing_scripts_and_doubled_interpreters_are_usage_errors() {
        let dir = tempfile::tempdir().unwrap();
        let script = write(dir.path(), "adapter.py", "").display().to_string();
        let sh = find_binary(Path::new("sh")).unwrap().display().to_string();
        let ok = [sh.clone(), script.clone()];
        assert_eq!(check_command(&ok, &[false, true]), Ok(()));
        let typo = ["pyhton3".to_owned(), script.clone()];
        let Err(e) = check_command(&typo, &[false, true]) else {
            panic!("a program not on PATH is a usage error");
        };
        assert!(e.starts_with("program `pyhton3` is not on PATH"), "{e}");
        let gone = [sh.clone(), dir.path().join("gone.py").display().to_string()];
        let Err(e) = check_command(&gone, &[false, true]) else {
            panic!("a missing script is a usage error");
        };
        assert!(e.contains("gone.py does not exist"), "{e}");
        // A venv beside the scenario named without ./ is looked for elsewhere: say where.
        let beside = ["no-such-venv/bin/python".to_owned(), script.clone()];
        let Err(e) = check_command(&beside, &[false, true]) else {
            panic!("a relative program that is not there is a usage error");
        };
        assert!(
            e.contains("in lockpick's working directory")
                && e.contains("(\"./no-such-venv/bin/python\")"),
            "{e}"
        );
        let doubled = ["sh".to_owned(), sh.clone(), script];
        let Err(e) = check_command(&doubled, &[false, false, true]) else {
            panic!("an interpreter named twice is a usage error");
        };
        assert!(e.contains("an interpreter named twice"), "{e}");
        // A runtime or a venv that is not installed yet is left to the start's install hint.
        let venv = ["/nowhere/.venv/bin/python".to_owned()];
        assert_eq!(check_command(&venv, &[true]), Ok(()));
    }
}
