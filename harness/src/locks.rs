//! Named locks: a server kind, a client kind on it, and the client's default options. These
//! are what `--backend`, `compare --backends` and a scenario's `[backend] kind = …`
//! shorthand name, and the rows a comparison of locks is made of.

use crate::backends::find_client;
use crate::backends::find_server;
use crate::client::ClientKind;
use crate::server::ServerKind;

/// One named lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockPreset {
    pub name: &'static str,
    /// Its server kind, by name.
    pub server: &'static str,
    /// Its client kind, by name; the client's options are its defaults.
    pub client: &'static str,
}

/// Every named lock. One line per lock.
pub static LOCKS: &[LockPreset] = &[
    lock("redis", "redis", "redis-lock"),
    lock("redis-naive", "redis", "redis-naive"),
    lock("etcd", "etcd", "etcd"),
    lock("zookeeper", "zookeeper", "zookeeper"),
    lock("redlock", "redis", "redlock"),
    lock("redis-sentinel", "redis-sentinel", "sentinel-lock"),
    lock("etcd-lock-service", "etcd", "etcd-lock-service"),
    lock("pg-lease-row", "postgres", "pg-lease-row"),
    lock("pg-advisory", "postgres", "pg-advisory"),
    lock("pg-for-update", "postgres", "pg-for-update"),
    lock("mysql-lease-row", "mariadb", "mysql-lease-row"),
    lock("mysql-get-lock", "mariadb", "mysql-get-lock"),
    lock("mysql-for-update", "mariadb", "mysql-for-update"),
];

const fn lock(name: &'static str, server: &'static str, client: &'static str) -> LockPreset {
    LockPreset {
        name,
        server,
        client,
    }
}

impl LockPreset {
    pub fn server_kind(&self) -> &'static dyn ServerKind {
        find_server(self.server).expect("every lock names a registered server kind (tested)")
    }

    pub fn client_kind(&self) -> &'static dyn ClientKind {
        find_client(self.client).expect("every lock names a registered client kind (tested)")
    }
}

/// The lock of that name.
pub fn find_lock(name: &str) -> Option<&'static LockPreset> {
    LOCKS.iter().find(|l| l.name == name)
}

/// The names of every lock, for "allowed:" lists.
pub fn lock_names() -> Vec<&'static str> {
    LOCKS.iter().map(|l| l.name).collect()
}

/// The name of the lock a server kind and a client kind make: the preset's when one matches,
/// else `<client>@<server>`.
pub fn lock_label(server: &dyn ServerKind, client: &dyn ClientKind) -> String {
    LOCKS
        .iter()
        .find(|l| l.server == server.name() && l.client == client.name())
        .map_or_else(
            || format!("{}@{}", client.name(), server.name()),
            |l| l.name.to_owned(),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_lock_is_a_client_on_a_server_it_runs_on() {
        for l in LOCKS {
            let (server, client) = (l.server_kind(), l.client_kind());
            assert!(client.runs_on().allows(server), "{}", l.name);
        }
        let mut names = lock_names();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), LOCKS.len());
    }
}
