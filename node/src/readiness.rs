//! `/readyz` for a replica: ready when it knows a leader, has applied everything it knows to be
//! committed, its start-up objects (system namespaces) exist, and it is not shutting down.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;

use apiary_api::health::Readiness;
use apiary_raft::replica::Replica;
use tokio_util::sync::CancellationToken;

/// The readiness of one replica. Clones share the state.
#[derive(Debug, Clone)]
pub struct ReplicaReadiness {
    replica: Arc<Replica>,
    bootstrapped: Arc<AtomicBool>,
    stopping: CancellationToken,
}

impl ReplicaReadiness {
    /// Readiness of `replica`; not ready before [`ReplicaReadiness::mark_bootstrapped`] (a
    /// client sent here as soon as it is ready must find the `default` namespace), nor once
    /// `stopping` is cancelled (load balancers stop sending requests while it drains).
    pub fn new(replica: Arc<Replica>, stopping: CancellationToken) -> Self {
        Self {
            replica,
            bootstrapped: Arc::new(AtomicBool::new(false)),
            stopping,
        }
    }

    /// Records that the start-up objects exist.
    pub fn mark_bootstrapped(&self) {
        self.bootstrapped.store(true, Ordering::Release);
    }
}

impl Readiness for ReplicaReadiness {
    fn check(&self) -> Result<(), String> {
        if self.stopping.is_cancelled() {
            return Err("shutting down".to_owned());
        }
        if !self.bootstrapped.load(Ordering::Acquire) {
            return Err("system namespaces not created yet".to_owned());
        }
        let status = self.replica.status();
        if status.leader.is_none() {
            return Err(format!(
                "replica {} knows no leader (term {}, applied {})",
                status.id, status.term, status.applied
            ));
        }
        // A replica still replaying its log would answer "Any" reads from an old state.
        if status.applied < status.committed {
            return Err(format!(
                "replica {} has applied {} of {} committed",
                status.id, status.applied, status.committed
            ));
        }
        Ok(())
    }
}
