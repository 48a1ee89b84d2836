//! The one place that builds the command that repeats a run, so `scenario`, `suite`,
//! `compare`, `matrix` and `explore` print the same thing for the same run: in the words of
//! the binary that is running (`cargo run --` only when cargo started it in its checkout) and
//! with `--store` when the store is not the default, so that pasting it repeats the run where
//! it was made.

use lockpick_store::command_words::shell_word;
pub use lockpick_store::command_words::store_flag;
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The program and its leading words that run this lockpick again: `cargo run --` (or
/// `cargo run --release --`) when `cargo run` started it from its checkout and the current
/// folder is in that checkout, else the executable as it was invoked (`lockpick` found on the
/// PATH, `target/release/lockpick`, `/usr/local/bin/lockpick`).
pub fn program() -> &'static str {
    static PROGRAM: OnceLock<String> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        let argv0 = std::env::args_os().next();
        let exe = std::env::current_exe().ok();
        let manifest = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from);
        let cwd = std::env::current_dir().ok();
        program_from(&Invocation {
            argv0: argv0.as_deref(),
            exe: exe.as_deref(),
            via_cargo: std::env::var_os("CARGO").is_some(),
            manifest: manifest.as_deref(),
            cwd: cwd.as_deref(),
        })
    })
}

/// What [`program`] decides from, gathered once from the process.
struct Invocation<'a> {
    argv0: Option<&'a OsStr>,
    exe: Option<&'a Path>,
    /// `CARGO` is set: cargo (`cargo run`, `cargo test`) started this process or its parent.
    via_cargo: bool,
    /// `CARGO_MANIFEST_DIR`: the checkout cargo ran in.
    manifest: Option<&'a Path>,
    cwd: Option<&'a Path>,
}

fn program_from(inv: &Invocation<'_>) -> String {
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_owned());
    // `cargo run` is only the same binary when pasted inside the checkout it was built in.
    let in_checkout = match (inv.via_cargo, inv.manifest, inv.cwd) {
        (true, Some(manifest), Some(cwd)) => canonical(cwd).starts_with(canonical(manifest)),
        _ => false,
    };
    if in_checkout {
        let release = inv
            .exe
            .and_then(Path::parent)
            .and_then(Path::file_name)
            .is_some_and(|d| d == "release");
        return if release {
            "cargo run --release --".to_owned()
        } else {
            "cargo run --".to_owned()
        };
    }
    match inv.argv0.filter(|a| !a.is_empty()) {
        Some(a) => shell_word(&a.to_string_lossy()).into_owned(),
        // No argv[0] (a bare execve): the executable's own path still names it.
        None => inv.exe.map_or_else(
            || "lockpick".to_owned(),
            |e| shell_word(&e.display().to_string()).into_owned(),
        ),
    }
}

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
    /// `--store`: named in the command only when it is not [`DEFAULT_STORE`].
    pub store: Option<PathBuf>,
}

impl Reproduce {
    /// The command that repeats `scenario` at `seed` on the servers the options name (a
    /// Toxiproxy, external nodes, a resource) and into `store`, nothing else changed: a suite
    /// case's or a matrix cell's run.
    pub fn on_servers(
        scenario: String,
        seed: u64,
        toxiproxy: Option<SocketAddr>,
        external: &[SocketAddr],
        resource: Option<SocketAddr>,
        store: &Path,
    ) -> String {
        Reproduce {
            scenario,
            seed,
            toxiproxy: toxiproxy.map(|t| t.to_string()),
            external: external.to_vec(),
            resource,
            store: Some(store.to_owned()),
            ..Reproduce::default()
        }
        .command()
    }

    /// `PROGRAM scenario NAME --seed N` and every option that was given, in the words of the
    /// running binary ([`program`]).
    pub fn command(&self) -> String {
        self.command_as(program())
    }

    /// [`Reproduce::command`] with `program` for the binary's words.
    fn command_as(&self, program: &str) -> String {
        let mut cmd = format!(
            "{program} scenario {} --seed {}",
            shell_word(&self.scenario),
            self.seed
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
        // Last, so that the command reads as before when the store is the default.
        if let Some(s) = &self.store {
            cmd.push_str(&store_flag(s));
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
    use lockpick_store::command_words::DEFAULT_STORE;

    #[test]
    fn names_every_given_option_in_a_fixed_order() {
        let r = Reproduce {
            scenario: "redis-gc-pause".into(),
            seed: 7,
            time_limit: Some(2.5),
            soak: None,
            clients: Some(3),
            toxiproxy: Some("127.0.0.1:8474".into()),
            backend: Some("etcd".into()),
            external: vec![
                "127.0.0.1:1".parse().unwrap(),
                "127.0.0.1:2".parse().unwrap(),
            ],
            resource: Some("127.0.0.1:3".parse().unwrap()),
            store: Some("/tmp/my runs".into()),
        };
        assert_eq!(
            r.command_as("cargo run --"),
            "cargo run -- scenario redis-gc-pause --seed 7 --time-limit 2.5 --clients 3 \
             --toxiproxy 127.0.0.1:8474 --backend etcd --external 127.0.0.1:1,127.0.0.1:2 \
             --resource 127.0.0.1:3 --store '/tmp/my runs'"
        );
        let soak = Reproduce {
            scenario: "redis-gc-pause".into(),
            seed: 7,
            soak: Some("1h".into()),
            clients: Some(64),
            ..Reproduce::default()
        };
        assert_eq!(
            soak.command_as("cargo run --"),
            "cargo run -- scenario redis-gc-pause --seed 7 --soak 1h --clients 64"
        );
        let bare = Reproduce {
            scenario: "x".into(),
            seed: 1,
            store: Some(DEFAULT_STORE.into()),
            ..Reproduce::default()
        };
        assert_eq!(
            bare.command_as("/usr/local/bin/lockpick"),
            "/usr/local/bin/lockpick scenario x --seed 1"
        );
    }

    fn invocation<'a>(argv0: &'a str, cwd: &'a Path) -> Invocation<'a> {
        Invocation {
            argv0: Some(OsStr::new(argv0)),
            exe: Some(Path::new("/src/lockpick/target/debug/lockpick")),
            via_cargo: true,
            manifest: Some(Path::new("/src/lockpick")),
            cwd: Some(cwd),
        }
    }

    #[test]
    fn cargo_run_only_when_cargo_started_it_inside_its_checkout() {
        let inside = Path::new("/src/lockpick/scenarios");
        assert_eq!(
            program_from(&invocation("target/debug/lockpick", inside)),
            "cargo run --"
        );
        let release = Invocation {
            exe: Some(Path::new("/src/lockpick/target/release/lockpick")),
            ..invocation("target/release/lockpick", inside)
        };
        assert_eq!(program_from(&release), "cargo run --release --");
        // Outside the checkout, `cargo run` would not find it: the binary as invoked.
        let outside = invocation("/src/lockpick/target/debug/lockpick", Path::new("/tmp"));
        assert_eq!(
            program_from(&outside),
            "/src/lockpick/target/debug/lockpick"
        );
        // Not started by cargo: the binary as invoked, even inside the checkout.
        let by_hand = Invocation {
            via_cargo: false,
            ..invocation("target/release/lockpick", inside)
        };
        assert_eq!(program_from(&by_hand), "target/release/lockpick");
        let spaced = Invocation {
            via_cargo: false,
            ..invocation("/opt/my tools/lockpick", inside)
        };
        assert_eq!(program_from(&spaced), "'/opt/my tools/lockpick'");
    }
}
