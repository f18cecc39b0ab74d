//! The members as a replica knows them (the effective membership, with the leader's view of
//! how far each member has replicated), and the leader-side judgements membership operations
//! share: who answers heartbeats, and whether a learner has caught up enough to vote.

use std::collections::BTreeSet;

use openraft::Instant as _;
use openraft::RaftMetrics;
use openraft::ServerState;
use openraft::async_runtime::watch::WatchReceiver;
use tokio::time::Instant;

use super::LeaderError;
use super::MemberChangeError;
use super::Refusal;
use super::Replica;
use super::leader_call::LeaderTarget;
use super::member_rpc::member_retry;
use super::member_rpc::members_from_wire;
use crate::network::replica_message::MembersRequest;
use crate::network::replica_message::member_change_response::Outcome;
use crate::network::rpc;
use crate::typ::NodeId;
use crate::typ::TypeConfig;

/// The most entries a learner may be behind the leader's log and still be promoted: a voter
/// further behind could not help commit for a while, and could cost the quorum meanwhile.
pub(super) const MAX_PROMOTION_LAG: u64 = 1_000;

/// A member's role in the effective membership.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The voter that leads.
    Leader,
    /// A voter that does not lead.
    Voter,
    /// Replicated to, but without a vote.
    Learner,
}

/// One member of the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Its node id.
    pub id: NodeId,
    /// Its peer URL.
    pub peer_url: String,
    /// Its role.
    pub role: Role,
    /// Promote on its own once caught up (set by `add_learner(.., true)` or by a start-up join).
    pub auto_promote: bool,
    /// The leader's view: the last log index known replicated to it (None off the leader or
    /// unknown).
    pub matched: Option<u64>,
    /// The leader's last log index minus `matched` (None when unknown).
    pub lag: Option<u64>,
}

impl Replica {
    /// The effective membership as this replica knows it, with the leader's replication view
    /// when this replica leads.
    pub fn members(&self) -> Vec<Member> {
        let metrics = self.raft.metrics();
        let m = metrics.borrow_watched();
        members_of(&m)
    }

    /// Members as the leader sees them (forwarded to the leader like remove_member), so
    /// `matched`/`lag` are filled on any replica.
    pub async fn members_from_leader(&self) -> Result<Vec<Member>, MemberChangeError> {
        let deadline = Instant::now() + self.timings.request_timeout;
        self.at_leader(member_retry(deadline), |target| async move {
            match target {
                LeaderTarget::Local => self.leader_members(),
                LeaderTarget::Remote(url) => {
                    let request = MembersRequest {};
                    match self
                        .forward_member_call(&url, rpc::MEMBERS, &request, deadline)
                        .await?
                    {
                        Outcome::Members(list) => members_from_wire(list),
                        other => Err(unexpected(&other)),
                    }
                }
            }
        })
        .await
    }

    /// Leader side of [`Replica::members_from_leader`].
    pub(crate) fn leader_members(&self) -> Result<Vec<Member>, MemberChangeError> {
        self.ensure_leader()?;
        Ok(self.members())
    }

    /// `Ok` when this replica leads, else who does as far as it knows.
    pub(super) fn ensure_leader(&self) -> Result<(), LeaderError> {
        match self.leader() {
            Some((id, _)) if id == self.id => Ok(()),
            leader => Err(LeaderError::NotLeader {
                leader_id: leader.as_ref().map(|(id, _)| *id),
                leader_url: leader.map(|(_, url)| url),
            }),
        }
    }

    /// On the leader's metrics: whether `id` acknowledged a heartbeat or replication within an
    /// election timeout ([`super::RaftTimings::election_timeout`]; the leader itself always answers).
    /// A member silent for longer is probably down.
    pub(super) fn answers(&self, m: &RaftMetrics<TypeConfig>, id: NodeId) -> bool {
        id == self.id
            || m.heartbeat
                .as_ref()
                .and_then(|acked| acked.get(&id).copied().flatten())
                .is_some_and(|at| at.elapsed() < self.timings.election_timeout())
    }

    /// On the leader's metrics: whether learner `id` may become a voter (it answers and is at
    /// most [`MAX_PROMOTION_LAG`] entries behind), else the refusal carrying its lag.
    pub(super) fn ready_to_vote(
        &self,
        m: &RaftMetrics<TypeConfig>,
        id: NodeId,
    ) -> Result<(), Refusal> {
        let lag = lag_of(m, id);
        match lag {
            Some(lag) if lag <= MAX_PROMOTION_LAG && self.answers(m, id) => Ok(()),
            _ => Err(Refusal::NotCaughtUp { node_id: id, lag }),
        }
    }
}

/// The leader's last log index minus what `id` acknowledged (None off the leader, or before
/// it acknowledged anything).
fn lag_of(m: &RaftMetrics<TypeConfig>, id: NodeId) -> Option<u64> {
    matched_of(m, id).map(|matched| m.last_log_index.unwrap_or(0).saturating_sub(matched))
}

/// The last log index known replicated to `id`, on the leader's metrics.
fn matched_of(m: &RaftMetrics<TypeConfig>, id: NodeId) -> Option<u64> {
    if m.state != ServerState::Leader {
        return None;
    }
    if id == m.id {
        return m.last_log_index;
    }
    m.replication
        .as_ref()
        .and_then(|replication| replication.get(&id).copied().flatten())
        .map(|log_id| log_id.index)
}

/// The members in `m`'s effective membership, by ascending id.
pub(super) fn members_of(m: &RaftMetrics<TypeConfig>) -> Vec<Member> {
    let membership = m.membership_config.membership();
    let voters: BTreeSet<NodeId> = membership.voter_ids().collect();
    membership
        .nodes()
        .map(|(id, node)| {
            let role = match (voters.contains(id), m.current_leader == Some(*id)) {
                (true, true) => Role::Leader,
                (true, false) => Role::Voter,
                (false, _) => Role::Learner,
            };
            Member {
                id: *id,
                peer_url: node.addr.clone(),
                role,
                auto_promote: node.auto_promote && role == Role::Learner,
                matched: matched_of(m, *id),
                lag: lag_of(m, *id),
            }
        })
        .collect()
}

/// A leader's answer that does not fit the request (a buggy peer).
pub(super) fn unexpected(outcome: &Outcome) -> MemberChangeError {
    MemberChangeError::Fatal {
        reason: format!("the leader answered with an unexpected outcome: {outcome:?}"),
    }
}
