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

use super::ProcessSpec;
use serde::Deserialize;
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::path::Path;

/// The table as written.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessOptions {
    /// `"process"`; read by the scenario loader.
    #[serde(default)]
    pub kind: Option<String>,
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
        let command = self
            .command
            .iter()
            .map(|part| {
                if part.starts_with("./") || part.starts_with("../") {
                    folder.join(part).display().to_string()
                } else {
                    part.clone()
                }
            })
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
