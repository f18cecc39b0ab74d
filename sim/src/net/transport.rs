//! [`SimTransport`]: the replica's peer [`Transport`] over the simulated network, so openraft's
//! replication, votes, write forwarding and read index all cross turmoil links that scenarios
//! can partition, delay or cut.

use std::time::Duration;

use apiary_raft::network::Transport;
use apiary_raft::network::TransportError;
use apiary_raft::network::rpc;
use bytes::Bytes;

use super::CallError;
use super::post;

/// Peer RPCs as HTTP/1 POSTs over turmoil TCP, `{target}{rpc::PATH_PREFIX}{rpc}`, like the
/// production HTTP transport.
#[derive(Debug, Default, Clone, Copy)]
pub struct SimTransport;

#[async_trait::async_trait]
impl Transport for SimTransport {
    async fn call(
        &self,
        target: &str,
        rpc: &str,
        body: Bytes,
        deadline: Duration,
    ) -> Result<Bytes, TransportError> {
        let path = format!("{}{rpc}", rpc::PATH_PREFIX);
        post(target, &path, body, deadline)
            .await
            .map_err(|error| transport_error(target, rpc, error))
    }
}

/// Sorts a failed call into the transport's contract: only a failed connect proves the peer
/// never saw the request.
fn transport_error(target: &str, rpc: &str, error: CallError) -> TransportError {
    match error {
        CallError::InvalidUrl { url } => TransportError::InvalidTarget {
            target: url,
            reason: "no host:port authority".to_owned(),
        },
        CallError::Connect { source, .. } => TransportError::Unreachable {
            target: target.to_owned(),
            source: Box::new(source),
        },
        CallError::Http { source, .. } => TransportError::Broken {
            target: target.to_owned(),
            rpc: rpc.to_owned(),
            source: Box::new(source),
        },
        CallError::Request(source) => TransportError::InvalidTarget {
            target: target.to_owned(),
            reason: source.to_string(),
        },
        CallError::DeadlineExceeded { deadline } => TransportError::Timeout {
            target: target.to_owned(),
            rpc: rpc.to_owned(),
            deadline,
        },
        CallError::Status { status, body } => TransportError::Rejected {
            target: target.to_owned(),
            rpc: rpc.to_owned(),
            status: status.as_u16(),
            message: String::from_utf8_lossy(&body).into_owned(),
        },
    }
}
