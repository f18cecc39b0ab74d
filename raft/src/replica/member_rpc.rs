//! The membership operations over the peer RPCs: a follower's call to the leader, and the
//! conversions between the operations' results and their protobuf answers, which keep every
//! failure's kind (retryable, refused, fatal) as the leader decided it.

use prost::Message;
use tokio::time::Instant;

use super::LeaderError;
use super::Member;
use super::MemberChangeError;
use super::Refusal;
use super::Replica;
use super::Role;
use super::leader_call::Retry;
use crate::network::replica_message::Failure;
use crate::network::replica_message::FailureKind;
use crate::network::replica_message::MemberChangeResponse;
use crate::network::replica_message::MemberInfo;
use crate::network::replica_message::MemberList;
use crate::network::replica_message::MemberRole;
use crate::network::replica_message::NotLeader;
use crate::network::replica_message::RefusalKind;
use crate::network::replica_message::Refused;
use crate::network::replica_message::member_change_response::Outcome;

/// How a membership operation is retried at the leader until `deadline`: while no leader is
/// known or the one asked names another, or it is momentarily unable.
pub(super) fn member_retry(deadline: Instant) -> Retry<MemberChangeError> {
    Retry {
        deadline,
        max_attempts: u32::MAX,
        retryable: |e: &MemberChangeError| {
            matches!(
                e,
                MemberChangeError::NotLeader { .. } | MemberChangeError::Unavailable { .. }
            )
        },
    }
}

impl Replica {
    /// Calls membership RPC `rpc` on the leader at `url`; a failure answer becomes the error
    /// it stands for, any other answer is the caller's to interpret.
    pub(super) async fn forward_member_call<R: Message>(
        &self,
        url: &str,
        rpc: &str,
        request: &R,
        deadline: Instant,
    ) -> Result<Outcome, MemberChangeError> {
        let remaining = deadline.saturating_duration_since(Instant::now());
        let answer: MemberChangeResponse = self
            .peers
            .call(url, rpc, request, remaining)
            .await
            .map_err(|e| {
                if e.not_delivered() {
                    MemberChangeError::Unavailable {
                        reason: e.to_string(),
                    }
                } else {
                    MemberChangeError::OutcomeUnknown {
                        reason: e.to_string(),
                    }
                }
            })?;
        match answer.outcome {
            Some(Outcome::NotLeader(n)) => Err(LeaderError::from(n).into()),
            Some(Outcome::Failed(f)) => Err(LeaderError::from(f).into()),
            Some(Outcome::Refused(r)) => Err(MemberChangeError::Refused(refusal_from_wire(r)?)),
            Some(other) => Ok(other),
            None => Err(MemberChangeError::OutcomeUnknown {
                reason: "the leader answered a membership operation with nothing".to_string(),
            }),
        }
    }
}

/// The peer RPC's answer for a failed membership operation; inverse of
/// [`Replica::forward_member_call`]'s failures.
pub(crate) fn failure_outcome(error: MemberChangeError) -> Outcome {
    match error {
        MemberChangeError::NotLeader {
            leader_id,
            leader_url,
        } => Outcome::NotLeader(NotLeader {
            leader_id,
            leader_url,
        }),
        MemberChangeError::Unavailable { reason } => {
            Outcome::Failed(Failure::new(FailureKind::Unavailable, reason))
        }
        MemberChangeError::Refused(refusal) => Outcome::Refused(refusal_to_wire(&refusal)),
        MemberChangeError::OutcomeUnknown { reason } => {
            Outcome::Failed(Failure::new(FailureKind::OutcomeUnknown, reason))
        }
        MemberChangeError::Fatal { reason } => {
            Outcome::Failed(Failure::new(FailureKind::Fatal, reason))
        }
    }
}

/// A refusal in its protobuf form.
pub(crate) fn refusal_to_wire(refusal: &Refusal) -> Refused {
    let of = |kind: RefusalKind, node_id| Refused {
        kind: kind as i32,
        node_id,
        ..Refused::default()
    };
    match refusal {
        Refusal::WouldLoseQuorum {
            node_id,
            answering,
            quorum,
        } => Refused {
            answering: *answering,
            quorum: *quorum,
            ..of(RefusalKind::WouldLoseQuorum, *node_id)
        },
        Refusal::NotCaughtUp { node_id, lag } => Refused {
            lag: *lag,
            ..of(RefusalKind::NotCaughtUp, *node_id)
        },
        Refusal::UnknownMember { node_id } => of(RefusalKind::UnknownMember, *node_id),
        Refusal::CannotLead { node_id } => of(RefusalKind::CannotLead, *node_id),
        Refusal::IdInUse { node_id, url } => Refused {
            url: url.clone(),
            ..of(RefusalKind::IdInUse, *node_id)
        },
        Refusal::UrlInUse { node_id, url } => Refused {
            url: url.clone(),
            ..of(RefusalKind::UrlInUse, *node_id)
        },
        Refusal::LastVoter { node_id } => of(RefusalKind::LastVoter, *node_id),
    }
}

/// The refusal a protobuf answer stands for; an unknown kind (a newer or buggy peer) is fatal.
pub(crate) fn refusal_from_wire(wire: Refused) -> Result<Refusal, MemberChangeError> {
    let node_id = wire.node_id;
    Ok(match wire.kind() {
        RefusalKind::WouldLoseQuorum => Refusal::WouldLoseQuorum {
            node_id,
            answering: wire.answering,
            quorum: wire.quorum,
        },
        RefusalKind::NotCaughtUp => Refusal::NotCaughtUp {
            node_id,
            lag: wire.lag,
        },
        RefusalKind::UnknownMember => Refusal::UnknownMember { node_id },
        RefusalKind::CannotLead => Refusal::CannotLead { node_id },
        RefusalKind::IdInUse => Refusal::IdInUse {
            node_id,
            url: wire.url,
        },
        RefusalKind::UrlInUse => Refusal::UrlInUse {
            node_id,
            url: wire.url,
        },
        RefusalKind::LastVoter => Refusal::LastVoter { node_id },
        RefusalKind::Unspecified => {
            return Err(MemberChangeError::Fatal {
                reason: format!("the leader refused for an unknown reason ({})", wire.kind),
            });
        }
    })
}

/// The members in their protobuf form.
pub(crate) fn members_to_wire(members: &[Member]) -> MemberList {
    let info = |m: &Member| MemberInfo {
        id: m.id,
        peer_url: m.peer_url.clone(),
        role: match m.role {
            Role::Leader => MemberRole::Leader,
            Role::Voter => MemberRole::Voter,
            Role::Learner => MemberRole::Learner,
        } as i32,
        auto_promote: m.auto_promote,
        matched: m.matched,
        lag: m.lag,
    };
    MemberList {
        members: members.iter().map(info).collect(),
    }
}

/// The members a protobuf answer lists; a member without a known role is a buggy peer's.
pub(super) fn members_from_wire(list: MemberList) -> Result<Vec<Member>, MemberChangeError> {
    list.members
        .into_iter()
        .map(|info| {
            let role = match info.role() {
                MemberRole::Leader => Role::Leader,
                MemberRole::Voter => Role::Voter,
                MemberRole::Learner => Role::Learner,
                MemberRole::Unspecified => {
                    return Err(MemberChangeError::Fatal {
                        reason: format!("the leader listed node {} without a role", info.id),
                    });
                }
            };
            Ok(Member {
                id: info.id,
                peer_url: info.peer_url,
                role,
                auto_promote: info.auto_promote,
                matched: info.matched,
                lag: info.lag,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a follower makes of the leader's answer to a failed operation.
    fn across(error: MemberChangeError) -> MemberChangeError {
        let answer = MemberChangeResponse {
            outcome: Some(failure_outcome(error)),
        };
        let decoded = MemberChangeResponse::decode(answer.encode_to_vec().as_slice())
            .expect("decodes")
            .outcome
            .expect("an outcome");
        match decoded {
            Outcome::NotLeader(n) => LeaderError::from(n).into(),
            Outcome::Failed(f) => LeaderError::from(f).into(),
            Outcome::Refused(r) => match refusal_from_wire(r) {
                Ok(refusal) => MemberChangeError::Refused(refusal),
                Err(e) => e,
            },
            other => panic!("not a failure: {other:?}"),
        }
    }

    // Every failure crosses the peer RPC unchanged, so a follower keeps retryable, refused and
    // fatal apart as the leader decided.
    #[test]
    fn every_failure_survives_the_peer_rpc() {
        let url = "http://d".to_string();
        let refusals = [
            Refusal::WouldLoseQuorum {
                node_id: 2,
                answering: 1,
                quorum: 2,
            },
            Refusal::NotCaughtUp {
                node_id: 4,
                lag: Some(1_234),
            },
            Refusal::NotCaughtUp {
                node_id: 4,
                lag: None,
            },
            Refusal::UnknownMember { node_id: 9 },
            Refusal::CannotLead { node_id: 4 },
            Refusal::IdInUse {
                node_id: 4,
                url: url.clone(),
            },
            Refusal::UrlInUse { node_id: 3, url },
            Refusal::LastVoter { node_id: 1 },
        ];
        let others = [
            MemberChangeError::NotLeader {
                leader_id: Some(2),
                leader_url: Some("http://b".to_string()),
            },
            MemberChangeError::Unavailable {
                reason: "no quorum".to_string(),
            },
            MemberChangeError::OutcomeUnknown {
                reason: "deadline".to_string(),
            },
            MemberChangeError::Fatal {
                reason: "stopped".to_string(),
            },
        ];
        let all = refusals
            .into_iter()
            .map(MemberChangeError::Refused)
            .chain(others);
        for error in all {
            assert_eq!(error, across(error.clone()));
        }
    }

    #[test]
    fn members_survive_the_peer_rpc() {
        let members = vec![
            Member {
                id: 1,
                peer_url: "http://a".to_string(),
                role: Role::Leader,
                auto_promote: false,
                matched: Some(40),
                lag: Some(0),
            },
            Member {
                id: 4,
                peer_url: "http://d".to_string(),
                role: Role::Learner,
                auto_promote: true,
                matched: None,
                lag: None,
            },
        ];
        let wire = MemberList::decode(members_to_wire(&members).encode_to_vec().as_slice())
            .expect("decodes");
        assert_eq!(members, members_from_wire(wire).expect("valid"));
    }

    #[test]
    fn an_unknown_refusal_or_role_is_fatal() {
        let refused = Refused {
            kind: 99,
            ..Refused::default()
        };
        assert!(matches!(
            refusal_from_wire(refused),
            Err(MemberChangeError::Fatal { .. })
        ));
        let list = MemberList {
            members: vec![MemberInfo {
                id: 1,
                role: 99,
                ..MemberInfo::default()
            }],
        };
        assert!(matches!(
            members_from_wire(list),
            Err(MemberChangeError::Fatal { .. })
        ));
    }
}
