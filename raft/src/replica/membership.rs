//! Cluster membership: founding the cluster from the static `initial_cluster`, and joining an
//! existing one (the new replica asks the members at once; the leader adds it as a learner
//! marked for auto-promotion and answers once the promotion loop made it a voter). A replica an
//! operator added as a plain learner is answered at once: it stays a learner until promoted.

use std::collections::BTreeMap;
use std::collections::HashSet;
use std::future::Future;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::FuturesUnordered;

use openraft::async_runtime::watch::WatchReceiver;
use openraft::errors::InitializeError;
use openraft::errors::RaftError;
use openraft::metrics::WaitError;
use tokio::time::Instant;

use super::MemberChangeError;
use super::Replica;
use super::ReplicaError;
use crate::network::PeerCallError;
use crate::network::PeerClient;
use crate::network::replica_message::Failure;
use crate::network::replica_message::FailureKind;
use crate::network::replica_message::JoinRequest;
use crate::network::replica_message::JoinResponse;
use crate::network::replica_message::NotLeader;
use crate::network::replica_message::join_response::Outcome;
use crate::network::rpc;
use crate::typ;
use crate::typ::NodeId;

/// The longest pause between join attempts.
const MAX_JOIN_BACKOFF: Duration = Duration::from_secs(2);

impl Replica {
    /// Founds the cluster from `initial_cluster` when the log is pristine. Every founding
    /// member does this; openraft refuses all but a pristine node, which is success here.
    pub(super) async fn found_cluster(&self) -> Result<(), ReplicaError> {
        if self
            .raft
            .is_initialized()
            .await
            .map_err(ReplicaError::Raft)?
        {
            return Ok(());
        }
        let members: BTreeMap<NodeId, typ::Node> = self
            .initial_cluster
            .iter()
            .map(|(id, url)| (*id, typ::Node::new(url.clone())))
            .collect();
        match self.raft.initialize(members).await {
            Ok(()) | Err(RaftError::APIError(InitializeError::NotAllowed(_))) => Ok(()),
            Err(e) => Err(ReplicaError::Initialize(e.to_string())),
        }
    }

    /// Starts asking the cluster, in the background, to admit this replica. Also done on every
    /// restart: a replica stopped between becoming a learner and becoming a voter must still
    /// be promoted, and asking is idempotent (a voter is answered at once).
    pub(super) fn start_joining(&self) {
        let targets: Vec<String> = self
            .initial_cluster
            .iter()
            .filter(|(id, _)| **id != self.id)
            .map(|(_, url)| url.clone())
            .collect();
        let joiner = Joiner {
            peers: self.peers.clone(),
            request: JoinRequest {
                node_id: self.id,
                peer_url: self.peer_url.clone(),
            },
            targets,
            first_backoff: self.timings.heartbeat_interval,
            // The leader answers only after this replica caught up, which may take a snapshot.
            deadline: self.timings.request_timeout + self.timings.install_snapshot_timeout,
        };
        let task = tokio::spawn(joiner.run());
        *self.join_task.lock().unwrap_or_else(|e| e.into_inner()) = Some(task);
    }

    /// Leader side of a join: adds `node_id` as a learner marked for auto-promotion and waits
    /// until the promotion loop made it a voter. Idempotent: a voter is answered at once, and
    /// so is a learner an operator added without auto-promotion (it stays a learner).
    pub(crate) async fn admit(
        &self,
        node_id: NodeId,
        peer_url: String,
    ) -> Result<Admission, MemberChangeError> {
        self.ensure_leader()?;
        // A leader cut off from its quorum would add the learner and then wait for a commit
        // that never comes, holding the joiner for its whole deadline (35 s by default) while
        // the majority has long elected another leader. Confirming the leadership with a
        // quorum first makes such a leader answer "unavailable" within the request timeout,
        // and the joiner asks the next member.
        let deadline = Instant::now() + self.timings.request_timeout;
        self.local_read_index(deadline).await?;
        let (standing, index) = {
            let metrics = self.raft.metrics();
            let m = metrics.borrow_watched();
            let stored = &m.membership_config;
            let membership = stored.membership();
            let index = stored.log_id().as_ref().map_or(0, |l| l.index);
            let voter = membership.voter_ids().any(|id| id == node_id);
            let node = membership.get_node(&node_id).filter(|n| n.addr == peer_url);
            (node.map(|n| (voter, n.auto_promote)), index)
        };
        match standing {
            Some((true, _)) => return Ok(Admission::Voter(index)),
            Some((false, false)) => return Ok(Admission::Learner(index)),
            Some((false, true)) => {}
            None => {
                self.add_learner_local(node_id, peer_url, true, deadline)
                    .await?;
            }
        }
        // The leader answers only after the joiner caught up, which may take a snapshot.
        let patience = self.timings.request_timeout + self.timings.install_snapshot_timeout;
        let promoted = self
            .raft
            .wait(Some(patience))
            .metrics(
                |m| {
                    m.membership_config
                        .membership()
                        .voter_ids()
                        .any(|id| id == node_id)
                },
                "the joiner promoted to voter",
            )
            .await;
        match promoted {
            Ok(m) => {
                tracing::info!(node_id, "replica joined as voter");
                Ok(Admission::Voter(
                    m.membership_config.log_id().as_ref().map_or(0, |l| l.index),
                ))
            }
            Err(WaitError::Timeout(..)) => Err(MemberChangeError::Unavailable {
                reason: format!("node {node_id} has not caught up yet; ask again"),
            }),
            Err(e) => Err(MemberChangeError::Fatal {
                reason: e.to_string(),
            }),
        }
    }
}

/// What a join request made of the joiner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admission {
    /// A voter, since the membership at this log index.
    Voter(u64),
    /// A learner waiting for an operator to promote it, since this log index.
    Learner(u64),
}

/// The join RPC's answer for an admission's result.
pub(crate) fn join_outcome(result: Result<Admission, MemberChangeError>) -> Outcome {
    match result {
        Ok(Admission::Voter(index)) => Outcome::Joined(index),
        Ok(Admission::Learner(index)) => Outcome::Learner(index),
        Err(MemberChangeError::NotLeader {
            leader_id,
            leader_url,
        }) => Outcome::NotLeader(NotLeader {
            leader_id,
            leader_url,
        }),
        Err(
            e @ (MemberChangeError::Unavailable { .. } | MemberChangeError::OutcomeUnknown { .. }),
        ) => Outcome::Failed(Failure::new(FailureKind::Unavailable, e)),
        Err(e @ (MemberChangeError::Refused(_) | MemberChangeError::Fatal { .. })) => {
            Outcome::Failed(Failure::new(FailureKind::Fatal, e))
        }
    }
}

/// The joining replica's side: asks every member at once, follows leader redirects, asks again
/// after a back-off.
struct Joiner {
    peers: PeerClient,
    request: JoinRequest,
    targets: Vec<String>,
    first_backoff: Duration,
    deadline: Duration,
}

/// A join call's target and its answer.
type Asked = (String, Result<Option<Outcome>, PeerCallError>);

impl Joiner {
    /// Asks until a member admits this replica. Every member is asked at once, and whoever they
    /// name as the leader: the leader answers only once this replica caught up, so a call may
    /// rightly take long, and a member that does not answer at all (down, or cut off) must hold
    /// up only its own call, never the others'. A target that did not admit this replica is
    /// asked again after a back-off.
    async fn run(self) {
        let mut calls = FuturesUnordered::new();
        let mut asking: HashSet<String> = HashSet::new();
        for target in &self.targets {
            asking.insert(target.clone());
            calls.push(self.ask(target.clone(), Duration::ZERO));
        }
        let mut backoff = self.first_backoff;
        while let Some((target, answer)) = calls.next().await {
            asking.remove(&target);
            match answer {
                Ok(Some(Outcome::Joined(index))) => {
                    tracing::info!(index, via = %target, "joined the cluster");
                    return;
                }
                Ok(Some(Outcome::Learner(index))) => {
                    tracing::info!(index, via = %target, "a learner until promoted");
                    return;
                }
                Ok(Some(Outcome::NotLeader(NotLeader {
                    leader_url: Some(leader),
                    ..
                }))) => {
                    // Two stale replicas could name each other: pause briefly anyway.
                    if asking.insert(leader.clone()) {
                        calls.push(self.ask(leader, self.first_backoff));
                    }
                }
                Ok(other) => tracing::debug!(via = %target, ?other, "join not accepted"),
                Err(e) => tracing::debug!(via = %target, error = %e, "join call failed"),
            }
            if asking.insert(target.clone()) {
                calls.push(self.ask(target, backoff));
                backoff = (backoff * 2).min(MAX_JOIN_BACKOFF);
            }
        }
    }

    /// Asks `target` to admit this replica, after a pause of `after`.
    fn ask(&self, target: String, after: Duration) -> impl Future<Output = Asked> + use<> {
        let peers = self.peers.clone();
        let request = self.request.clone();
        let deadline = self.deadline;
        async move {
            tokio::time::sleep(after).await;
            let answer = peers
                .call::<_, JoinResponse>(&target, rpc::JOIN, &request, deadline)
                .await
                .map(|a| a.outcome);
            (target, answer)
        }
    }
}

#[cfg(test)]
#[path = "membership_test.rs"]
mod membership_test;
