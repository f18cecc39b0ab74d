//! `/readyz` for a replica: ready when it knows a leader and is not shutting down.

use std::sync::Arc;

use apiary_api::health::Readiness;
use apiary_raft::replica::Replica;
use tokio_util::sync::CancellationToken;

/// The readiness of one replica.
#[derive(Debug, Clone)]
pub struct ReplicaReadiness {
    replica: Arc<Replica>,
    stopping: CancellationToken,
}

impl ReplicaReadiness {
    /// Readiness of `replica`; not ready once `stopping` is cancelled, so load balancers stop
    /// sending requests while the replica drains.
    pub fn new(replica: Arc<Replica>, stopping: CancellationToken) -> Self {
        Self { replica, stopping }
    }
}

impl Readiness for ReplicaReadiness {
    fn check(&self) -> Result<(), String> {
        if self.stopping.is_cancelled() {
            return Err("shutting down".to_owned());
        }
        let status = self.replica.status();
        match status.leader {
            Some(_) => Ok(()),
            None => Err(format!(
                "replica {} knows no leader (term {}, applied {})",
                status.id, status.term, status.applied
            )),
        }
    }
}
