//! The registry of client kinds: one line per kind.

use super::kind::ClientKind;

/// Every client kind, by name.
pub static CLIENTS: &[&dyn ClientKind] = &[
    &super::redis_lock::KIND,
    &super::redis_naive::KIND,
    &super::redlock::KIND,
    &super::redis_sentinel::KIND,
    &super::etcd_lock::KIND,
    &super::zk_lock::KIND,
    &super::etcd_lock_service::KIND,
    &super::process::KIND,
];

/// The client kind of that name, as a scenario file writes it.
pub fn find_client(name: &str) -> Option<&'static dyn ClientKind> {
    CLIENTS.iter().copied().find(|c| c.name() == name)
}

/// The names of every client kind, for "allowed:" lists.
pub fn client_names() -> Vec<&'static str> {
    CLIENTS.iter().map(|c| c.name()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_server_named_exists() {
        let mut names = client_names();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), CLIENTS.len());
        for c in CLIENTS {
            if let super::super::kind::Runs::On(servers) = c.runs_on() {
                for s in servers {
                    assert!(crate::server::find_server(s).is_some(), "{}: {s}", c.name());
                }
            }
        }
    }
}
