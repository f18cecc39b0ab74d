//! The client API each simulated replica host serves next to the peer router: write a
//! transaction, read a key linearizably, report status. It calls the real [`Replica`] handle,
//! exactly what the node crate's storage backend calls, but skips the resource API's HTTP
//! pipeline so that a scenario's history is about the replicated store alone.
//!
//! Failures are answered `503 Service Unavailable` (the replica could not do it now, e.g. no
//! leader or no quorum) or `400 Bad Request` (an undecodable body); the client records either as
//! an unknown outcome.

mod messages;

use std::sync::Arc;

use apiary_raft::command::Txn;
use apiary_raft::replica::Replica;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use bytes::Bytes;
pub use messages::ReadReply;
pub use messages::ReadRequest;
pub use messages::StatusReply;
use prost::Message;

/// Path of the write endpoint: body [`Txn`], answer `CommandResponse`.
pub const WRITE_PATH: &str = "/sim/write";
/// Path of the read endpoint: body [`ReadRequest`], answer [`ReadReply`].
pub const READ_PATH: &str = "/sim/read";
/// Path of the status endpoint: empty body, answer [`StatusReply`].
pub const STATUS_PATH: &str = "/sim/status";

type Failure = (StatusCode, String);

/// The client API over `replica`.
pub fn client_router(replica: Arc<Replica>) -> Router {
    Router::new()
        .route(WRITE_PATH, post(write))
        .route(READ_PATH, post(read))
        .route(STATUS_PATH, post(status))
        .with_state(replica)
}

fn bad_request(error: prost::DecodeError) -> Failure {
    (StatusCode::BAD_REQUEST, error.to_string())
}

fn unavailable(error: impl std::error::Error) -> Failure {
    (StatusCode::SERVICE_UNAVAILABLE, error.to_string())
}

async fn write(State(replica): State<Arc<Replica>>, body: Bytes) -> Result<Vec<u8>, Failure> {
    let txn = Txn::decode(body).map_err(bad_request)?;
    let response = replica.write(txn).await.map_err(unavailable)?;
    Ok(response.encode_to_vec())
}

async fn read(State(replica): State<Arc<Replica>>, body: Bytes) -> Result<Vec<u8>, Failure> {
    let request = ReadRequest::decode(body).map_err(bad_request)?;
    replica.read_index().await.map_err(unavailable)?;
    // After the read index the local store is at least as new as every write acknowledged
    // before this read began, so reading its current state is linearizable.
    let (revision, kv) = replica.with_store(|store| {
        let kv = store.get(&request.key, None);
        (store.revision(), kv)
    });
    let kv = kv.map_err(unavailable)?;
    Ok(ReadReply { revision, kv }.encode_to_vec())
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
