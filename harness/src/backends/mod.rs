//! Every backend lockpick can run, one folder each: the server kind (how many nodes, what they
//! can take, how they start behind the proxies), the process recipe of its nodes, its cluster
//! wiring, its node connection and the lock recipes lockpick builds on it. The roles' shared
//! machinery stays below (`db` supervises processes, `cluster` routes peer links, `client`
//! runs any lock, `server` says what a kind is); this module is the registry above them.
//!
//! Adding a backend is one folder here with a `BACKEND` entry, and one line in [`BACKENDS`].

pub mod etcd;
pub mod hazelcast;
pub mod mariadb;
pub mod postgres;
pub mod redis;
pub mod sql;
pub mod zookeeper;

use crate::client::ClientKind;
use crate::server::ServerKind;

/// What one backend folder adds: its server kinds, the built-in client kinds that take a lock
/// on them, and the Debian packages its servers come from (what `scripts/setup` installs and
/// a matrix records the versions of).
pub struct Backend {
    pub servers: &'static [&'static dyn ServerKind],
    pub clients: &'static [&'static dyn ClientKind],
    pub packages: &'static [&'static str],
}

/// Every backend, one line each, in the order listings show them.
pub static BACKENDS: &[&Backend] = &[
    &redis::BACKEND,
    &etcd::BACKEND,
    &zookeeper::BACKEND,
    &postgres::BACKEND,
    &mariadb::BACKEND,
    &hazelcast::BACKEND,
];

/// Client kinds that belong to no backend: a lock implemented by any program that speaks the
/// client protocol, on whatever servers its scenario names.
static ANY_BACKEND: &[&dyn ClientKind] = &[&crate::client::process::KIND];

/// The Debian packages every backend's servers come from, in listing order, then the one
/// clock faults need on any backend (libfaketime).
pub fn packages() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = BACKENDS
        .iter()
        .flat_map(|b| b.packages.iter().copied())
        .collect();
    out.push(crate::processes::faketime::LIBFAKETIME_PACKAGE);
    out
}

/// Every server kind, in listing order.
pub fn servers() -> impl Iterator<Item = &'static dyn ServerKind> {
    BACKENDS.iter().flat_map(|b| b.servers.iter().copied())
}

/// Every client kind, in listing order.
pub fn clients() -> impl Iterator<Item = &'static dyn ClientKind> {
    BACKENDS
        .iter()
        .flat_map(|b| b.clients.iter().copied())
        .chain(ANY_BACKEND.iter().copied())
}

/// The server kind of that name, as a scenario file writes it.
pub fn find_server(name: &str) -> Option<&'static dyn ServerKind> {
    servers().find(|s| s.name() == name)
}

/// The names of every server kind, for "allowed:" lists.
pub fn server_names() -> Vec<&'static str> {
    servers().map(|s| s.name()).collect()
}

/// The client kind of that name, as a scenario file writes it.
pub fn find_client(name: &str) -> Option<&'static dyn ClientKind> {
    clients().find(|c| c.name() == name)
}

/// The names of every client kind, for "allowed:" lists.
pub fn client_names() -> Vec<&'static str> {
    clients().map(|c| c.name()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::Runs;

    #[test]
    fn server_names_are_unique() {
        let mut names = server_names();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), servers().count());
    }

    #[test]
    fn client_names_are_unique_and_every_server_named_exists() {
        let mut names = client_names();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), clients().count());
        for c in clients() {
            if let Runs::On(servers) = c.runs_on() {
                for s in servers {
                    assert!(find_server(s).is_some(), "{}: {s}", c.name());
                }
            }
        }
    }

    #[test]
    fn scripts_setup_installs_every_backend_package() {
        let setup = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/setup");
        let text = std::fs::read_to_string(&setup).expect("scripts/setup");
        let listed: Vec<&str> = text
            .lines()
            .filter_map(|l| l.split('#').next()?.split_whitespace().next())
            .collect();
        for package in packages() {
            assert!(
                listed.contains(&package),
                "{package} is a backend's package but scripts/setup does not install it"
            );
        }
    }
}
