//! The server side of the peer RPCs: an axum router that decodes each protobuf request, hands
//! it to the replica and encodes the answer. It lives beside the replica it serves, so the
//! peer network below stays free of the replica (the replica uses the network's client side).
//!
//! Status codes: 200 with a protobuf body for every answer the protocol defines (including
//! "not the leader" and typed failures inside the body); 400 for a request that does not
//! decode or is invalid; 503 when raft has stopped. No input panics.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::DefaultBodyLimit;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::routing::post;
use openraft::raft::AppendEntriesRequest;
use openraft::raft::TransferLeaderRequest;
use openraft::raft::VoteRequest;
use openraft::type_config::alias::SnapshotOf;
use openraft::vote::RaftLeaderId;
use prost::Message;
use tokio::time::Instant;

use super::LeaderError;
use super::MemberChangeError;
use super::Replica;
use super::member_rpc::failure_outcome;
use super::member_rpc::members_to_wire;
use super::membership::join_outcome;
use super::removal_outcome;
use crate::command::CommandResponse;
use crate::mvcc::StoreSnapshot;
use crate::network::raft_message;
use crate::network::replica_message::AddLearnerRequest;
use crate::network::replica_message::ForwardWriteRequest;
use crate::network::replica_message::ForwardWriteResponse;
use crate::network::replica_message::ForwardWritesRequest;
use crate::network::replica_message::ForwardWritesResponse;
use crate::network::replica_message::JoinRequest;
use crate::network::replica_message::JoinResponse;
use crate::network::replica_message::MAX_FORWARD_WRITES;
use crate::network::replica_message::MemberChangeResponse;
use crate::network::replica_message::MembersRequest;
use crate::network::replica_message::PromoteRequest;
use crate::network::replica_message::ReadIndexResponse;
use crate::network::replica_message::RemoveMemberRequest;
use crate::network::replica_message::RemoveMemberResponse;
use crate::network::replica_message::TransferLeadershipRequest;
use crate::network::replica_message::forward_write_response;
use crate::network::replica_message::member_change_response;
use crate::network::replica_message::read_index_response;
use crate::network::rpc;
use crate::typ;
use crate::typ::TypeConfig;

/// Peer RPC bodies may carry whole snapshots.
const MAX_BODY: usize = 1 << 30;

/// The peer RPC routes, served by the node on its peer listener (mutual TLS) and by tests on
/// plain TCP.
pub fn peer_router(replica: Arc<Replica>) -> Router {
    let route = |name: &str| format!("{}{name}", rpc::PATH_PREFIX);
    Router::new()
        .route(&route(rpc::APPEND_ENTRIES), post(append_entries))
        .route(&route(rpc::VOTE), post(vote))
        .route(&route(rpc::PRE_VOTE), post(pre_vote))
        .route(&route(rpc::INSTALL_SNAPSHOT), post(install_snapshot))
        .route(&route(rpc::TRANSFER_LEADER), post(transfer_leader))
        .route(&route(rpc::FORWARD_WRITE), post(forward_write))
        .route(&route(rpc::FORWARD_WRITES), post(forward_writes))
        .route(&route(rpc::READ_INDEX), post(read_index))
        .route(&route(rpc::JOIN), post(join))
        .route(&route(rpc::REMOVE_MEMBER), post(remove_member))
        .route(&route(rpc::MEMBERS), post(members))
        .route(&route(rpc::ADD_LEARNER), post(add_learner))
        .route(&route(rpc::PROMOTE), post(promote))
        .route(&route(rpc::TRANSFER_LEADERSHIP), post(transfer_leadership))
        .route(&route(rpc::REPORT), post(super::report::serve_report))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .with_state(replica)
}

fn ok(message: &impl Message) -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, "application/x-protobuf")],
        message.encode_to_vec(),
    )
        .into_response()
}

fn bad_request(what: impl std::fmt::Display) -> Response {
    (StatusCode::BAD_REQUEST, what.to_string()).into_response()
}

fn unavailable(what: impl std::fmt::Display) -> Response {
    (StatusCode::SERVICE_UNAVAILABLE, what.to_string()).into_response()
}

/// Decodes a protobuf request; the error is the 400 answer's text.
fn decode<M: Message + Default>(body: Bytes) -> Result<M, String> {
    M::decode(body).map_err(|e| e.to_string())
}

/// Decodes a protobuf request and converts it to its openraft form.
fn decode_into<W, T>(body: Bytes) -> Result<T, String>
where
    W: Message + Default,
    T: TryFrom<W>,
    T::Error: std::fmt::Display,
{
    T::try_from(decode::<W>(body)?).map_err(|e| e.to_string())
}

async fn append_entries(State(replica): State<Arc<Replica>>, body: Bytes) -> Response {
    let request =
        match decode_into::<raft_message::AppendEntriesRequest, AppendEntriesRequest<TypeConfig>>(
            body,
        ) {
            Ok(r) => r,
            Err(e) => return bad_request(e),
        };
    match replica.raft().append_entries(request).await {
        Ok(answer) => ok(&raft_message::AppendEntriesResponse::from(&answer)),
        Err(e) => unavailable(e),
    }
}

async fn vote(State(replica): State<Arc<Replica>>, body: Bytes) -> Response {
    let request = match decode_into::<raft_message::VoteRequest, VoteRequest<TypeConfig>>(body) {
        Ok(r) => r,
        Err(e) => return bad_request(e),
    };
    match replica.raft().vote(request).await {
        Ok(answer) => ok(&raft_message::VoteResponse::from(&answer)),
        Err(e) => unavailable(e),
    }
}

async fn pre_vote(State(replica): State<Arc<Replica>>, body: Bytes) -> Response {
    let request = match decode_into::<raft_message::VoteRequest, VoteRequest<TypeConfig>>(body) {
        Ok(r) => r,
        Err(e) => return bad_request(e),
    };
    match replica.raft().pre_vote(request).await {
        Ok(answer) => ok(&raft_message::VoteResponse::from(&answer)),
        Err(e) => unavailable(e),
    }
}

async fn transfer_leader(State(replica): State<Arc<Replica>>, body: Bytes) -> Response {
    let request = match decode_into::<
        raft_message::TransferLeaderRequest,
        TransferLeaderRequest<TypeConfig>,
    >(body)
    {
        Ok(r) => r,
        Err(e) => return bad_request(e),
    };
    match replica.raft().handle_transfer_leader(request).await {
        Ok(answer) => ok(&raft_message::TransferLeaderResponse::from(&answer)),
        Err(e) => unavailable(e),
    }
}

async fn install_snapshot(State(replica): State<Arc<Replica>>, body: Bytes) -> Response {
    let request = match decode::<raft_message::InstallSnapshotRequest>(body) {
        Ok(r) => r,
        Err(e) => return bad_request(e),
    };
    let (Some(vote), Some(meta)) = (request.vote, request.meta) else {
        return bad_request("snapshot request without vote or metadata");
    };
    let vote = typ::Vote::from(vote);
    let meta = match typ::SnapshotMeta::try_from(meta) {
        Ok(m) => m,
        Err(e) => return bad_request(e),
    };
    // openraft panics on a snapshot beyond the sender's leadership; no honest leader sends
    // one, so refuse it here rather than let a peer's input crash raft.
    if let Some(last) = &meta.last_log_id
        && last.leader_id.term > vote.leader_id.term()
    {
        return bad_request("snapshot is newer than the sender's term");
    }
    // A snapshot that does not decode would fail inside raft's state machine, which stops
    // raft; check it here so a bad peer message costs only a 400.
    let index = meta.last_log_id.as_ref().map_or(0, |l| l.index);
    match StoreSnapshot::decode(request.data.clone()) {
        Ok(store) if store.revision == index => {}
        Ok(_) => return bad_request("snapshot data does not match its metadata"),
        Err(e) => return bad_request(e),
    }
    let snapshot = SnapshotOf::<TypeConfig, Bytes> {
        meta,
        snapshot: request.data,
    };
    match replica.raft().install_full_snapshot(vote, snapshot).await {
        Ok(answer) => ok(&raft_message::InstallSnapshotResponse {
            vote: Some(crate::wire::Vote::from(&answer.vote)),
        }),
        Err(e) => unavailable(e),
    }
}

async fn forward_write(State(replica): State<Arc<Replica>>, body: Bytes) -> Response {
    let request = match decode::<ForwardWriteRequest>(body) {
        Ok(r) => r,
        Err(e) => return bad_request(e),
    };
    let Some(command) = request.command else {
        return bad_request("forwarded write without a command");
    };
    let deadline = Instant::now() + replica.request_timeout();
    ok(&forward_answer(
        replica.propose_local(command, deadline).await,
    ))
}

/// Proposes a follower's batch of writes concurrently, and answers once every one has its
/// outcome.
async fn forward_writes(State(replica): State<Arc<Replica>>, body: Bytes) -> Response {
    let request = match decode::<ForwardWritesRequest>(body) {
        Ok(r) => r,
        Err(e) => return bad_request(e),
    };
    if request.commands.len() > MAX_FORWARD_WRITES {
        return bad_request(format!(
            "{} forwarded writes in one call, at most {MAX_FORWARD_WRITES}",
            request.commands.len()
        ));
    }
    let deadline = Instant::now() + replica.request_timeout();
    let proposals = request
        .commands
        .into_iter()
        .map(|command| replica.propose_local(command, deadline));
    let outcomes = futures::future::join_all(proposals).await;
    ok(&ForwardWritesResponse {
        outcomes: outcomes.into_iter().map(forward_answer).collect(),
    })
}

fn forward_answer(result: Result<CommandResponse, LeaderError>) -> ForwardWriteResponse {
    let outcome = match result {
        Ok(response) => return ForwardWriteResponse::applied(response),
        Err(e) => match e.not_leader() {
            Some(n) => forward_write_response::Outcome::NotLeader(n),
            None => forward_write_response::Outcome::Failed(e.failure()),
        },
    };
    ForwardWriteResponse {
        outcome: Some(outcome),
    }
}

async fn read_index(State(replica): State<Arc<Replica>>, _body: Bytes) -> Response {
    let deadline = Instant::now() + replica.request_timeout();
    let outcome = match replica.local_read_index(deadline).await {
        Ok(index) => read_index_response::Outcome::Index(index),
        Err(e) => match e.not_leader() {
            Some(n) => read_index_response::Outcome::NotLeader(n),
            None => read_index_response::Outcome::Failed(e.failure()),
        },
    };
    ok(&ReadIndexResponse {
        outcome: Some(outcome),
    })
}

async fn join(State(replica): State<Arc<Replica>>, body: Bytes) -> Response {
    let request = match decode::<JoinRequest>(body) {
        Ok(r) => r,
        Err(e) => return bad_request(e),
    };
    if request.node_id == 0 || request.peer_url.is_empty() {
        return bad_request("join request needs a node id and a peer URL");
    }
    let admitted = replica.admit(request.node_id, request.peer_url).await;
    ok(&JoinResponse {
        outcome: Some(join_outcome(admitted)),
    })
}

async fn remove_member(State(replica): State<Arc<Replica>>, body: Bytes) -> Response {
    let request = match decode::<RemoveMemberRequest>(body) {
        Ok(r) => r,
        Err(e) => return bad_request(e),
    };
    if request.node_id == 0 {
        return bad_request("removal request needs a node id");
    }
    let deadline = Instant::now() + replica.request_timeout();
    let result = replica.remove_local(request.node_id, deadline).await;
    ok(&RemoveMemberResponse {
        outcome: Some(removal_outcome(result)),
    })
}

/// The answer to a forwarded membership operation.
fn member_answer(result: Result<member_change_response::Outcome, MemberChangeError>) -> Response {
    let outcome = result.unwrap_or_else(failure_outcome);
    ok(&MemberChangeResponse {
        outcome: Some(outcome),
    })
}

async fn members(State(replica): State<Arc<Replica>>, body: Bytes) -> Response {
    if let Err(e) = decode::<MembersRequest>(body) {
        return bad_request(e);
    }
    let listed = replica.leader_members();
    member_answer(listed.map(|m| member_change_response::Outcome::Members(members_to_wire(&m))))
}

async fn add_learner(State(replica): State<Arc<Replica>>, body: Bytes) -> Response {
    let request = match decode::<AddLearnerRequest>(body) {
        Ok(r) => r,
        Err(e) => return bad_request(e),
    };
    if request.node_id == 0 || request.peer_url.is_empty() {
        return bad_request("a learner needs a node id and a peer URL");
    }
    let deadline = Instant::now() + replica.request_timeout();
    let added = replica
        .add_learner_local(
            request.node_id,
            request.peer_url,
            request.auto_promote,
            deadline,
        )
        .await;
    member_answer(added.map(member_change_response::Outcome::Index))
}

async fn promote(State(replica): State<Arc<Replica>>, body: Bytes) -> Response {
    let request = match decode::<PromoteRequest>(body) {
        Ok(r) => r,
        Err(e) => return bad_request(e),
    };
    if request.node_id == 0 {
        return bad_request("a promotion needs a node id");
    }
    let deadline = Instant::now() + replica.request_timeout();
    let promoted = replica.promote_local(request.node_id, deadline).await;
    member_answer(promoted.map(member_change_response::Outcome::Index))
}

async fn transfer_leadership(State(replica): State<Arc<Replica>>, body: Bytes) -> Response {
    let request = match decode::<TransferLeadershipRequest>(body) {
        Ok(r) => r,
        Err(e) => return bad_request(e),
    };
    if request.to == Some(0) {
        return bad_request("node ids start at 1");
    }
    let deadline = Instant::now() + replica.request_timeout();
    let moved = replica.transfer_local(request.to, deadline).await;
    member_answer(moved.map(member_change_response::Outcome::Leader))
}
