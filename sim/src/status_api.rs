//! The status endpoint each simulated replica host serves next to the resource API: which
//! leader the replica follows, so that scenarios can aim faults at the leader. The resource API
//! has no such endpoint (`/readyz` only says whether some leader is known).

use std::sync::Arc;

use apiary_raft::replica::Replica;
use axum::Router;
use axum::extract::State;
use axum::routing::post;
use prost::Message;

/// The port every replica host serves the status endpoint on.
pub const STATUS_PORT: u16 = 8000;
/// Path of the status endpoint: empty body, answer [`StatusReply`].
pub const STATUS_PATH: &str = "/sim/status";

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
}

/// The status endpoint of `replica`.
pub fn status_router(replica: Arc<Replica>) -> Router {
    Router::new()
        .route(STATUS_PATH, post(status))
        .with_state(replica)
}

async fn status(State(replica): State<Arc<Replica>>) -> Vec<u8> {
    let status = replica.status();
    StatusReply {
        id: status.id,
        leader: status.leader,
        applied: status.applied,
    }
    .encode_to_vec()
}
