//! Resetting an etcd cluster between runs that share it: every key deleted and every lease
//! revoked. The revision cannot go back: the lock's fencing token (a key's create revision)
//! only keeps growing across the runs an instance serves. That is harmless to the checker:
//! each run's history is checked alone, the resource is cleared before every run, and the
//! checks compare tokens within a run (a later grant must carry a greater token), which a
//! counter that started higher satisfies exactly as one that started at 1.

use crate::server::{BoxFuture, Endpoints, Reset};
use etcd_client::{Client, ConnectOptions, DeleteOptions};
use std::time::Duration;

pub(super) struct EtcdReset;

impl Reset for EtcdReset {
    fn reset<'a>(
        &'a self,
        endpoints: &'a Endpoints,
        limit: Duration,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let work = async {
                let options = ConnectOptions::new()
                    .with_connect_timeout(limit)
                    .with_timeout(limit)
                    .with_require_leader(true);
                let mut client = Client::connect(
                    endpoints
                        .addrs()
                        .iter()
                        .map(|a| a.to_string())
                        .collect::<Vec<_>>(),
                    Some(options),
                )
                .await
                .map_err(|e| format!("connect: {e}"))?;
                let leases = client
                    .leases()
                    .await
                    .map_err(|e| format!("list leases: {e}"))?;
                for lease in leases.leases() {
                    // A lease that expired between the list and the revoke is gone already.
                    if let Err(e) = client.lease_revoke(lease.id()).await {
                        if !e.to_string().contains("not found") {
                            return Err(format!("revoke lease {:x}: {e}", lease.id()));
                        }
                    }
                }
                client
                    .delete("", Some(DeleteOptions::new().with_all_keys()))
                    .await
                    .map_err(|e| format!("delete every key: {e}"))?;
                Ok(())
            };
            tokio::time::timeout(limit * 4, work)
                .await
                .map_err(|_| "timeout".to_owned())?
        })
    }

    fn settle(&self) -> Option<&'static dyn crate::server::Settle> {
        Some(&super::settle::EtcdSettle)
    }
}
