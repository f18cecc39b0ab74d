//! Protobuf messages of the replica-level peer RPCs: write forwarding, follower read index,
//! join, member removal and the other membership operations a follower forwards to the leader
//! (listing, adding a learner, promoting it, handing leadership over). Fields are only ever
//! added, with new tags.

use crate::command::Command;
use crate::command::CommandResponse;

/// The answer of a replica that is not the leader: who the leader is, if it knows.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct NotLeader {
    /// The leader's node id, when known.
    #[prost(uint64, optional, tag = "1")]
    pub leader_id: Option<u64>,
    /// The leader's peer URL, when known.
    #[prost(string, optional, tag = "2")]
    pub leader_url: Option<String>,
}

/// How a failed peer request failed, so the caller keeps retryable and fatal apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, prost::Enumeration)]
#[repr(i32)]
pub enum FailureKind {
    /// Not sent by current replicas; an unknown kind decodes to it and is treated as fatal.
    Unspecified = 0,
    /// Temporarily impossible (no quorum, leadership changing): retry later.
    Unavailable = 1,
    /// The write may or may not have been committed (its entry was discarded by a leader
    /// change): the caller must not blindly retry it.
    OutcomeUnknown = 2,
    /// The request can never succeed (invalid, or the replica is stopped).
    Fatal = 3,
}

/// A failure answer.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct Failure {
    /// The kind of failure; read it with the generated `kind()`, which maps unknown values
    /// to [`FailureKind::Unspecified`].
    #[prost(enumeration = "FailureKind", tag = "1")]
    pub kind: i32,
    /// A human-readable explanation.
    #[prost(string, tag = "2")]
    pub message: String,
}

impl Failure {
    /// A failure of `kind`.
    pub fn new(kind: FailureKind, message: impl ToString) -> Self {
        Self {
            kind: kind as i32,
            message: message.to_string(),
        }
    }
}

/// A write forwarded from a follower to the leader.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ForwardWriteRequest {
    /// The command to propose. Required.
    #[prost(message, optional, tag = "1")]
    pub command: Option<Command>,
}

/// The leader's answer to a forwarded write.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ForwardWriteResponse {
    /// The outcome. Required.
    #[prost(oneof = "forward_write_response::Outcome", tags = "1, 2, 3")]
    pub outcome: Option<forward_write_response::Outcome>,
}

/// Nested types of [`ForwardWriteResponse`].
pub mod forward_write_response {
    /// The outcome of a forwarded write.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Outcome {
        /// Committed and applied on the leader; carries the revision.
        #[prost(message, tag = "1")]
        Applied(crate::command::CommandResponse),
        /// The receiver is not the leader.
        #[prost(message, tag = "2")]
        NotLeader(super::NotLeader),
        /// The write failed.
        #[prost(message, tag = "3")]
        Failed(super::Failure),
    }
}

impl ForwardWriteResponse {
    /// A committed write.
    pub fn applied(response: CommandResponse) -> Self {
        Self {
            outcome: Some(forward_write_response::Outcome::Applied(response)),
        }
    }
}

/// The most commands one [`ForwardWritesRequest`] may carry; the leader refuses more with 400.
pub const MAX_FORWARD_WRITES: usize = 256;

/// Several writes forwarded from a follower to the leader in one call
/// ([`crate::network::rpc::FORWARD_WRITES`]); the leader proposes them concurrently.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ForwardWritesRequest {
    /// The commands to propose, in the order the follower's clients made them.
    #[prost(message, repeated, tag = "1")]
    pub commands: Vec<Command>,
}

/// The leader's answer to [`ForwardWritesRequest`]: one outcome per command, in order.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ForwardWritesResponse {
    /// The outcome of each command.
    #[prost(message, repeated, tag = "1")]
    pub outcomes: Vec<ForwardWriteResponse>,
}

/// A follower asks the leader for a read index.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct ReadIndexRequest {}

/// The leader's answer to a read-index request.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct ReadIndexResponse {
    /// The outcome. Required.
    #[prost(oneof = "read_index_response::Outcome", tags = "1, 2, 3")]
    pub outcome: Option<read_index_response::Outcome>,
}

/// Nested types of [`ReadIndexResponse`].
pub mod read_index_response {
    /// The outcome of a read-index request.
    #[derive(Clone, PartialEq, Eq, prost::Oneof)]
    pub enum Outcome {
        /// The leader confirmed its leadership with a quorum after the request arrived; a
        /// replica that has applied this index serves linearizable reads.
        #[prost(uint64, tag = "1")]
        Index(u64),
        /// The receiver is not the leader.
        #[prost(message, tag = "2")]
        NotLeader(super::NotLeader),
        /// The leader could not confirm its leadership.
        #[prost(message, tag = "3")]
        Failed(super::Failure),
    }
}

/// A new replica asks to join the cluster.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct JoinRequest {
    /// The new replica's node id.
    #[prost(uint64, tag = "1")]
    pub node_id: u64,
    /// The new replica's peer URL.
    #[prost(string, tag = "2")]
    pub peer_url: String,
}

/// The leader's answer to a join request.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct JoinResponse {
    /// The outcome. Required.
    #[prost(oneof = "join_response::Outcome", tags = "1, 2, 3, 4")]
    pub outcome: Option<join_response::Outcome>,
}

/// Nested types of [`JoinResponse`].
pub mod join_response {
    /// The outcome of a join request.
    #[derive(Clone, PartialEq, Eq, prost::Oneof)]
    pub enum Outcome {
        /// The replica is now a voter; carries the revision of the membership entry.
        #[prost(uint64, tag = "1")]
        Joined(u64),
        /// The receiver is not the leader.
        #[prost(message, tag = "2")]
        NotLeader(super::NotLeader),
        /// The join failed.
        #[prost(message, tag = "3")]
        Failed(super::Failure),
        /// The replica is a learner that waits for an operator to promote it; carries the
        /// revision of the membership entry. The joiner stops asking.
        #[prost(uint64, tag = "4")]
        Learner(u64),
    }
}

/// A replica asks the leader to remove a member from the cluster.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct RemoveMemberRequest {
    /// The node id of the member to remove.
    #[prost(uint64, tag = "1")]
    pub node_id: u64,
}

/// The leader's answer to a removal request.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct RemoveMemberResponse {
    /// The outcome. Required.
    #[prost(oneof = "remove_member_response::Outcome", tags = "1, 2, 3, 4, 5")]
    pub outcome: Option<remove_member_response::Outcome>,
}

/// Nested types of [`RemoveMemberResponse`].
pub mod remove_member_response {
    /// The outcome of a removal request.
    #[derive(Clone, PartialEq, Eq, prost::Oneof)]
    pub enum Outcome {
        /// The node is not a member (any more); carries the log index of the membership
        /// without it.
        #[prost(uint64, tag = "1")]
        Removed(u64),
        /// The receiver is not the leader.
        #[prost(message, tag = "2")]
        NotLeader(super::NotLeader),
        /// The removal failed.
        #[prost(message, tag = "3")]
        Failed(super::Failure),
        /// Refused: the node (whose id this carries) is the last voter.
        #[prost(uint64, tag = "4")]
        LastVoter(u64),
        /// Refused for another reason (removing it would lose the quorum).
        #[prost(message, tag = "5")]
        Refused(super::Refused),
    }
}

/// A replica asks the leader to add a learner.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct AddLearnerRequest {
    /// The new member's node id.
    #[prost(uint64, tag = "1")]
    pub node_id: u64,
    /// The new member's peer URL.
    #[prost(string, tag = "2")]
    pub peer_url: String,
    /// Whether the leader promotes it to voter once it caught up.
    #[prost(bool, tag = "3")]
    pub auto_promote: bool,
}

/// A replica asks the leader to promote a learner to voter.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct PromoteRequest {
    /// The learner's node id.
    #[prost(uint64, tag = "1")]
    pub node_id: u64,
}

/// A replica asks the leader to hand its leadership over.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct TransferLeadershipRequest {
    /// The voter to hand it to; absent: the most caught-up voter that answers.
    #[prost(uint64, optional, tag = "1")]
    pub to: Option<u64>,
}

/// A replica asks the leader for the members as the leader sees them.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct MembersRequest {}

/// Why a leader refused a membership operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, prost::Enumeration)]
#[repr(i32)]
pub enum RefusalKind {
    /// Not sent by current replicas; an unknown kind decodes to it.
    Unspecified = 0,
    /// Removing the node would leave fewer answering voters than a quorum.
    WouldLoseQuorum = 1,
    /// The learner has not caught up.
    NotCaughtUp = 2,
    /// The node is not a member.
    UnknownMember = 3,
    /// The node is not a voter that answers.
    CannotLead = 4,
    /// The id is already a voter or a member at another URL.
    IdInUse = 5,
    /// The URL is used by another member.
    UrlInUse = 6,
    /// The node is the last voter.
    LastVoter = 7,
}

/// A refusal and its particulars (which fields are set depends on the kind).
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct Refused {
    /// The kind; read it with the generated `kind()`.
    #[prost(enumeration = "RefusalKind", tag = "1")]
    pub kind: i32,
    /// The node the operation named, or the member in the way.
    #[prost(uint64, tag = "2")]
    pub node_id: u64,
    /// A learner's lag in entries, when known.
    #[prost(uint64, optional, tag = "3")]
    pub lag: Option<u64>,
    /// The voters that would remain answering.
    #[prost(uint64, tag = "4")]
    pub answering: u64,
    /// The quorum they would need.
    #[prost(uint64, tag = "5")]
    pub quorum: u64,
    /// The peer URL in conflict.
    #[prost(string, tag = "6")]
    pub url: String,
}

/// A member's role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, prost::Enumeration)]
#[repr(i32)]
pub enum MemberRole {
    /// Not sent by current replicas; an unknown role decodes to it.
    Unspecified = 0,
    /// The voter that leads.
    Leader = 1,
    /// A voter.
    Voter = 2,
    /// A learner: replicated to, but without a vote.
    Learner = 3,
}

/// One member as the leader sees it.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct MemberInfo {
    /// Its node id.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Its peer URL.
    #[prost(string, tag = "2")]
    pub peer_url: String,
    /// Its role; read it with the generated `role()`.
    #[prost(enumeration = "MemberRole", tag = "3")]
    pub role: i32,
    /// Whether the leader promotes it once caught up.
    #[prost(bool, tag = "4")]
    pub auto_promote: bool,
    /// The last log index known replicated to it.
    #[prost(uint64, optional, tag = "5")]
    pub matched: Option<u64>,
    /// The leader's last log index minus `matched`.
    #[prost(uint64, optional, tag = "6")]
    pub lag: Option<u64>,
}

/// The members.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct MemberList {
    /// Every member, by ascending id.
    #[prost(message, repeated, tag = "1")]
    pub members: Vec<MemberInfo>,
}

/// The leader's answer to a forwarded membership operation.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct MemberChangeResponse {
    /// The outcome. Required.
    #[prost(oneof = "member_change_response::Outcome", tags = "1, 2, 3, 4, 5, 6")]
    pub outcome: Option<member_change_response::Outcome>,
}

/// Nested types of [`MemberChangeResponse`].
pub mod member_change_response {
    /// The outcome of a membership operation.
    #[derive(Clone, PartialEq, Eq, prost::Oneof)]
    pub enum Outcome {
        /// Done (adding, promoting); carries the log index of the membership.
        #[prost(uint64, tag = "1")]
        Index(u64),
        /// The receiver is not the leader.
        #[prost(message, tag = "2")]
        NotLeader(super::NotLeader),
        /// The operation failed.
        #[prost(message, tag = "3")]
        Failed(super::Failure),
        /// The leader refused it.
        #[prost(message, tag = "4")]
        Refused(super::Refused),
        /// Leadership was handed over; carries the new leader's id.
        #[prost(uint64, tag = "5")]
        Leader(u64),
        /// The members, as the leader sees them.
        #[prost(message, tag = "6")]
        Members(super::MemberList),
    }
}
