//! Protobuf forms of openraft's RPC messages (AppendEntries, Vote, snapshot install,
//! TransferLeader), built on
//! [`crate::wire`]. Fields are only ever added, with new tags.

use bytes::Bytes;
use openraft::raft::AppendEntriesRequest as RaftAppendRequest;
use openraft::raft::AppendEntriesResponse as RaftAppendResponse;
use openraft::raft::TransferLeaderError;
use openraft::raft::TransferLeaderRequest as RaftTransferRequest;
use openraft::raft::TransferLeaderResponse as RaftTransferResponse;
use openraft::raft::VoteRequest as RaftVoteRequest;
use openraft::raft::VoteResponse as RaftVoteResponse;

use crate::typ;
use crate::typ::TypeConfig;
use crate::wire;
use crate::wire::WireError;

/// AppendEntries request.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AppendEntriesRequest {
    /// The leader's vote. Required.
    #[prost(message, optional, tag = "1")]
    pub vote: Option<wire::Vote>,
    /// The log id just before `entries`.
    #[prost(message, optional, tag = "2")]
    pub prev_log_id: Option<wire::LogId>,
    /// The entries to append.
    #[prost(message, repeated, tag = "3")]
    pub entries: Vec<wire::Entry>,
    /// The leader's committed log id.
    #[prost(message, optional, tag = "4")]
    pub leader_commit: Option<wire::LogId>,
}

/// By value: the entries' commands move into the request instead of being copied (openraft
/// hands each replication RPC its own entries).
impl From<RaftAppendRequest<TypeConfig>> for AppendEntriesRequest {
    fn from(r: RaftAppendRequest<TypeConfig>) -> Self {
        Self {
            vote: Some(wire::Vote::from(&r.vote)),
            prev_log_id: r.prev_log_id.as_ref().map(wire::LogId::from),
            entries: r.entries.into_iter().map(wire::Entry::from).collect(),
            leader_commit: r.leader_commit.as_ref().map(wire::LogId::from),
        }
    }
}

impl TryFrom<AppendEntriesRequest> for RaftAppendRequest<TypeConfig> {
    type Error = WireError;

    fn try_from(w: AppendEntriesRequest) -> Result<Self, WireError> {
        Ok(Self {
            vote: typ::Vote::from(
                w.vote
                    .ok_or(WireError::MissingField("AppendEntries.vote"))?,
            ),
            prev_log_id: w.prev_log_id.map(typ::LogId::from),
            entries: w
                .entries
                .into_iter()
                .map(typ::Entry::try_from)
                .collect::<Result<_, _>>()?,
            leader_commit: w.leader_commit.map(typ::LogId::from),
        })
    }
}

/// An empty message, for `oneof` alternatives without data.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct Empty {}

/// A partial success: the follower accepted entries up to `log_id`.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct PartialSuccess {
    /// The last log id accepted.
    #[prost(message, optional, tag = "1")]
    pub log_id: Option<wire::LogId>,
}

/// AppendEntries response.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AppendEntriesResponse {
    /// The follower's answer. Required.
    #[prost(oneof = "append_entries_response::Outcome", tags = "1, 2, 3, 4")]
    pub outcome: Option<append_entries_response::Outcome>,
}

/// Nested types of [`AppendEntriesResponse`].
pub mod append_entries_response {
    /// The follower's answer to an AppendEntries.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Outcome {
        /// Every entry was appended.
        #[prost(message, tag = "1")]
        Success(super::Empty),
        /// Entries up to a log id were appended.
        #[prost(message, tag = "2")]
        PartialSuccess(super::PartialSuccess),
        /// `prev_log_id` does not match the follower's log.
        #[prost(message, tag = "3")]
        Conflict(super::Empty),
        /// The follower has seen a higher vote.
        #[prost(message, tag = "4")]
        HigherVote(crate::wire::Vote),
    }
}

impl From<&RaftAppendResponse<TypeConfig>> for AppendEntriesResponse {
    fn from(r: &RaftAppendResponse<TypeConfig>) -> Self {
        use append_entries_response::Outcome;
        let outcome = match r {
            RaftAppendResponse::Success => Outcome::Success(Empty {}),
            RaftAppendResponse::PartialSuccess(log_id) => Outcome::PartialSuccess(PartialSuccess {
                log_id: log_id.as_ref().map(wire::LogId::from),
            }),
            RaftAppendResponse::Conflict => Outcome::Conflict(Empty {}),
            RaftAppendResponse::HigherVote(vote) => Outcome::HigherVote(wire::Vote::from(vote)),
        };
        Self {
            outcome: Some(outcome),
        }
    }
}

impl TryFrom<AppendEntriesResponse> for RaftAppendResponse<TypeConfig> {
    type Error = WireError;

    fn try_from(w: AppendEntriesResponse) -> Result<Self, WireError> {
        use append_entries_response::Outcome;
        Ok(
            match w
                .outcome
                .ok_or(WireError::MissingField("AppendEntriesResponse.outcome"))?
            {
                Outcome::Success(_) => Self::Success,
                Outcome::PartialSuccess(p) => Self::PartialSuccess(p.log_id.map(typ::LogId::from)),
                Outcome::Conflict(_) => Self::Conflict,
                Outcome::HigherVote(v) => Self::HigherVote(typ::Vote::from(v)),
            },
        )
    }
}

/// RequestVote request.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct VoteRequest {
    /// The candidate's vote. Required.
    #[prost(message, optional, tag = "1")]
    pub vote: Option<wire::Vote>,
    /// The candidate's last log id.
    #[prost(message, optional, tag = "2")]
    pub last_log_id: Option<wire::LogId>,
    /// Whether the election follows a leadership transfer.
    #[prost(bool, tag = "3")]
    pub leadership_transfer: bool,
}

impl From<&RaftVoteRequest<TypeConfig>> for VoteRequest {
    fn from(r: &RaftVoteRequest<TypeConfig>) -> Self {
        Self {
            vote: Some(wire::Vote::from(&r.vote)),
            last_log_id: r.last_log_id.as_ref().map(wire::LogId::from),
            leadership_transfer: r.leadership_transfer,
        }
    }
}

impl TryFrom<VoteRequest> for RaftVoteRequest<TypeConfig> {
    type Error = WireError;

    fn try_from(w: VoteRequest) -> Result<Self, WireError> {
        Ok(Self {
            vote: typ::Vote::from(w.vote.ok_or(WireError::MissingField("VoteRequest.vote"))?),
            last_log_id: w.last_log_id.map(typ::LogId::from),
            leadership_transfer: w.leadership_transfer,
        })
    }
}

/// RequestVote response.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct VoteResponse {
    /// The voter's vote after handling the request. Required.
    #[prost(message, optional, tag = "1")]
    pub vote: Option<wire::Vote>,
    /// Whether the vote was granted.
    #[prost(bool, tag = "2")]
    pub vote_granted: bool,
    /// The voter's last log id.
    #[prost(message, optional, tag = "3")]
    pub last_log_id: Option<wire::LogId>,
}

impl From<&RaftVoteResponse<TypeConfig>> for VoteResponse {
    fn from(r: &RaftVoteResponse<TypeConfig>) -> Self {
        Self {
            vote: Some(wire::Vote::from(&r.vote)),
            vote_granted: r.vote_granted,
            last_log_id: r.last_log_id.as_ref().map(wire::LogId::from),
        }
    }
}

impl TryFrom<VoteResponse> for RaftVoteResponse<TypeConfig> {
    type Error = WireError;

    fn try_from(w: VoteResponse) -> Result<Self, WireError> {
        Ok(Self {
            vote: typ::Vote::from(w.vote.ok_or(WireError::MissingField("VoteResponse.vote"))?),
            vote_granted: w.vote_granted,
            last_log_id: w.last_log_id.map(typ::LogId::from),
        })
    }
}

/// A whole snapshot, sent by the leader to a replica that is missing purged log entries.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InstallSnapshotRequest {
    /// The leader's vote. Required.
    #[prost(message, optional, tag = "1")]
    pub vote: Option<wire::Vote>,
    /// What the snapshot covers. Required.
    #[prost(message, optional, tag = "2")]
    pub meta: Option<wire::SnapshotMeta>,
    /// The encoded [`crate::mvcc::StoreSnapshot`].
    #[prost(bytes = "bytes", tag = "3")]
    pub data: Bytes,
}

/// The answer to [`InstallSnapshotRequest`].
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct InstallSnapshotResponse {
    /// The receiver's vote. Required.
    #[prost(message, optional, tag = "1")]
    pub vote: Option<wire::Vote>,
}

/// TransferLeader request: the leader names its successor, which then stands for election at
/// once.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct TransferLeaderRequest {
    /// The vote of the leader handing over. Required.
    #[prost(message, optional, tag = "1")]
    pub from_leader: Option<wire::Vote>,
    /// The successor.
    #[prost(uint64, tag = "2")]
    pub to_node_id: u64,
    /// The leader's last log id, which the successor must have flushed.
    #[prost(message, optional, tag = "3")]
    pub last_log_id: Option<wire::LogId>,
}

impl From<&RaftTransferRequest<TypeConfig>> for TransferLeaderRequest {
    fn from(r: &RaftTransferRequest<TypeConfig>) -> Self {
        Self {
            from_leader: Some(wire::Vote::from(r.from_leader())),
            to_node_id: *r.to_node_id(),
            last_log_id: r.last_log_id().map(wire::LogId::from),
        }
    }
}

impl TryFrom<TransferLeaderRequest> for RaftTransferRequest<TypeConfig> {
    type Error = WireError;

    fn try_from(w: TransferLeaderRequest) -> Result<Self, WireError> {
        let from = w
            .from_leader
            .ok_or(WireError::MissingField("TransferLeaderRequest.from_leader"))?;
        Ok(Self::new(
            typ::Vote::from(from),
            w.to_node_id,
            w.last_log_id.map(typ::LogId::from),
        ))
    }
}

/// An expected and an actual vote.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct VotePair {
    /// The vote the request carried. Required.
    #[prost(message, optional, tag = "1")]
    pub expected: Option<wire::Vote>,
    /// The vote the target holds. Required.
    #[prost(message, optional, tag = "2")]
    pub actual: Option<wire::Vote>,
}

/// An expected and an actual last log id.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct LogIdPair {
    /// The leader's last log id.
    #[prost(message, optional, tag = "1")]
    pub expected: Option<wire::LogId>,
    /// The target's last log id.
    #[prost(message, optional, tag = "2")]
    pub actual: Option<wire::LogId>,
}

/// TransferLeader response: accepted when neither rejection is set.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct TransferLeaderResponse {
    /// Rejected: the target holds another vote than the leader's.
    #[prost(message, optional, tag = "1")]
    pub vote_changed: Option<VotePair>,
    /// Rejected: the target has not flushed the leader's last log entry yet.
    #[prost(message, optional, tag = "2")]
    pub log_not_flushed: Option<LogIdPair>,
}

impl From<&RaftTransferResponse<TypeConfig>> for TransferLeaderResponse {
    fn from(r: &RaftTransferResponse<TypeConfig>) -> Self {
        match r {
            Ok(()) => Self::default(),
            Err(TransferLeaderError::VoteChanged { expected, actual }) => Self {
                vote_changed: Some(VotePair {
                    expected: Some(wire::Vote::from(expected)),
                    actual: Some(wire::Vote::from(actual)),
                }),
                log_not_flushed: None,
            },
            Err(TransferLeaderError::LogNotFlushed { expected, actual }) => Self {
                vote_changed: None,
                log_not_flushed: Some(LogIdPair {
                    expected: expected.as_ref().map(wire::LogId::from),
                    actual: actual.as_ref().map(wire::LogId::from),
                }),
            },
        }
    }
}

impl TryFrom<TransferLeaderResponse> for RaftTransferResponse<TypeConfig> {
    type Error = WireError;

    fn try_from(w: TransferLeaderResponse) -> Result<Self, WireError> {
        if let Some(pair) = w.vote_changed {
            let missing = WireError::MissingField("VotePair");
            let (Some(expected), Some(actual)) = (pair.expected, pair.actual) else {
                return Err(missing);
            };
            return Ok(Err(TransferLeaderError::VoteChanged {
                expected: typ::Vote::from(expected),
                actual: typ::Vote::from(actual),
            }));
        }
        if let Some(pair) = w.log_not_flushed {
            return Ok(Err(TransferLeaderError::LogNotFlushed {
                expected: pair.expected.map(typ::LogId::from),
                actual: pair.actual.map(typ::LogId::from),
            }));
        }
        Ok(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use openraft::EntryPayload;
    use prost::Message;

    use super::*;
    use crate::command::Command;

    fn log_id(index: u64) -> typ::LogId {
        typ::LogId::from(wire::LogId {
            term: 3,
            node_id: 2,
            index,
        })
    }

    // R-HA-001: followers must receive exactly the entries the leader sent.
    #[test]
    fn append_entries_round_trips() {
        let request = RaftAppendRequest::<TypeConfig> {
            vote: typ::Vote::new_committed(3, 2),
            prev_log_id: Some(log_id(4)),
            entries: vec![
                typ::Entry {
                    log_id: log_id(5),
                    payload: EntryPayload::Blank,
                },
                typ::Entry {
                    log_id: log_id(6),
                    payload: EntryPayload::Normal(Command::compact(3)),
                },
            ],
            leader_commit: Some(log_id(5)),
        };
        let bytes = AppendEntriesRequest::from(request.clone()).encode_to_vec();
        let back = RaftAppendRequest::<TypeConfig>::try_from(
            AppendEntriesRequest::decode(bytes.as_slice()).unwrap(),
        )
        .unwrap();
        assert_eq!(request.vote, back.vote);
        assert_eq!(request.prev_log_id, back.prev_log_id);
        assert_eq!(request.entries, back.entries);
        assert_eq!(request.leader_commit, back.leader_commit);

        for response in [
            RaftAppendResponse::<TypeConfig>::Success,
            RaftAppendResponse::PartialSuccess(Some(log_id(5))),
            RaftAppendResponse::PartialSuccess(None),
            RaftAppendResponse::Conflict,
            RaftAppendResponse::HigherVote(typ::Vote::new(9, 1)),
        ] {
            let bytes = AppendEntriesResponse::from(&response).encode_to_vec();
            let back = RaftAppendResponse::<TypeConfig>::try_from(
                AppendEntriesResponse::decode(bytes.as_slice()).unwrap(),
            )
            .unwrap();
            assert_eq!(response, back);
        }
    }

    #[test]
    fn vote_round_trips() {
        let request = RaftVoteRequest::<TypeConfig>::new(typ::Vote::new(4, 1), Some(log_id(7)));
        let back = RaftVoteRequest::try_from(VoteRequest::from(&request)).unwrap();
        assert_eq!(request, back);
        let response = RaftVoteResponse::<TypeConfig>::new(typ::Vote::new(4, 1), None, true);
        let back = RaftVoteResponse::try_from(VoteResponse::from(&response)).unwrap();
        assert_eq!(response, back);
    }

    #[test]
    fn transfer_leader_round_trips() {
        let request = RaftTransferRequest::<TypeConfig>::new(
            typ::Vote::new_committed(4, 1),
            3,
            Some(log_id(7)),
        );
        let bytes = TransferLeaderRequest::from(&request).encode_to_vec();
        let back = RaftTransferRequest::<TypeConfig>::try_from(
            TransferLeaderRequest::decode(bytes.as_slice()).unwrap(),
        )
        .unwrap();
        assert_eq!(request, back);
        for response in [
            Ok(()),
            Err(TransferLeaderError::VoteChanged {
                expected: typ::Vote::new_committed(4, 1),
                actual: typ::Vote::new(5, 2),
            }),
            Err(TransferLeaderError::LogNotFlushed {
                expected: Some(log_id(7)),
                actual: None,
            }),
        ] {
            let bytes = TransferLeaderResponse::from(&response).encode_to_vec();
            let back = RaftTransferResponse::<TypeConfig>::try_from(
                TransferLeaderResponse::decode(bytes.as_slice()).unwrap(),
            )
            .unwrap();
            assert_eq!(response, back);
        }
    }

    #[test]
    fn messages_without_required_fields_are_errors() {
        assert!(
            RaftAppendRequest::<TypeConfig>::try_from(AppendEntriesRequest::default()).is_err()
        );
        assert!(
            RaftAppendResponse::<TypeConfig>::try_from(AppendEntriesResponse::default()).is_err()
        );
        assert!(RaftVoteRequest::<TypeConfig>::try_from(VoteRequest::default()).is_err());
        assert!(RaftVoteResponse::<TypeConfig>::try_from(VoteResponse::default()).is_err());
        assert!(
            RaftTransferRequest::<TypeConfig>::try_from(TransferLeaderRequest::default()).is_err()
        );
    }
}
