//! openraft's network factory: one [`PeerConnection`] per target, addressed by the peer URL
//! recorded in the membership ([`openraft::BasicNode::addr`]).

use openraft::network::RaftNetworkFactory;

use super::PeerClient;
use super::PeerConnection;
use crate::typ;
use crate::typ::NodeId;
use crate::typ::TypeConfig;

/// Creates raft network clients over a shared [`PeerClient`].
#[derive(Debug, Clone)]
pub struct PeerNetworkFactory {
    client: PeerClient,
    local: NodeId,
}

impl PeerNetworkFactory {
    /// A factory for the replica `local`.
    pub fn new(client: PeerClient, local: NodeId) -> Self {
        Self { client, local }
    }
}

impl RaftNetworkFactory<TypeConfig> for PeerNetworkFactory {
    type Network = PeerConnection;

    async fn new_client(&mut self, target: NodeId, node: &typ::Node) -> PeerConnection {
        PeerConnection {
            client: self.client.clone(),
            local: self.local,
            target,
            url: node.addr.clone(),
        }
    }
}
