//! The sim-only endpoints each simulated replica host serves beside the resource API, on its
//! listener (the wiring's extra routes, [`apiary_node::wiring::HostParts::extra_routes`]): its
//! status (which leader it follows, the voters it knows, the cluster's effective version), so that scenarios can aim faults at
//! the leader and see a membership change through; and member removal, which calls the
//! replica's real [`Replica::remove_member`] (the resource API has no such endpoint).

use std::sync::Arc;

use apiary_node::cluster_version;
use apiary_raft::replica::RemoveMemberError;
use apiary_raft::replica::Replica;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::routing::post;
use prost::Message;

/// Path of the status endpoint: empty body, answer [`StatusReply`].
pub const STATUS_PATH: &str = "/sim/status";
/// Path of the removal endpoint: body [`RemoveRequest`], answer [`RemoveReply`] (200), or the
/// error's text with 503 (retryable), 409 (the last voter) or 500 (fatal).
pub const REMOVE_PATH: &str = "/sim/remove";

/// What a replica knows about the cluster (protobuf, like everything else that crosses the
/// simulated network).
#[derive(Clone, PartialEq, prost::Message)]
pub struct StatusReply {
    /// The replica's raft id.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// The leader it currently follows (or is), if any.
    #[prost(uint64, optional, tag = "2")]
    pub leader: Option<u64>,
    /// The newest revision it has applied.
    #[prost(uint64, tag = "3")]
    pub applied: u64,
    /// The voters of the membership it knows, ascending.
    #[prost(uint64, repeated, tag = "4")]
    pub voters: Vec<u64>,
    /// The cluster's effective version as its store holds it (0: unreadable).
    #[prost(uint32, tag = "5")]
    pub effective_version: u32,
}

/// Asks a replica to remove a member from the cluster.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RemoveRequest {
    /// The node id of the member to remove.
    #[prost(uint64, tag = "1")]
    pub node_id: u64,
}

/// A removal done.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RemoveReply {
    /// The log index of the membership without the member.
    #[prost(uint64, tag = "1")]
    pub index: u64,
}

/// The sim-only endpoints of `replica`.
pub fn status_router(replica: Arc<Replica>) -> Router {
    Router::new()
        .route(STATUS_PATH, post(status))
        .route(REMOVE_PATH, post(remove))
        .with_state(replica)
}

async fn status(State(replica): State<Arc<Replica>>) -> Vec<u8> {
    let status = replica.status();
    StatusReply {
        id: status.id,
        leader: status.leader,
        applied: status.applied,
        voters: status.voters.into_iter().collect(),
        effective_version: cluster_version::read(&replica).map_or(0, |v| v.effective),
    }
    .encode_to_vec()
}

async fn remove(State(replica): State<Arc<Replica>>, body: Bytes) -> Response {
    let request = match RemoveRequest::decode(body) {
        Ok(request) => request,
        Err(e) => return (StatusCode::BAD_REQUEST, e.to_string()).into_response(),
    };
    match replica.remove_member(request.node_id).await {
        Ok(index) => RemoveReply { index }.encode_to_vec().into_response(),
        Err(e) => {
            let status = match &e {
                RemoveMemberError::LastVoter { .. } | RemoveMemberError::Refused(_) => {
                    StatusCode::CONFLICT
                }
                RemoveMemberError::Fatal { .. } => StatusCode::INTERNAL_SERVER_ERROR,
                RemoveMemberError::Unavailable { .. }
                | RemoveMemberError::ForwardToLeader { .. }
                | RemoveMemberError::OutcomeUnknown { .. } => StatusCode::SERVICE_UNAVAILABLE,
            };
            (status, e.to_string()).into_response()
        }
    }
}
