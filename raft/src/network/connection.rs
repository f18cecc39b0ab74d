//! openraft's per-peer network client ([`RaftNetworkV2`]) over the [`super::Transport`].
//!
//! Every call's outcome goes to the peer's [`PeerHealth`], which logs when the peer stops and
//! starts answering. Failures map to openraft's errors so that it backs off where it should:
//! replication to an `Unreachable` peer waits between attempts (openraft's `Config::backoff`,
//! 200 ms doubling up to 1 s); heartbeats keep their interval, so a peer that comes back is
//! heard of within one.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use openraft::errors::RPCError;
use openraft::errors::ReplicationClosed;
use openraft::errors::StreamingError;
use openraft::errors::Timeout;
use openraft::errors::Unreachable;
use openraft::network::RPCOption;
use openraft::network::RPCTypes;
use openraft::network::RaftNetworkV2;
use openraft::raft::AppendEntriesRequest;
use openraft::raft::AppendEntriesResponse;
use openraft::raft::SnapshotResponse;
use openraft::raft::TransferLeaderRequest;
use openraft::raft::TransferLeaderResponse;
use openraft::raft::VoteRequest;
use openraft::raft::VoteResponse;
use openraft::type_config::alias::SnapshotOf;

use super::PeerCallError;
use super::PeerClient;
use super::PeerHealth;
use super::TransportError;
use super::raft_message;
use super::rpc;
use crate::metrics::LatencyHistogram;
use crate::typ;
use crate::typ::NodeId;
use crate::typ::TypeConfig;
use crate::wire;

/// Sends raft RPCs to one peer.
#[derive(Debug)]
pub struct PeerConnection {
    pub(super) client: PeerClient,
    pub(super) local: NodeId,
    pub(super) target: NodeId,
    pub(super) url: String,
    /// The target's reachability, shared by every connection to it.
    pub(super) health: Arc<PeerHealth>,
    /// Round trips of append-entries calls to the target (etcd's
    /// `etcd_network_peer_round_trip_time_seconds`).
    pub(super) round_trips: LatencyHistogram,
}

impl PeerConnection {
    /// Records the outcome of a call in the target's [`PeerHealth`].
    fn observe<T>(&self, outcome: &Result<T, PeerCallError>) {
        match outcome {
            Ok(_) => self.health.record_answer(&self.url),
            Err(error) => self.health.record_failure(&self.url, error),
        }
    }

    /// Maps a failed call to openraft's error: a deadline that passed is a `Timeout` (retry
    /// soon); everything else, including an answer that does not decode, makes the peer
    /// `Unreachable` (back off first).
    fn rpc_error(&self, action: RPCTypes, e: PeerCallError) -> RPCError<TypeConfig> {
        match e {
            PeerCallError::Transport(TransportError::Timeout { deadline, .. }) => {
                RPCError::Timeout(Timeout {
                    action,
                    id: self.local,
                    target: self.target,
                    timeout: deadline,
                })
            }
            other => RPCError::Unreachable(Unreachable::new(&other)),
        }
    }
}

impl RaftNetworkV2<TypeConfig> for PeerConnection {
    type SnapshotData = Bytes;

    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<TypeConfig>, RPCError<TypeConfig>> {
        let request = raft_message::AppendEntriesRequest::from(rpc);
        let started = Instant::now();
        let answer = self
            .client
            .call::<_, raft_message::AppendEntriesResponse>(
                &self.url,
                rpc::APPEND_ENTRIES,
                &request,
                option.soft_ttl(),
            )
            .await;
        if answer.is_ok() {
            self.round_trips.observe(started.elapsed());
        }
        self.observe(&answer);
        let answer = answer.map_err(|e| self.rpc_error(RPCTypes::AppendEntries, e))?;
        AppendEntriesResponse::try_from(answer)
            .map_err(|e| RPCError::Unreachable(Unreachable::new(&e)))
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        let request = raft_message::VoteRequest::from(&rpc);
        let answer = self
            .client
            .call::<_, raft_message::VoteResponse>(
                &self.url,
                rpc::VOTE,
                &request,
                option.soft_ttl(),
            )
            .await;
        self.observe(&answer);
        let answer = answer.map_err(|e| self.rpc_error(RPCTypes::Vote, e))?;
        VoteResponse::try_from(answer).map_err(|e| RPCError::Unreachable(Unreachable::new(&e)))
    }

    async fn transfer_leader(
        &mut self,
        req: TransferLeaderRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<TransferLeaderResponse<TypeConfig>, RPCError<TypeConfig>> {
        let request = raft_message::TransferLeaderRequest::from(&req);
        let answer = self
            .client
            .call::<_, raft_message::TransferLeaderResponse>(
                &self.url,
                rpc::TRANSFER_LEADER,
                &request,
                option.soft_ttl(),
            )
            .await;
        self.observe(&answer);
        let answer = answer.map_err(|e| self.rpc_error(RPCTypes::TransferLeader, e))?;
        TransferLeaderResponse::try_from(answer)
            .map_err(|e| RPCError::Unreachable(Unreachable::new(&e)))
    }

    /// Asks the peer over [`rpc::PRE_VOTE`]. A peer that does not know that RPC (an older
    /// version, during a rolling upgrade) answers 404 and is counted as granting, as openraft
    /// does for networks without Pre-Vote, so mixed-version clusters still elect leaders.
    async fn pre_vote(
        &mut self,
        rpc: VoteRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<VoteResponse<TypeConfig>, RPCError<TypeConfig>> {
        let request = raft_message::VoteRequest::from(&rpc);
        let answer = self
            .client
            .call::<_, raft_message::VoteResponse>(
                &self.url,
                rpc::PRE_VOTE,
                &request,
                option.soft_ttl(),
            )
            .await;
        let without_pre_vote = matches!(
            &answer,
            Err(PeerCallError::Transport(TransportError::Rejected {
                status: 404,
                ..
            }))
        );
        if without_pre_vote {
            self.health.record_answer(&self.url);
        } else {
            self.observe(&answer);
        }
        match answer {
            Ok(answer) => VoteResponse::try_from(answer)
                .map_err(|e| RPCError::Unreachable(Unreachable::new(&e))),
            Err(PeerCallError::Transport(TransportError::Rejected { status: 404, .. })) => {
                Ok(VoteResponse::new(rpc.vote, None, true))
            }
            Err(e) => Err(self.rpc_error(RPCTypes::Vote, e)),
        }
    }

    async fn full_snapshot(
        &mut self,
        vote: typ::Vote,
        snapshot: SnapshotOf<TypeConfig, Bytes>,
        cancel: impl Future<Output = ReplicationClosed> + Send + 'static,
        option: RPCOption,
    ) -> Result<SnapshotResponse<TypeConfig>, StreamingError<TypeConfig>> {
        let request = raft_message::InstallSnapshotRequest {
            vote: Some(wire::Vote::from(&vote)),
            meta: Some(wire::SnapshotMeta::from(&snapshot.meta)),
            data: snapshot.snapshot,
        };
        let call = self
            .client
            .call::<_, raft_message::InstallSnapshotResponse>(
                &self.url,
                rpc::INSTALL_SNAPSHOT,
                &request,
                option.soft_ttl(),
            );
        let answer = tokio::select! {
            answer = call => answer,
            closed = cancel => return Err(StreamingError::Closed(closed)),
        };
        self.observe(&answer);
        let answer = answer.map_err(|e| match self.rpc_error(RPCTypes::InstallSnapshot, e) {
            RPCError::Timeout(t) => StreamingError::Timeout(t),
            RPCError::Unreachable(u) => StreamingError::Unreachable(u),
            RPCError::Network(n) => StreamingError::Network(n),
            RPCError::RemoteError(r) => StreamingError::Unreachable(Unreachable::new(&r)),
        })?;
        let vote = answer.vote.ok_or_else(|| {
            StreamingError::Unreachable(Unreachable::from_string("snapshot answer without a vote"))
        })?;
        Ok(SnapshotResponse::new(typ::Vote::from(vote)))
    }
}

#[cfg(test)]
#[path = "connection_test.rs"]
mod connection_test;
