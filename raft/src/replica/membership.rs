//! Cluster membership: founding the cluster from the static `initial_cluster`, and joining an
//! existing one (the new replica asks a member; the leader adds it as a learner, waits until it
//! caught up, then promotes it to voter).

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::time::Duration;

use openraft::ChangeMembers;
use openraft::async_runtime::watch::WatchReceiver;
use openraft::errors::InitializeError;
use openraft::errors::RaftError;
use tokio::time::Instant;

use super::LeaderError;
use super::Replica;
use super::ReplicaError;
use crate::network::PeerClient;
use crate::network::replica_message::JoinRequest;
use crate::network::replica_message::JoinResponse;
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

    /// Leader side of a join: adds `node_id` as a learner, waits until it caught up, then makes
    /// it a voter. Returns the log index of the membership that made it a voter. Idempotent:
    /// a replica that is a voter already is answered at once.
    pub(crate) async fn admit(
        &self,
        node_id: NodeId,
        peer_url: String,
    ) -> Result<u64, LeaderError> {
        if self.leader().map(|(id, _)| id) != Some(self.id) {
            let leader = self.leader();
            return Err(LeaderError::NotLeader {
                leader_id: leader.as_ref().map(|(id, _)| *id),
                leader_url: leader.map(|(_, url)| url),
            });
        }
        // A leader cut off from its quorum would add the learner and then wait for a commit
        // that never comes, holding the joiner for its whole deadline (35 s by default) while
        // the majority has long elected another leader. Confirming the leadership with a
        // quorum first makes such a leader answer "unavailable" within the request timeout,
        // and the joiner asks the next member.
        let deadline = Instant::now() + self.timings.request_timeout;
        self.local_read_index(deadline).await?;
        let already = {
            let metrics = self.raft.metrics();
            let m = metrics.borrow_watched();
            let stored = &m.membership_config;
            stored
                .membership()
                .voter_ids()
                .any(|id| id == node_id)
                .then(|| stored.log_id().map_or(0, |l| l.index))
        };
        if let Some(index) = already {
            return Ok(index);
        }
        self.raft
            .add_learner(node_id, typ::Node::new(peer_url), true)
            .await
            .map_err(LeaderError::from_write)?;
        let promoted = self
            .raft
            .change_membership(ChangeMembers::AddVoterIds(BTreeSet::from([node_id])), false)
            .await
            .map_err(LeaderError::from_write)?;
        tracing::info!(node_id, "replica joined as voter");
        Ok(promoted.log_id.index)
    }
}

/// The joining replica's side: asks members in turn, follows leader redirects, backs off.
struct Joiner {
    peers: PeerClient,
    request: JoinRequest,
    targets: Vec<String>,
    first_backoff: Duration,
    deadline: Duration,
}

impl Joiner {
    async fn run(self) {
        let mut backoff = self.first_backoff;
        let mut redirect: Option<String> = None;
        loop {
            let candidates: Vec<String> = redirect
                .take()
                .into_iter()
                .chain(self.targets.iter().cloned())
                .collect();
            for target in candidates {
                let answer = self
                    .peers
                    .call::<_, JoinResponse>(&target, rpc::JOIN, &self.request, self.deadline)
                    .await;
                match answer.map(|a| a.outcome) {
                    Ok(Some(Outcome::Joined(index))) => {
                        tracing::info!(index, via = %target, "joined the cluster");
                        return;
                    }
                    Ok(Some(Outcome::NotLeader(n))) if n.leader_url.is_some() => {
                        redirect = n.leader_url;
                        break;
                    }
                    Ok(other) => tracing::debug!(via = %target, ?other, "join not accepted"),
                    Err(e) => tracing::debug!(via = %target, error = %e, "join call failed"),
                }
            }
            if redirect.is_some() {
                // Two stale replicas could redirect to each other: pause briefly anyway.
                tokio::time::sleep(self.first_backoff).await;
            } else {
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_JOIN_BACKOFF);
            }
        }
    }
}
