//! openraft's network factory: one [`PeerConnection`] per target, addressed by the peer URL
//! recorded in the membership ([`openraft::BasicNode::addr`]). Connections to one target share
//! its [`PeerHealth`].

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::Mutex;

use openraft::network::RaftNetworkFactory;

use super::PeerClient;
use super::PeerConnection;
use super::PeerHealth;
use crate::metrics::StoreMetrics;
use crate::typ;
use crate::typ::NodeId;
use crate::typ::TypeConfig;

/// Each peer's reachability, by id, as the raft calls to it found it.
pub(crate) type PeerHealthMap = Arc<Mutex<BTreeMap<NodeId, Arc<PeerHealth>>>>;

/// Creates raft network clients over a shared [`PeerClient`].
#[derive(Debug, Clone)]
pub struct PeerNetworkFactory {
    client: PeerClient,
    local: NodeId,
    /// Each target's reachability, made at its first connection.
    health: PeerHealthMap,
    /// Where connections record their round trips.
    metrics: StoreMetrics,
}

impl PeerNetworkFactory {
    /// A factory for the replica `local`, recording round trips into `metrics`.
    pub fn new(client: PeerClient, local: NodeId, metrics: StoreMetrics) -> Self {
        Self {
            client,
            local,
            health: Arc::default(),
            metrics,
        }
    }

    /// The reachability of the peers this factory's clients call (shared, kept up to date).
    pub(crate) fn health(&self) -> PeerHealthMap {
        self.health.clone()
    }
}

impl RaftNetworkFactory<TypeConfig> for PeerNetworkFactory {
    type Network = PeerConnection;

    async fn new_client(&mut self, target: NodeId, node: &typ::Node) -> PeerConnection {
        let health = self
            .health
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(target)
            .or_insert_with(|| Arc::new(PeerHealth::new(target)))
            .clone();
        PeerConnection {
            client: self.client.clone(),
            local: self.local,
            target,
            url: node.addr.clone(),
            health,
            round_trips: self.metrics.round_trips_to(target),
        }
    }
}
