//! Typed peer calls: encodes a protobuf request, sends it over the [`Transport`] and decodes
//! the answer.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use prost::Message;

use super::Transport;
use super::TransportError;

/// A peer call failed.
#[derive(Debug, thiserror::Error)]
pub enum PeerCallError {
    /// The transport produced no answer.
    #[error("peer call failed")]
    Transport(#[from] TransportError),
    /// The answer was not a valid protobuf message of the expected type (a buggy or
    /// incompatible peer; the request may have been acted on).
    #[error("peer answered {rpc} with an undecodable message")]
    Decode {
        /// The RPC name.
        rpc: String,
        /// The decoding failure.
        #[source]
        source: prost::DecodeError,
    },
}

impl PeerCallError {
    /// Whether the peer certainly did not act on the request, so resending it is safe.
    pub fn not_delivered(&self) -> bool {
        matches!(
            self,
            Self::Transport(TransportError::Unreachable { .. })
                | Self::Transport(TransportError::InvalidTarget { .. })
        )
    }
}

/// Sends typed protobuf requests to peers.
#[derive(Clone)]
pub struct PeerClient {
    transport: Arc<dyn Transport>,
}

impl std::fmt::Debug for PeerClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerClient").finish_non_exhaustive()
    }
}

impl PeerClient {
    /// A client over `transport`.
    pub fn new(transport: Arc<dyn Transport>) -> Self {
        Self { transport }
    }

    /// Calls `rpc` on the peer at `target` with `request`, within `deadline`.
    pub async fn call<Req, Resp>(
        &self,
        target: &str,
        rpc: &str,
        request: &Req,
        deadline: Duration,
    ) -> Result<Resp, PeerCallError>
    where
        Req: Message,
        Resp: Message + Default,
    {
        let body = Bytes::from(request.encode_to_vec());
        let answer = self.transport.call(target, rpc, body, deadline).await?;
        Resp::decode(answer).map_err(|source| PeerCallError::Decode {
            rpc: rpc.to_string(),
            source,
        })
    }
}
