//! Removing a member from the cluster: the leader drops it from the membership (not kept as a
//! learner); a follower forwards the request to the leader over the peer RPC, following
//! redirects, as the write path does. A leader asked to remove itself first hands leadership
//! to the best voter, which then removes it. A voter's removal is refused when fewer of the
//! remaining voters answer heartbeats than their quorum (etcd's "not enough started members"):
//! the change could not commit, and the cluster would be left unable to commit anything.
//!
//! What a removed replica that keeps running does (openraft 0.10, checked in its source,
//! `RaftCore::handle_tick_election` and `Engine::handle_vote_req` / `handle_pre_vote_req`):
//! - Once it knows the membership without it is committed, it is neither in the effective nor
//!   in the committed membership and never starts an election (`is_voter_in_effective_or_committed`).
//!   A removed leader keeps leading only until the entry removing it commits, then steps down.
//! - The leader stops replicating to it once the change commits, so it may never learn the
//!   commit. Until it does, the committed membership it knows still lists it and it may time
//!   out and campaign. With Pre-Vote (enabled in the replica's raft config) it only asks first, and
//!   every member that hears from a live leader refuses while the leader lease holds; so it
//!   neither bumps the members' term nor deposes their leader. Only when the members have lost
//!   their leader anyway can it win votes, and then only with a log as up to date as theirs
//!   (raft's election restriction), which is safe; it steps down as soon as the membership
//!   without it commits.
//! - Its own clients: a write sent to it is forwarded to the leader but never acknowledged by
//!   it, because it answers only after applying the write, and nothing is replicated to it any
//!   more; a quorum read needs a leader-confirmed read index it never reaches. It fails rather
//!   than serve stale data (`membership_changes` in the simulation checks this).

use std::collections::BTreeSet;

use openraft::ChangeMembers;
use openraft::async_runtime::watch::WatchReceiver;
use tokio::time::Instant;

use super::LeaderError;
use super::MemberChangeError;
use super::Refusal;
use super::RemoveMemberError;
use super::Replica;
use super::leader_call::LeaderTarget;
use super::leader_call::Retry;
use super::member_rpc::refusal_from_wire;
use super::member_rpc::refusal_to_wire;
use crate::network::replica_message::Failure;
use crate::network::replica_message::FailureKind;
use crate::network::replica_message::RemoveMemberRequest;
use crate::network::replica_message::RemoveMemberResponse;
use crate::network::replica_message::remove_member_response::Outcome;
use crate::network::rpc;
use crate::typ::NodeId;

/// Where `node_id` stands in the membership this replica knows.
enum Standing {
    /// Not a member: nothing to do; the membership's log index.
    Absent(u64),
    /// The only voter.
    LastVoter,
    /// A voter among others.
    Voter,
    /// A learner (a replica still joining).
    Learner,
}

impl Replica {
    /// Removes `node_id` from the cluster and returns the log index of the membership without
    /// it. On a follower the request is forwarded to the leader. Idempotent: removing a node
    /// that is not a member answers at once. Refuses to remove the last voter, and a voter
    /// without which too few voters answer ([`super::Refusal::WouldLoseQuorum`]); a learner is
    /// always removed. Removing the leader hands leadership over first; the new leader
    /// removes the old one.
    pub async fn remove_member(&self, node_id: NodeId) -> Result<u64, RemoveMemberError> {
        let deadline = Instant::now() + self.timings.request_timeout;
        let retry = Retry {
            deadline,
            max_attempts: u32::MAX,
            retryable: |e: &RemoveMemberError| {
                matches!(
                    e,
                    RemoveMemberError::Unavailable { .. }
                        | RemoveMemberError::ForwardToLeader { .. }
                )
            },
        };
        self.at_leader(retry, |target| async move {
            match target {
                LeaderTarget::Local => self.remove_local(node_id, deadline).await,
                LeaderTarget::Remote(url) => self.forward_removal(&url, node_id, deadline).await,
            }
        })
        .await
    }

    /// Leader side of a removal, bounded by `deadline` (a leader without quorum never commits).
    pub(crate) async fn remove_local(
        &self,
        node_id: NodeId,
        deadline: Instant,
    ) -> Result<u64, RemoveMemberError> {
        if self.leader().map(|(id, _)| id) != Some(self.id) {
            let leader = self.leader();
            return Err(RemoveMemberError::ForwardToLeader {
                leader_id: leader.as_ref().map(|(id, _)| *id),
                leader_url: leader.map(|(_, url)| url),
            });
        }
        let ids = BTreeSet::from([node_id]);
        let changes = match self.standing(node_id) {
            Standing::Absent(index) => return Ok(index),
            Standing::LastVoter => return Err(RemoveMemberError::LastVoter { node_id }),
            Standing::Voter => {
                self.keeps_quorum_without(node_id, deadline).await?;
                if node_id == self.id {
                    return Err(self.hand_over_before_leaving(deadline).await);
                }
                ChangeMembers::RemoveVoters(ids)
            }
            Standing::Learner => ChangeMembers::RemoveNodes(ids),
        };
        // `retain: false`: a removed voter does not stay on as a learner the leader keeps
        // replicating to.
        let change = self.raft.change_membership(changes, false);
        match tokio::time::timeout_at(deadline, change).await {
            Ok(Ok(changed)) => {
                tracing::info!(node_id, index = changed.log_id.index, "member removed");
                Ok(changed.log_id.index)
            }
            Ok(Err(e)) => Err(LeaderError::from_write(e).into()),
            Err(_) => Err(RemoveMemberError::OutcomeUnknown {
                reason: "membership change not committed before the deadline".to_string(),
            }),
        }
    }

    /// `Ok` when enough of the voters left without `node_id` answer heartbeats to make a
    /// quorum of them.
    async fn keeps_quorum_without(
        &self,
        node_id: NodeId,
        deadline: Instant,
    ) -> Result<(), RemoveMemberError> {
        self.judged(deadline, |m| {
            let remaining: Vec<NodeId> = m
                .membership_config
                .membership()
                .voter_ids()
                .filter(|id| *id != node_id)
                .collect();
            let answering = remaining.iter().filter(|id| self.answers(m, **id)).count();
            let quorum = remaining.len() / 2 + 1;
            if answering >= quorum {
                Ok(())
            } else {
                Err(Refusal::WouldLoseQuorum {
                    node_id,
                    answering: answering as u64,
                    quorum: quorum as u64,
                })
            }
        })
        .await
        .map_err(|e| match e {
            MemberChangeError::Refused(refusal) => RemoveMemberError::Refused(refusal),
            other => RemoveMemberError::Unavailable {
                reason: other.to_string(),
            },
        })
    }

    /// Hands this leader's leadership over before it is removed; the answer sends the removal
    /// to the new leader.
    async fn hand_over_before_leaving(&self, deadline: Instant) -> RemoveMemberError {
        let limit = deadline.saturating_duration_since(Instant::now());
        match self.transfer_leadership(limit).await {
            Some(new_leader) => {
                let url = self
                    .leader()
                    .filter(|(id, _)| *id == new_leader)
                    .map(|(_, url)| url);
                RemoveMemberError::ForwardToLeader {
                    leader_id: Some(new_leader),
                    leader_url: url,
                }
            }
            None => RemoveMemberError::Unavailable {
                reason: "leadership did not move before removing the leader".to_string(),
            },
        }
    }

    fn standing(&self, node_id: NodeId) -> Standing {
        let metrics = self.raft.metrics();
        let m = metrics.borrow_watched();
        let stored = &m.membership_config;
        let membership = stored.membership();
        let voters: BTreeSet<NodeId> = membership.voter_ids().collect();
        if voters.contains(&node_id) {
            if voters.len() == 1 {
                Standing::LastVoter
            } else {
                Standing::Voter
            }
        } else if membership.learner_ids().any(|id| id == node_id) {
            Standing::Learner
        } else {
            Standing::Absent(stored.log_id().map_or(0, |l| l.index))
        }
    }

    async fn forward_removal(
        &self,
        url: &str,
        node_id: NodeId,
        deadline: Instant,
    ) -> Result<u64, RemoveMemberError> {
        let remaining = deadline.saturating_duration_since(Instant::now());
        let answer: RemoveMemberResponse = self
            .peers
            .call(
                url,
                rpc::REMOVE_MEMBER,
                &RemoveMemberRequest { node_id },
                remaining,
            )
            .await
            .map_err(|e| {
                if e.not_delivered() {
                    RemoveMemberError::Unavailable {
                        reason: e.to_string(),
                    }
                } else {
                    RemoveMemberError::OutcomeUnknown {
                        reason: e.to_string(),
                    }
                }
            })?;
        match answer.outcome {
            Some(outcome) => outcome_result(outcome),
            None => Err(RemoveMemberError::OutcomeUnknown {
                reason: "leader answered a removal with nothing".to_string(),
            }),
        }
    }
}

/// The peer RPC's answer for a removal's result.
pub(crate) fn removal_outcome(result: Result<u64, RemoveMemberError>) -> Outcome {
    match result {
        Ok(index) => Outcome::Removed(index),
        Err(RemoveMemberError::ForwardToLeader {
            leader_id,
            leader_url,
        }) => Outcome::NotLeader(crate::network::replica_message::NotLeader {
            leader_id,
            leader_url,
        }),
        Err(RemoveMemberError::LastVoter { node_id }) => Outcome::LastVoter(node_id),
        Err(RemoveMemberError::Refused(refusal)) => Outcome::Refused(refusal_to_wire(&refusal)),
        Err(RemoveMemberError::Unavailable { reason }) => {
            Outcome::Failed(Failure::new(FailureKind::Unavailable, reason))
        }
        Err(RemoveMemberError::OutcomeUnknown { reason }) => {
            Outcome::Failed(Failure::new(FailureKind::OutcomeUnknown, reason))
        }
        Err(RemoveMemberError::Fatal { reason }) => {
            Outcome::Failed(Failure::new(FailureKind::Fatal, reason))
        }
    }
}

/// The removal's result a peer RPC's answer stands for; inverse of [`removal_outcome`].
fn outcome_result(outcome: Outcome) -> Result<u64, RemoveMemberError> {
    match outcome {
        Outcome::Removed(index) => Ok(index),
        Outcome::NotLeader(n) => Err(LeaderError::from(n).into()),
        Outcome::LastVoter(node_id) => Err(RemoveMemberError::LastVoter { node_id }),
        Outcome::Refused(refused) => match refusal_from_wire(refused) {
            Ok(refusal) => Err(RemoveMemberError::Refused(refusal)),
            Err(e) => Err(RemoveMemberError::Fatal {
                reason: e.to_string(),
            }),
        },
        Outcome::Failed(f) => Err(LeaderError::from(f).into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // R-HA-011: every removal result crosses the peer RPC unchanged, so a follower keeps
    // retryable, forward-to-leader, refused and fatal apart as the leader decided.
    #[test]
    fn every_removal_result_survives_the_peer_rpc() {
        let results = [
            Ok(7),
            Err(RemoveMemberError::ForwardToLeader {
                leader_id: Some(2),
                leader_url: Some("http://b".to_string()),
            }),
            Err(RemoveMemberError::LastVoter { node_id: 3 }),
            Err(RemoveMemberError::Refused(Refusal::WouldLoseQuorum {
                node_id: 2,
                answering: 1,
                quorum: 2,
            })),
            Err(RemoveMemberError::Unavailable {
                reason: "no quorum".to_string(),
            }),
            Err(RemoveMemberError::OutcomeUnknown {
                reason: "leader changed".to_string(),
            }),
            Err(RemoveMemberError::Fatal {
                reason: "stopped".to_string(),
            }),
        ];
        for result in results {
            assert_eq!(result, outcome_result(removal_outcome(result.clone())));
        }
    }

    // R-HA-011: a caller retries only what may still succeed; refusing the last voter is final.
    #[test]
    fn only_transient_failures_are_retryable() {
        let last = RemoveMemberError::LastVoter { node_id: 1 };
        let fatal = RemoveMemberError::Fatal {
            reason: "stopped".to_string(),
        };
        let unknown = RemoveMemberError::OutcomeUnknown {
            reason: "lost".to_string(),
        };
        assert!(!last.is_retryable());
        assert!(!fatal.is_retryable());
        assert!(unknown.is_retryable(), "removal is idempotent");
    }
}
