//! The one place that builds the command that repeats a run, so `scenario`, `suite` and
//! `compare` print the same thing for the same run.

use std::fmt::Write as _;
use std::net::SocketAddr;

/// The options of a run that change what it does, as the command line gives them.
#[derive(Debug, Clone, Default)]
pub struct Reproduce {
    pub scenario: String,
    pub seed: u64,
    pub time_limit: Option<f64>,
    /// `--soak`, as given (`1h`).
    pub soak: Option<String>,
    pub clients: Option<usize>,
    pub toxiproxy: Option<String>,
    pub backend: Option<String>,
    pub external: Vec<SocketAddr>,
    pub resource: Option<SocketAddr>,
}

impl Reproduce {
    /// The command that repeats `scenario` at `seed` on the servers the options name (a
    /// Toxiproxy, external nodes, a resource), nothing else changed: a suite case's or a
    /// matrix cell's run.
    pub fn on_servers(
        scenario: String,
        seed: u64,
        toxiproxy: Option<SocketAddr>,
        external: &[SocketAddr],
        resource: Option<SocketAddr>,
    ) -> String {
        Reproduce {
            scenario,
            seed,
            toxiproxy: toxiproxy.map(|t| t.to_string()),
            external: external.to_vec(),
            resource,
            ..Reproduce::default()
        }
        .command()
    }

    /// `cargo run -- scenario NAME --seed N` and every option that was given.
    pub fn command(&self) -> String {
        let mut cmd = format!(
            "cargo run -- scenario {} --seed {}",
            self.scenario, self.seed
        );
        if let Some(t) = self.time_limit {
            let _ = write!(cmd, " --time-limit {t}");
        }
        if let Some(s) = &self.soak {
            let _ = write!(cmd, " --soak {s}");
        }
        if let Some(c) = self.clients {
            let _ = write!(cmd, " --clients {c}");
        }
        if let Some(t) = &self.toxiproxy {
            let _ = write!(cmd, " --toxiproxy {t}");
        }
        if let Some(b) = &self.backend {
            let _ = write!(cmd, " --backend {b}");
        }
        if !self.external.is_empty() {
            let addrs: Vec<String> = self.external.iter().map(ToString::to_string).collect();
            let _ = write!(cmd, " --external {}", addrs.join(","));
        }
        if let Some(r) = self.resource {
            let _ = write!(cmd, " --resource {r}");
        }
        cmd
    }
}

/// ` --toxiproxy T --external A,B --resource R`, each only when given: the options that point
/// a suite or a matrix at servers other than its own, as its command line repeats them.
pub fn server_flags(
    toxiproxy: Option<SocketAddr>,
    external: &[SocketAddr],
    resource: Option<SocketAddr>,
) -> String {
    let mut out = String::new();
    if let Some(t) = toxiproxy {
        let _ = write!(out, " --toxiproxy {t}");
    }
    if !external.is_empty() {
        let addrs: Vec<String> = external.iter().map(ToString::to_string).collect();
        let _ = write!(out, " --external {}", addrs.join(","));
    }
    if let Some(r) = resource {
        let _ = write!(out, " --resource {r}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_every_given_option_in_a_fixed_order() {
        let r = Reproduce {
            scenario: "redis-gc-pause".into(),
            seed: 7,
            time_limit: Some(2.5),
            clients: Some(3),
            toxiproxy: Some("127.0.0.1:8474".into()),
            backend: Some("etcd".into()),
            external: vec![
                "127.0.0.1:1".parse().unwrap(),
                "127.0.0.1:2".parse().unwrap(),
            ],
            resource: Some("127.0.0.1:3".parse().unwrap()),
            soak: None,
        };
        assert_eq!(
            r.command(),
            "cargo run -- scenario redis-gc-pause --seed 7 --time-limit 2.5 --clients 3 \
             --toxiproxy 127.0.0.1:8474 --backend etcd --external 127.0.0.1:1,127.0.0.1:2 \
             --resource 127.0.0.1:3"
        );
        let bare = Reproduce {
            scenario: "x".into(),
            seed: 1,
            ..Reproduce::default()
        };
        assert_eq!(bare.command(), "cargo run -- scenario x --seed 1");
    }
}
