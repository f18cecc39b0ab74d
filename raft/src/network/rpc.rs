//! The names of the peer RPCs, shared by the client side (the `rpc` argument of
//! [`super::Transport::call`]) and the server side (the routes of [`crate::replica::peer_router`],
//! served under [`PATH_PREFIX`]).

/// Where the peer RPCs are served: `POST {peer URL}{PATH_PREFIX}{name}`.
pub const PATH_PREFIX: &str = "/raft/";
/// Raft AppendEntries (replication and heartbeats).
pub const APPEND_ENTRIES: &str = "append-entries";
/// Raft RequestVote.
pub const VOTE: &str = "vote";
/// Raft Pre-Vote: would the peer vote for this candidate? (Changes nothing on the peer.)
pub const PRE_VOTE: &str = "pre-vote";
/// Raft leadership transfer: the leader asks its successor to stand for election now.
pub const TRANSFER_LEADER: &str = "transfer-leader";
/// Raft snapshot install (the whole snapshot in one message).
pub const INSTALL_SNAPSHOT: &str = "install-snapshot";
/// A follower forwards a client write to the leader.
pub const FORWARD_WRITE: &str = "forward-write";
/// A follower forwards several client writes to the leader in one call; a leader that
/// answers 404 (a build before it) is sent them one at a time.
pub const FORWARD_WRITES: &str = "forward-writes";
/// A follower asks the leader for a linearizable read index.
pub const READ_INDEX: &str = "read-index";
/// A new replica asks to be added as a learner, then promoted to voter.
pub const JOIN: &str = "join";
/// A replica asks the leader to remove a member (forwarded like a write).
pub const REMOVE_MEMBER: &str = "remove-member";
/// A replica asks the leader for the members and their replication progress.
pub const MEMBERS: &str = "members";
/// A replica asks the leader to add a learner.
pub const ADD_LEARNER: &str = "add-learner";
/// A replica asks the leader to promote a learner to voter.
pub const PROMOTE: &str = "promote";
/// A replica asks the leader to hand its leadership over.
pub const TRANSFER_LEADERSHIP: &str = "transfer-leadership";
/// A replica asks a peer for its own figures (term, indexes, log, snapshot, store size); added
/// in protocol 2.
pub const REPORT: &str = "report";
/// What the peer speaks and stores ([`crate::version`]); added in protocol 2.
pub const VERSION: &str = "version";
