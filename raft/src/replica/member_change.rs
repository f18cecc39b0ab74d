//! Operator membership operations: adding a learner, promoting it to voter, and handing
//! leadership to a chosen voter. Each runs on the leader (a follower forwards it), is
//! idempotent, and is refused with a typed [`Refusal`] rather than weaken the cluster (a
//! conflicting id or URL, a learner that has not caught up, a successor that cannot lead).
//!
//! Changes are proposed with the membership they were judged against as a precondition, so a
//! change made in between (another operator, the auto-promotion loop) makes this one fail as
//! retryable instead of being silently combined with a stale judgement.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use openraft::ChangeMembers;
use openraft::Precondition;
use openraft::RaftMetrics;
use openraft::async_runtime::watch::WatchReceiver;
use tokio::time::Instant;

use super::MemberChangeError;
use super::Refusal;
use super::Replica;
use super::leader_call::LeaderTarget;
use super::member_rpc::member_retry;
use super::members::unexpected;
use crate::network::replica_message::AddLearnerRequest;
use crate::network::replica_message::PromoteRequest;
use crate::network::replica_message::TransferLeadershipRequest;
use crate::network::replica_message::member_change_response::Outcome;
use crate::network::rpc;
use crate::typ;
use crate::typ::NodeId;
use crate::typ::TypeConfig;

impl Replica {
    /// Adds `id` at `peer_url` as a learner (forwarded to the leader; idempotent for the same
    /// id and url; refuses an id already a voter or with another url, and a url already used
    /// by another member). With `auto_promote` the leader promotes it once caught up.
    /// Returns the membership's log index.
    pub async fn add_learner(
        &self,
        id: NodeId,
        peer_url: String,
        auto_promote: bool,
    ) -> Result<u64, MemberChangeError> {
        let deadline = Instant::now() + self.timings.request_timeout;
        let peer_url = &peer_url;
        self.at_leader(member_retry(deadline), |target| async move {
            match target {
                LeaderTarget::Local => {
                    self.add_learner_local(id, peer_url.clone(), auto_promote, deadline)
                        .await
                }
                LeaderTarget::Remote(url) => {
                    let request = AddLearnerRequest {
                        node_id: id,
                        peer_url: peer_url.clone(),
                        auto_promote,
                    };
                    let outcome = self
                        .forward_member_call(&url, rpc::ADD_LEARNER, &request, deadline)
                        .await?;
                    index_of(outcome)
                }
            }
        })
        .await
    }

    /// Promotes learner `id` to voter; refused (a typed, non-retryable "not caught up" error
    /// carrying the lag, as etcd refuses an unready learner) unless it answers heartbeats and
    /// is at most [`super::members::MAX_PROMOTION_LAG`] entries behind. Idempotent for a voter.
    /// Returns the membership's log index.
    pub async fn promote(&self, id: NodeId) -> Result<u64, MemberChangeError> {
        let deadline = Instant::now() + self.timings.request_timeout;
        self.at_leader(member_retry(deadline), |target| async move {
            match target {
                LeaderTarget::Local => self.promote_local(id, deadline).await,
                LeaderTarget::Remote(url) => {
                    let request = PromoteRequest { node_id: id };
                    let outcome = self
                        .forward_member_call(&url, rpc::PROMOTE, &request, deadline)
                        .await?;
                    index_of(outcome)
                }
            }
        })
        .await
    }

    /// Hands leadership to `to` (a voter that answers) or, with None, to the best voter;
    /// forwarded to the leader; returns the new leader once seen.
    pub async fn transfer_leadership_to(
        &self,
        to: Option<NodeId>,
    ) -> Result<NodeId, MemberChangeError> {
        let deadline = Instant::now() + self.timings.request_timeout;
        self.at_leader(member_retry(deadline), |target| async move {
            match target {
                LeaderTarget::Local => self.transfer_local(to, deadline).await,
                LeaderTarget::Remote(url) => {
                    let request = TransferLeadershipRequest { to };
                    match self
                        .forward_member_call(&url, rpc::TRANSFER_LEADERSHIP, &request, deadline)
                        .await?
                    {
                        Outcome::Leader(id) => Ok(id),
                        other => Err(unexpected(&other)),
                    }
                }
            }
        })
        .await
    }

    /// Leader side of [`Replica::add_learner`].
    pub(crate) async fn add_learner_local(
        &self,
        id: NodeId,
        peer_url: String,
        auto_promote: bool,
        deadline: Instant,
    ) -> Result<u64, MemberChangeError> {
        if id == 0 || peer_url.is_empty() {
            return Err(MemberChangeError::Fatal {
                reason: "a learner needs a node id (from 1) and a peer URL".to_string(),
            });
        }
        self.ensure_leader()?;
        let node = typ::Node {
            addr: peer_url,
            auto_promote,
        };
        let (observed, changes) = {
            let metrics = self.raft.metrics();
            let m = metrics.borrow_watched();
            let stored = &m.membership_config;
            let membership = stored.membership();
            let observed = *stored.log_id();
            let index = observed.as_ref().map_or(0, |l| l.index);
            let is_voter = membership.voter_ids().any(|v| v == id);
            if let Some(existing) = membership.get_node(&id) {
                if is_voter || existing.addr != node.addr {
                    return Err(MemberChangeError::Refused(Refusal::IdInUse {
                        node_id: id,
                        url: existing.addr.clone(),
                    }));
                }
                if existing.auto_promote == auto_promote {
                    return Ok(index);
                }
                // The same learner, asked to be promoted on its own or no longer: only its
                // intent changes, not its address.
                (
                    observed,
                    ChangeMembers::SetNodes(BTreeMap::from([(id, node)])),
                )
            } else {
                if let Some((other, _)) = membership.nodes().find(|(_, n)| n.addr == node.addr) {
                    return Err(MemberChangeError::Refused(Refusal::UrlInUse {
                        node_id: *other,
                        url: node.addr,
                    }));
                }
                (
                    observed,
                    ChangeMembers::AddNodes(BTreeMap::from([(id, node)])),
                )
            }
        };
        let index = self.change_members(changes, observed, deadline).await?;
        tracing::info!(node_id = id, auto_promote, index, "learner added");
        Ok(index)
    }

    /// Leader side of [`Replica::promote`].
    pub(crate) async fn promote_local(
        &self,
        id: NodeId,
        deadline: Instant,
    ) -> Result<u64, MemberChangeError> {
        self.ensure_leader()?;
        let observed = self
            .judged(deadline, |m| {
                let stored = &m.membership_config;
                let membership = stored.membership();
                if membership.voter_ids().any(|v| v == id) {
                    return Ok(Promotion::Voter(
                        stored.log_id().as_ref().map_or(0, |l| l.index),
                    ));
                }
                if membership.get_node(&id).is_none() {
                    return Err(Refusal::UnknownMember { node_id: id });
                }
                self.ready_to_vote(m, id)?;
                Ok(Promotion::Ready(*stored.log_id()))
            })
            .await?;
        let observed = match observed {
            Promotion::Ready(observed) => observed,
            Promotion::Voter(index) => return Ok(index),
        };
        let changes = ChangeMembers::AddVoterIds(BTreeSet::from([id]));
        let index = self.change_members(changes, observed, deadline).await?;
        tracing::info!(node_id = id, index, "learner promoted to voter");
        Ok(index)
    }

    /// Leader side of [`Replica::transfer_leadership_to`].
    pub(crate) async fn transfer_local(
        &self,
        to: Option<NodeId>,
        deadline: Instant,
    ) -> Result<NodeId, MemberChangeError> {
        self.ensure_leader()?;
        let limit = deadline.saturating_duration_since(Instant::now());
        let moved = match to {
            Some(id) if id == self.id => return Ok(id),
            Some(id) => {
                self.judged(deadline, |m| {
                    let voter = m
                        .membership_config
                        .membership()
                        .voter_ids()
                        .any(|v| v == id);
                    if voter && self.answers(m, id) {
                        Ok(())
                    } else {
                        Err(Refusal::CannotLead { node_id: id })
                    }
                })
                .await?;
                let limit = deadline.saturating_duration_since(Instant::now());
                self.hand_over(id, limit).await
            }
            None => self.transfer_leadership(limit).await,
        };
        moved.ok_or_else(|| MemberChangeError::Unavailable {
            reason: "no voter took leadership over in time".to_string(),
        })
    }

    /// Judges the leader's metrics with `judge`. A refusal may stem from metrics too fresh to
    /// tell (a leader elected a moment ago has heard no heartbeat answer yet), so a refusal is
    /// final only once `judge` kept refusing for an election timeout, or at `deadline`.
    pub(super) async fn judged<T>(
        &self,
        deadline: Instant,
        judge: impl Fn(&RaftMetrics<TypeConfig>) -> Result<T, Refusal>,
    ) -> Result<T, MemberChangeError> {
        let settled = deadline.min(Instant::now() + self.timings.election_timeout());
        loop {
            let verdict = {
                let metrics = self.raft.metrics();
                let m = metrics.borrow_watched();
                judge(&m)
            };
            match verdict {
                Ok(value) => return Ok(value),
                Err(refusal) if Instant::now() >= settled => {
                    return Err(MemberChangeError::Refused(refusal));
                }
                Err(_) => tokio::time::sleep(self.timings.heartbeat_interval).await,
            }
        }
    }

    /// Proposes `changes` unless the membership moved past `observed` meanwhile, and waits
    /// for the commit until `deadline`. Returns the new membership's log index.
    async fn change_members(
        &self,
        changes: ChangeMembers<NodeId, typ::Node>,
        observed: Option<typ::LogId>,
        deadline: Instant,
    ) -> Result<u64, MemberChangeError> {
        let guard = Precondition::LastMembershipLogId {
            last_membership_log_id: observed,
        };
        let change = self.raft.change_membership_if(changes, false, [guard]);
        match tokio::time::timeout_at(deadline, change).await {
            Ok(Ok(changed)) => Ok(changed.log_id.index),
            Ok(Err(e)) => Err(MemberChangeError::from_write(e)),
            Err(_) => Err(MemberChangeError::OutcomeUnknown {
                reason: "membership change not committed before the deadline".to_string(),
            }),
        }
    }
}

/// The membership index a leader's answer carries.
fn index_of(outcome: Outcome) -> Result<u64, MemberChangeError> {
    match outcome {
        Outcome::Index(index) => Ok(index),
        other => Err(unexpected(&other)),
    }
}

/// Where a learner to promote stands.
enum Promotion {
    /// A voter already, since the membership at this log index.
    Voter(u64),
    /// Ready to vote, judged against the membership at this log id.
    Ready(Option<typ::LogId>),
}
