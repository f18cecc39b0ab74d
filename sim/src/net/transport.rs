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
            reason: "not http://host:port".to_owned(),
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
        CallError::Status { status, body, .. } => TransportError::Rejected {
            target: target.to_owned(),
            rpc: rpc.to_owned(),
            status: status.as_u16(),
            message: String::from_utf8_lossy(&body).into_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use axum::Router;
    use axum::http::StatusCode;
    use axum::routing::post;

    use super::*;
    use crate::net::SimListener;

    const PEER: &str = "http://peer:7000";
    const DEADLINE: Duration = Duration::from_millis(500);

    async fn peer_host() -> turmoil::Result {
        let router = Router::new()
            .route("/raft/vote", post(|body: Bytes| async { body }))
            .route(
                "/raft/join",
                post(|| async { (StatusCode::SERVICE_UNAVAILABLE, "shutting down") }),
            );
        axum::serve(SimListener::bind(7000).await?, router).await?;
        Ok(())
    }

    // R-HA-013: over the simulated network the transport keeps the `Transport` contract: the
    // answer on success, `Rejected` for a refusal, `Unreachable` only when the request cannot
    // have been delivered (a partition drops the SYN), `Timeout` when the link stalls.
    #[test]
    fn errors_follow_the_transport_contract() {
        let mut sim = turmoil::Builder::new().rng_seed(3).build();
        sim.host("peer", peer_host);
        sim.client("replica", async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            let transport = SimTransport;
            let body = Bytes::from_static(b"ballot");

            let answer = transport.call(PEER, "vote", body.clone(), DEADLINE).await?;
            assert_eq!(answer, body);

            let refused = transport.call(PEER, "join", body.clone(), DEADLINE).await;
            assert!(
                matches!(&refused, Err(TransportError::Rejected { status: 503, message, .. }) if message == "shutting down"),
                "{refused:?}"
            );

            turmoil::partition("replica", "peer");
            let cut = transport.call(PEER, "vote", body.clone(), DEADLINE).await;
            assert!(matches!(cut, Err(TransportError::Unreachable { .. })), "{cut:?}");
            turmoil::repair("replica", "peer");

            turmoil::hold("replica", "peer");
            let stalled = transport.call(PEER, "vote", body.clone(), DEADLINE).await;
            assert!(matches!(stalled, Err(TransportError::Timeout { .. })), "{stalled:?}");
            turmoil::release("replica", "peer");

            let invalid = transport.call("peer", "vote", body, DEADLINE).await;
            assert!(
                matches!(invalid, Err(TransportError::InvalidTarget { .. })),
                "{invalid:?}"
            );
            Ok(())
        });
        sim.run().expect("simulation failed");
    }
}
