//! The `[client]` table of `kind = "process"`: the adapter's command (paths starting with
//! `./` or `../` resolved against the scenario file's folder), extra environment variables,
//! and extra `init` fields passed to the adapter as they are.
//!
//! ```toml
//! [client]
//! kind = "process"
//! command = ["node", "../clients/node/redlock-v5/adapter.js"]
//! env = { DEBUG = "redlock" }
//! init = { auto_extend = true }
//! ```

use super::{ProcessLock, ProcessParams, ProcessSpec};
use crate::client::kind::{BuildCtx, ClientKind, ClientOptions, Clients, Runs};
use crate::vocab::{ClientTable, ScenarioError};
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
    /// Program and arguments.
    #[serde(default)]
    pub command: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Extra fields of the adapter's `init` (its `extra` object).
    #[serde(default)]
    pub init: toml::Table,
}

impl ProcessOptions {
    /// The spec to start adapters with, relative paths resolved against `folder` (the
    /// scenario file's). The error reads after "client.command: ".
    pub fn spec(&self, folder: &Path) -> Result<ProcessSpec, String> {
        if self.command.is_empty() {
            return Err(
                "missing; allowed: the adapter's program and arguments, e.g. \
                 [\"node\", \"../clients/node/redlock-v4/adapter.js\"]"
                    .to_owned(),
            );
        }
        // Absolute, so that the adapter's paths hold whatever lockpick's working folder is
        // and a missing one is named before anything starts.
        let command = self
            .command
            .iter()
            .map(|part| rebase(part, folder))
            .collect();
        let extra = match serde_json::to_value(&self.init) {
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

/// `part` of a command, made absolute against `folder` when it starts with `./` or `../`.
fn rebase(part: &str, folder: &Path) -> String {
    if part.starts_with("./") || part.starts_with("../") {
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

    /// An interpreter and a library per client process: the suite's adapter runs on Redis
    /// took about 3 s more than the built-in recipes' (median, 45 runs, 2 cores under load).
    fn start_cost_ms(&self) -> u64 {
        3000
    }

    fn options(&self, table: &ClientTable<'_>) -> Result<Arc<dyn ClientOptions>, ScenarioError> {
        let options: ProcessOptions = table.read()?;
        let spec = options.spec(table.folder()).map_err(|message| {
            let span = options.kind.as_ref().map(Spanned::span).unwrap_or(0..0);
            table.error(span, "client.command", message)
        })?;
        Ok(Arc::new(ProcessClients(spec)))
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

/// The adapter command of a scenario, read.
#[derive(Debug)]
struct ProcessClients(ProcessSpec);

impl ClientOptions for ProcessClients {
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
        Ok(Box::new(Arc::new(ProcessLock::new(
            self.0.clone(),
            &ctx.endpoints.addrs(),
            params,
        ))))
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
        assert_eq!(options.kind.unwrap().into_inner(), "process");
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
        let misspelt = read(r#"comand = ["node"]"#).unwrap_err().to_string();
        assert!(misspelt.contains("comand"), "{misspelt}");
    }
}
