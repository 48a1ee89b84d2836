//! The `[client]` table of `kind = "process"`: the adapter's command (paths starting with
//! `./` or `../` resolved against the scenario file's real folder, symlinks resolved), extra
//! environment variables, and extra `init` fields, checked against what the adapter declares
//! it takes ([`super::manifest`]) and passed to it in `init`'s `extra`.
//!
//! ```toml
//! [client]
//! kind = "process"
//! command = ["node", "../clients/node/redlock-v5/adapter.js"]
//! env = { DEBUG = "redlock" }
//! init = { auto_extend = true }
//! ```

use super::{manifest, ProcessLock, ProcessParams, ProcessSpec};
use crate::client::kind::{BuildCtx, ClientKind, ClientOptions, Clients, LeaseFrom, Runs};
use crate::vocab::{ClientTable, Discipline, Located, ScenarioError};
use serde::Deserialize;
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use toml::Spanned;

/// The table as written.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessOptions {
    /// `"process"`; read by the scenario loader.
    #[serde(default)]
    pub kind: Option<Spanned<String>>,
    /// `"trusting"`, `"careful"` or `"documented"`; read by the scenario loader, and here
    /// where it is checked against what the adapter declares its library gives.
    #[serde(default)]
    pub discipline: Option<Spanned<String>>,
    /// Program and arguments.
    #[serde(default)]
    pub command: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Extra fields of the adapter's `init` (its `extra` object), each where the file says it.
    #[serde(default)]
    pub init: BTreeMap<String, Spanned<toml::Value>>,
}

impl ProcessOptions {
    /// The spec to start adapters with, relative paths resolved against `folder` (the
    /// scenario file's). The error reads after "client.command: ".
    pub fn spec(&self, folder: &Path) -> Result<ProcessSpec, String> {
        let command = self
            .command
            .as_ref()
            .map(|c| c.get_ref().as_slice())
            .unwrap_or_default();
        if command.is_empty() {
            return Err(
                "missing; allowed: the adapter's program and arguments, e.g. \
                 [\"node\", \"../clients/node/redlock-v4/adapter.js\"]"
                    .to_owned(),
            );
        }
        // Absolute, so that the adapter's paths hold whatever lockpick's working folder is
        // and a missing one is named before anything starts.
        let command = command.iter().map(|part| rebase(part, folder)).collect();
        let init: toml::Table = self
            .init
            .iter()
            .map(|(k, v)| (k.clone(), v.get_ref().clone()))
            .collect();
        let extra = match serde_json::to_value(&init) {
            Ok(Json::Object(map)) => map,
            _ => Map::new(),
        };
        Ok(ProcessSpec {
            command,
            env: self.env.clone().into_iter().collect(),
            extra,
        })
    }
}

/// Whether `part` of a command is a path relative to the scenario's folder.
fn is_relative(part: &str) -> bool {
    part.starts_with("./") || part.starts_with("../")
}

/// `part` of a command, made absolute against `folder` when it starts with `./` or `../`.
fn rebase(part: &str, folder: &Path) -> String {
    if is_relative(part) {
        // Absolute, so that the adapter's paths hold whatever lockpick's working folder is
        // and a missing one is named before anything starts.
        let folder = std::path::absolute(folder).unwrap_or_else(|_| folder.to_owned());
        folder.join(part).display().to_string()
    } else {
        part.to_owned()
    }
}

/// `[client] kind = "process"`: any program speaking the client protocol, on any server.
pub(crate) static KIND: ProcessKind = ProcessKind;

pub(crate) struct ProcessKind;

impl ClientKind for ProcessKind {
    fn name(&self) -> &'static str {
        "process"
    }

    fn about(&self) -> &'static str {
        "an adapter process speaking the client protocol (docs/client-protocol.md), e.g. a real lock library; token: whatever it reports"
    }

    fn runs_on(&self) -> Runs {
        Runs::Any
    }

    fn stops_inside_requests(&self) -> bool {
        true
    }

    fn lease_counted_from(&self) -> LeaseFrom {
        LeaseFrom::Reply
    }

    /// A library's user writes when the library says they hold the lock.
    fn default_discipline(&self) -> Discipline {
        Discipline::Trusting
    }

    fn takes_documented(&self) -> bool {
        true
    }

    /// An interpreter and a library per client process: the suite's adapter runs on Redis
    /// took about 3 s more than the built-in recipes' (median, 45 runs, 2 cores under load).
    fn start_cost_ms(&self) -> u64 {
        3000
    }

    fn options(&self, table: &ClientTable<'_>) -> Result<Arc<dyn ClientOptions>, ScenarioError> {
        let options: ProcessOptions = table.read()?;
        let command_span = options
            .command
            .as_ref()
            .map(Spanned::span)
            .or_else(|| options.kind.as_ref().map(Spanned::span))
            .unwrap_or(0..0);
        let command_error = |message| table.error(command_span.clone(), "client.command", message);
        let spec = options.spec(&table.folder()).map_err(command_error)?;
        let rebased: Vec<bool> = options
            .command
            .iter()
            .flat_map(|c| c.get_ref().iter().map(|p| is_relative(p)))
            .collect();
        let mut warnings = Vec::new();
        // What the adapter is and takes is checked against the file system here, but refused
        // only by `preflight` (when a scenario is loaded to run): a run's stored copy of the
        // scenario, read again by `check` from the run folder, keeps its relative paths.
        let preflight = (|| {
            manifest::check_command(&spec.command, &rebased).map_err(command_error)?;
            // A misspelt or mistyped option must not quietly run the library's other variant.
            let manifest = manifest::find(&spec.command).map_err(command_error)?;
            if let Some(d) = options
                .discipline
                .as_ref()
                .filter(|d| d.get_ref() == Discipline::Documented.name())
            {
                if let Some(why) = documented_problem(manifest.as_ref(), table, &spec) {
                    return Err(table.error(d.span(), "client.discipline", why));
                }
            }
            match manifest {
                Some(manifest) => {
                    for (key, value) in &options.init {
                        if let Some(why) = manifest.refuse(key, value.get_ref()) {
                            let field = format!("client.init.{key}");
                            return Err(table.error(value.span(), &field, why));
                        }
                    }
                }
                None if !options.init.is_empty() => warnings.push(format!(
                    "the adapter `{}` declares no options (no {} beside it, \
                     docs/client-protocol.md): [client] init ({}) is passed to it unchecked",
                    spec.command_line(),
                    manifest::MANIFEST,
                    options.init.keys().cloned().collect::<Vec<_>>().join(", ")
                )),
                None => {}
            }
            Ok(())
        })();
        let preflight = match preflight {
            Ok(()) => None,
            Err(ScenarioError::Invalid(located)) => Some(located),
            // `table.error` only makes located errors; anything else is returned as it is.
            Err(other @ (ScenarioError::Io { .. } | ScenarioError::UnknownName { .. })) => {
                return Err(other)
            }
        };
        Ok(Arc::new(ProcessClients {
            spec,
            warnings,
            preflight,
        }))
    }

    fn rebase_paths(&self, options: &mut toml::Table, folder: &Path) {
        if let Some(toml::Value::Array(parts)) = options.get_mut("command") {
            for part in parts {
                if let toml::Value::String(s) = part {
                    *s = rebase(s, folder);
                }
            }
        }
    }
}

/// Why `discipline = "documented"` cannot run with this adapter, if it cannot: documented use
/// follows what the library gives its users, which the adapter declares (`gives` in its
/// `lockpick-adapter.json`); a library that gives a fencing token is used documentedly only
/// against a resource that checks it.
fn documented_problem(
    manifest: Option<&manifest::Manifest>,
    table: &ClientTable<'_>,
    spec: &ProcessSpec,
) -> Option<String> {
    let Some(manifest) = manifest else {
        return Some(format!(
            "documented follows what the library gives its users (loss notices, a fencing token), which its adapter declares in {} (`gives`); `{}` has none beside it",
            manifest::MANIFEST,
            spec.command_line()
        ));
    };
    let gives = &manifest.gives;
    if !gives.anything() {
        return Some(format!(
            "the adapter declares that its library gives no notice and no fencing token (`gives` in {}): documented would be trusting; allowed here: trusting, careful",
            manifest.path.display()
        ));
    }
    if let Some(token) = &gives.token {
        if table.resource_mode().as_deref() != Some("fenced") {
            return Some(format!(
                "the library gives a fencing token ({token}, declared in {}), and its documented use checks it: set [resource] mode = \"fenced\"",
                manifest.path.display()
            ));
        }
    }
    None
}

/// The adapter command of a scenario, read; what the reader could not check; and what is
/// wrong with the command or its options on this machine, if anything.
#[derive(Debug)]
struct ProcessClients {
    spec: ProcessSpec,
    warnings: Vec<String>,
    preflight: Option<Located>,
}

impl ClientOptions for ProcessClients {
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    fn preflight(&self) -> Result<(), ScenarioError> {
        match &self.preflight {
            Some(located) => Err(ScenarioError::Invalid(located.clone())),
            None => Ok(()),
        }
    }

    fn build(&self, ctx: &BuildCtx<'_>) -> Result<Box<dyn Clients>, String> {
        let lock = ctx.lock;
        let params = ProcessParams {
            lock: lock.name.clone(),
            ttl_ms: lock.ttl_ms,
            acquire_timeout_ms: lock.acquire_timeout_ms,
            retry_delay: lock.retry_delay_ms,
            op_timeout_ms: lock.op_timeout_ms,
            watchdog: lock.watchdog,
        };
        let mut lock = ProcessLock::new(self.spec.clone(), &ctx.endpoints.addrs(), params);
        if let Some(sentinels) = &ctx.endpoints.sentinels {
            lock = lock.with_sentinels(sentinels.clone());
        }
        Ok(Box::new(Arc::new(lock)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<ProcessOptions, toml::de::Error> {
        toml::from_str(text)
    }

    #[test]
    fn relative_paths_resolve_against_the_scenario_folder_and_init_passes_through() {
        let options = read(
            r#"
            kind = "process"
            command = ["node", "../clients/node/redlock-v5/adapter.js", "./x", "--flag=a/b"]
            env = { DEBUG = "redlock" }
            init = { auto_extend = true, threshold_ms = 300 }
            "#,
        )
        .unwrap();
        let spec = options.spec(Path::new("/repo/scenarios")).unwrap();
        assert_eq!(options.kind.clone().unwrap().into_inner(), "process");
        assert_eq!(
            spec.command,
            [
                "node",
                "/repo/scenarios/../clients/node/redlock-v5/adapter.js",
                "/repo/scenarios/./x",
                "--flag=a/b"
            ]
        );
        assert_eq!(spec.env, [("DEBUG".to_owned(), "redlock".to_owned())]);
        assert_eq!(spec.extra["auto_extend"], Json::Bool(true));
        assert_eq!(spec.extra["threshold_ms"], Json::from(300));
    }

    #[test]
    fn a_missing_command_and_unknown_keys_are_errors() {
        let none = read(r#"kind = "process""#).unwrap();
        assert!(none.spec(Path::new(".")).unwrap_err().contains("missing"));
        let empty = read(r#"command = []"#).unwrap();
        assert!(empty.spec(Path::new(".")).unwrap_err().contains("missing"));
        let misspelt = read(r#"comand = ["node"]"#).unwrap_err().to_string();
        assert!(misspelt.contains("comand"), "{misspelt}");
    }
}
