//! Protobuf (prost) forms of the openraft types that are persisted or sent between replicas.
//!
//! openraft's own types carry serde derives, but everything Apiary writes to disk or puts on the
//! wire is protobuf, so that a newer replica reads an older one's data (rolling upgrades): fields
//! are only ever added, with new tags, and a field that is absent decodes to its default.
//!
//! Each wire type converts from a reference to its openraft type with `From`, and back with
//! `TryFrom`, which fails with a [`WireError`] when a required field is missing or the value is not
//! valid (for example a membership whose voter has no address). Types with no required field
//! ([`LogId`], [`Vote`]) convert back with plain `From`.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use openraft::EntryPayload;
use openraft::errors::MembershipError;
use openraft::impls::leader_id_adv::LeaderId;
use prost::Message as _;

use crate::command::Command;
use crate::typ;
use crate::typ::NodeId;

/// openraft's membership for Apiary's node types (`typ` has no alias for it).
type RaftMembership = openraft::Membership<NodeId, typ::Node>;

/// [`typ::Entry`] spelled out: the trait-projection alias defeats the coherence check for
/// `TryFrom`, the concrete type does not.
type RaftEntry = openraft::Entry<LeaderId<u64, NodeId>, EntryPayload<Command, NodeId, typ::Node>>;

/// A wire value could not be turned back into its openraft type. The bytes decoded, but they do
/// not describe a valid value: the writer was buggy or the data is corrupt, so this is not
/// retryable.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// A field that the openraft type requires was absent.
    #[error("wire value is missing the required field `{0}`")]
    MissingField(&'static str),
    /// A membership's voter sets and node map disagree.
    #[error("wire membership is invalid")]
    InvalidMembership(#[source] MembershipError<NodeId>),
}

/// A log id: the term and node of the leader that proposed the entry, and its index.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct LogId {
    /// The proposing leader's term.
    #[prost(uint64, tag = "1")]
    pub term: u64,
    /// The proposing leader's node id.
    #[prost(uint64, tag = "2")]
    pub node_id: u64,
    /// The entry's position in the log.
    #[prost(uint64, tag = "3")]
    pub index: u64,
}

impl From<&typ::LogId> for LogId {
    fn from(log_id: &typ::LogId) -> Self {
        Self {
            term: log_id.leader_id.term,
            node_id: log_id.leader_id.node_id,
            index: log_id.index,
        }
    }
}

impl From<LogId> for typ::LogId {
    fn from(wire: LogId) -> Self {
        let leader_id = LeaderId {
            term: wire.term,
            node_id: wire.node_id,
        };
        typ::LogId::new(leader_id, wire.index)
    }
}

/// A vote: the leader (term and node) this replica voted for, and whether a quorum granted it.
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct Vote {
    /// The term voted in.
    #[prost(uint64, tag = "1")]
    pub term: u64,
    /// The node voted for.
    #[prost(uint64, tag = "2")]
    pub node_id: u64,
    /// Whether a quorum granted the vote (the node is then the term's leader).
    #[prost(bool, tag = "3")]
    pub committed: bool,
}

impl From<&typ::Vote> for Vote {
    fn from(vote: &typ::Vote) -> Self {
        Self {
            term: vote.leader_id.term,
            node_id: vote.leader_id.node_id,
            committed: vote.committed,
        }
    }
}

impl From<Vote> for typ::Vote {
    fn from(wire: Vote) -> Self {
        typ::Vote {
            leader_id: LeaderId {
                term: wire.term,
                node_id: wire.node_id,
            },
            committed: wire.committed,
        }
    }
}

/// One voter set of a (possibly joint) configuration.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct VoterSet {
    /// The voters' node ids, ascending.
    #[prost(uint64, repeated, tag = "1")]
    pub ids: Vec<u64>,
}

/// A cluster membership: one voter set, or two during a joint-consensus change, plus the address
/// of every node (voters and learners; a node that is in no voter set is a learner).
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct Membership {
    /// The voter sets of the (joint) configuration.
    #[prost(message, repeated, tag = "1")]
    pub configs: Vec<VoterSet>,
    /// Node id to peer address ([`typ::Node::addr`]).
    #[prost(btree_map = "uint64, string", tag = "2")]
    pub nodes: BTreeMap<u64, String>,
    /// The learners the leader promotes to voter once they caught up
    /// ([`typ::Node::auto_promote`]), ascending.
    #[prost(uint64, repeated, tag = "3")]
    pub auto_promote: Vec<u64>,
}

impl From<&RaftMembership> for Membership {
    fn from(membership: &RaftMembership) -> Self {
        Self {
            configs: membership
                .get_joint_config()
                .iter()
                .map(|set| VoterSet {
                    ids: set.iter().copied().collect(),
                })
                .collect(),
            nodes: membership
                .nodes()
                .map(|(id, node)| (*id, node.addr.clone()))
                .collect(),
            auto_promote: membership
                .nodes()
                .filter(|(_, node)| node.auto_promote)
                .map(|(id, _)| *id)
                .collect(),
        }
    }
}

impl TryFrom<Membership> for RaftMembership {
    type Error = WireError;

    fn try_from(wire: Membership) -> Result<Self, WireError> {
        let configs: Vec<BTreeSet<NodeId>> = wire
            .configs
            .into_iter()
            .map(|set| set.ids.into_iter().collect())
            .collect();
        let auto_promote: BTreeSet<NodeId> = wire.auto_promote.into_iter().collect();
        let nodes: BTreeMap<NodeId, typ::Node> = wire
            .nodes
            .into_iter()
            .map(|(id, addr)| {
                let auto_promote = auto_promote.contains(&id);
                (id, typ::Node { addr, auto_promote })
            })
            .collect();
        RaftMembership::new(configs, nodes).map_err(WireError::InvalidMembership)
    }
}

/// A membership together with the log id of the entry that introduced it (none for the initial,
/// empty membership).
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct StoredMembership {
    /// The log id of the membership entry.
    #[prost(message, optional, tag = "1")]
    pub log_id: Option<LogId>,
    /// The membership. Required.
    #[prost(message, optional, tag = "2")]
    pub membership: Option<Membership>,
}

impl From<&typ::StoredMembership> for StoredMembership {
    fn from(stored: &typ::StoredMembership) -> Self {
        Self {
            log_id: stored.log_id().as_ref().map(LogId::from),
            membership: Some(Membership::from(stored.membership())),
        }
    }
}

impl TryFrom<StoredMembership> for typ::StoredMembership {
    type Error = WireError;

    fn try_from(wire: StoredMembership) -> Result<Self, WireError> {
        let membership = wire
            .membership
            .ok_or(WireError::MissingField("StoredMembership.membership"))?;
        Ok(typ::StoredMembership::new(
            wire.log_id.map(typ::LogId::from),
            RaftMembership::try_from(membership)?,
        ))
    }
}

/// The payload of a blank entry (a new leader's first entry). It has no fields; it exists so the
/// payload `oneof` can tell "blank" apart from "missing".
#[derive(Clone, Copy, PartialEq, Eq, prost::Message)]
pub struct Blank {}

/// A raft log entry: its log id and its payload.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Entry {
    /// The entry's log id. Required.
    #[prost(message, optional, tag = "1")]
    pub log_id: Option<LogId>,
    /// The entry's payload. Required.
    #[prost(oneof = "entry::Payload", tags = "2, 3, 4")]
    pub payload: Option<entry::Payload>,
}

/// Nested types of [`Entry`].
pub mod entry {
    /// What an [`Entry`](super::Entry) carries.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Payload {
        /// A blank entry, committed by a new leader.
        #[prost(message, tag = "2")]
        Blank(super::Blank),
        /// An application command.
        #[prost(message, tag = "3")]
        Normal(crate::command::Command),
        /// A membership change.
        #[prost(message, tag = "4")]
        Membership(super::Membership),
    }
}

impl From<&typ::Entry> for Entry {
    fn from(entry: &typ::Entry) -> Self {
        let payload = match &entry.payload {
            EntryPayload::Blank => entry::Payload::Blank(Blank {}),
            EntryPayload::Normal(command) => entry::Payload::Normal(command.clone()),
            EntryPayload::Membership(membership) => {
                entry::Payload::Membership(Membership::from(membership))
            }
        };
        Self {
            log_id: Some(LogId::from(&entry.log_id)),
            payload: Some(payload),
        }
    }
}

impl From<typ::Entry> for Entry {
    /// Moves the entry's command into its wire form; a replication RPC, which owns its entries,
    /// converts them this way rather than copying each command once more.
    fn from(entry: typ::Entry) -> Self {
        match entry.payload {
            EntryPayload::Normal(command) => Self {
                log_id: Some(LogId::from(&entry.log_id)),
                payload: Some(entry::Payload::Normal(command)),
            },
            _ => Self::from(&entry),
        }
    }
}

impl Entry {
    /// The length of [`Entry::encode_borrowed`]'s encoding of `entry`.
    pub(crate) fn encoded_len_borrowed(entry: &typ::Entry) -> usize {
        match &entry.payload {
            EntryPayload::Normal(command) => {
                prost::encoding::message::encoded_len(1, &LogId::from(&entry.log_id))
                    + prost::encoding::message::encoded_len(3, command)
            }
            _ => Self::from(entry).encoded_len(),
        }
    }

    /// Appends to `buf` the bytes `Entry::from(entry).encode_to_vec()` gives, without copying
    /// the entry's command into a wire value first (the log encodes every entry it appends).
    /// Fields go in tag order, as prost's derived encoding writes them.
    pub(crate) fn encode_borrowed(entry: &typ::Entry, buf: &mut Vec<u8>) {
        match &entry.payload {
            EntryPayload::Normal(command) => {
                prost::encoding::message::encode(1, &LogId::from(&entry.log_id), buf);
                prost::encoding::message::encode(3, command, buf);
            }
            _ => Self::from(entry).encode_raw(buf),
        }
    }
}

impl TryFrom<Entry> for RaftEntry {
    type Error = WireError;

    fn try_from(wire: Entry) -> Result<Self, WireError> {
        let log_id = wire.log_id.ok_or(WireError::MissingField("Entry.log_id"))?;
        let payload = wire
            .payload
            .ok_or(WireError::MissingField("Entry.payload"))?;
        let payload = match payload {
            entry::Payload::Blank(Blank {}) => EntryPayload::Blank,
            entry::Payload::Normal(command) => EntryPayload::Normal(command),
            entry::Payload::Membership(membership) => {
                EntryPayload::Membership(RaftMembership::try_from(membership)?)
            }
        };
        Ok(typ::Entry {
            log_id: typ::LogId::from(log_id),
            payload,
        })
    }
}

/// A snapshot's metadata: the last log id it covers and the membership in effect there.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct SnapshotMeta {
    /// The last log id the snapshot includes (none for a snapshot of the empty state).
    #[prost(message, optional, tag = "1")]
    pub last_log_id: Option<LogId>,
    /// The last membership the snapshot includes. Required.
    #[prost(message, optional, tag = "2")]
    pub last_membership: Option<StoredMembership>,
    /// The application's name for this snapshot (for example its file name). openraft 0.10 no
    /// longer carries a snapshot id, so converting from [`typ::SnapshotMeta`] leaves it empty for
    /// the snapshot's owner to fill in, and converting back ignores it.
    #[prost(string, tag = "3")]
    pub snapshot_id: String,
}

impl From<&typ::SnapshotMeta> for SnapshotMeta {
    fn from(meta: &typ::SnapshotMeta) -> Self {
        Self {
            last_log_id: meta.last_log_id.as_ref().map(LogId::from),
            last_membership: Some(StoredMembership::from(&meta.last_membership)),
            snapshot_id: String::new(),
        }
    }
}

impl TryFrom<SnapshotMeta> for typ::SnapshotMeta {
    type Error = WireError;

    fn try_from(wire: SnapshotMeta) -> Result<Self, WireError> {
        let last_membership = wire
            .last_membership
            .ok_or(WireError::MissingField("SnapshotMeta.last_membership"))?;
        Ok(typ::SnapshotMeta {
            last_log_id: wire.last_log_id.map(typ::LogId::from),
            last_membership: typ::StoredMembership::try_from(last_membership)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;
    use crate::command::Op;
    use crate::command::Txn;

    fn log_id(term: u64, node_id: u64, index: u64) -> typ::LogId {
        typ::LogId::new(LeaderId { term, node_id }, index)
    }

    fn membership() -> RaftMembership {
        let nodes: BTreeMap<NodeId, typ::Node> = (1..=4)
            .map(|id| {
                let addr = format!("https://node-{id}:2380");
                (id, typ::Node::new(addr))
            })
            .collect();
        // Joint config {1,2,3} -> {2,3,4}; node 4 is also listed, so nothing is a learner.
        let configs = vec![BTreeSet::from([1, 2, 3]), BTreeSet::from([2, 3, 4])];
        RaftMembership::new(configs, nodes).expect("valid membership")
    }

    /// Encodes to bytes and decodes again, so the test covers prost's encoding, not just the
    /// struct conversions.
    fn through_bytes<M>(wire: M) -> M
    where
        M: Message + Default,
    {
        M::decode(wire.encode_to_vec().as_slice()).expect("decodes")
    }

    #[test]
    fn log_id_round_trips() {
        let original = log_id(7, 3, 42);
        let back = typ::LogId::from(through_bytes(LogId::from(&original)));
        assert_eq!(original, back);
    }

    #[test]
    fn vote_round_trips_committed_and_not() {
        let uncommitted = typ::Vote::new(5, 2);
        let committed = typ::Vote::new_committed(6, 1);
        for original in [uncommitted, committed] {
            let back = typ::Vote::from(through_bytes(Vote::from(&original)));
            assert_eq!(original, back);
        }
    }

    #[test]
    fn membership_round_trips_joint_config_and_learner() {
        let mut nodes: BTreeMap<NodeId, typ::Node> = BTreeMap::new();
        for id in 1..=3 {
            nodes.insert(id, typ::Node::new(format!("addr-{id}")));
        }
        // Node 3 is in no voter set: a learner, to be promoted once caught up.
        nodes.entry(3).and_modify(|n| n.auto_promote = true);
        let with_learner =
            RaftMembership::new(vec![BTreeSet::from([1, 2])], nodes).expect("valid membership");
        for original in [membership(), with_learner, RaftMembership::default()] {
            let back = RaftMembership::try_from(through_bytes(Membership::from(&original)))
                .expect("converts back");
            assert_eq!(original, back);
        }
    }

    #[test]
    fn membership_with_voter_without_address_is_rejected() {
        let wire = Membership {
            configs: vec![VoterSet { ids: vec![1, 2] }],
            nodes: BTreeMap::from([(1, "addr-1".to_string())]),
            auto_promote: vec![],
        };
        let err = RaftMembership::try_from(wire).expect_err("voter 2 has no address");
        assert!(matches!(err, WireError::InvalidMembership(_)), "{err:?}");
    }

    #[test]
    fn stored_membership_round_trips() {
        let with_log_id = typ::StoredMembership::new(Some(log_id(2, 1, 9)), membership());
        let initial = typ::StoredMembership::default();
        for original in [with_log_id, initial] {
            let back =
                typ::StoredMembership::try_from(through_bytes(StoredMembership::from(&original)))
                    .expect("converts back");
            assert_eq!(original, back);
        }
    }

    #[test]
    fn stored_membership_without_membership_is_rejected() {
        let wire = StoredMembership {
            log_id: None,
            membership: None,
        };
        let err = typ::StoredMembership::try_from(wire).expect_err("membership is required");
        assert!(
            matches!(err, WireError::MissingField("StoredMembership.membership")),
            "{err:?}"
        );
    }

    // R-HA-001: every replica must read back exactly the entries the leader replicated.
    #[test]
    fn entry_round_trips_every_payload() {
        let command = Command::txn(Txn {
            compares: vec![],
            success: vec![Op::put("/registry/pods/default/a", b"{}".to_vec())],
            failure: vec![],
        });
        let entries = [
            typ::Entry {
                log_id: log_id(1, 1, 1),
                payload: EntryPayload::Blank,
            },
            typ::Entry {
                log_id: log_id(1, 1, 2),
                payload: EntryPayload::Normal(command),
            },
            typ::Entry {
                log_id: log_id(2, 3, 3),
                payload: EntryPayload::Membership(membership()),
            },
        ];
        for original in entries {
            let back =
                typ::Entry::try_from(through_bytes(Entry::from(&original))).expect("converts back");
            assert_eq!(original, back);
            // The log's in-place encoding and the RPC's by-value conversion give the same bytes.
            let bytes = Entry::from(&original).encode_to_vec();
            let mut borrowed = vec![7];
            Entry::encode_borrowed(&original, &mut borrowed);
            assert_eq!(bytes, borrowed[1..]);
            assert_eq!(bytes.len(), Entry::encoded_len_borrowed(&original));
            assert_eq!(bytes, Entry::from(original).encode_to_vec());
        }
    }

    #[test]
    fn entry_missing_fields_are_rejected() {
        let no_payload = Entry {
            log_id: Some(LogId::from(&log_id(1, 1, 1))),
            payload: None,
        };
        let err = typ::Entry::try_from(no_payload).expect_err("payload is required");
        assert!(
            matches!(err, WireError::MissingField("Entry.payload")),
            "{err:?}"
        );

        let no_log_id = Entry {
            log_id: None,
            payload: Some(entry::Payload::Blank(Blank {})),
        };
        let err = typ::Entry::try_from(no_log_id).expect_err("log id is required");
        assert!(
            matches!(err, WireError::MissingField("Entry.log_id")),
            "{err:?}"
        );
    }

    #[test]
    fn snapshot_meta_round_trips() {
        let full = typ::SnapshotMeta {
            last_log_id: Some(log_id(3, 2, 100)),
            last_membership: typ::StoredMembership::new(Some(log_id(2, 1, 9)), membership()),
        };
        let empty = typ::SnapshotMeta::default();
        for original in [full, empty] {
            let mut wire = SnapshotMeta::from(&original);
            assert_eq!("", wire.snapshot_id);
            wire.snapshot_id = "snap-3-100".to_string();
            let decoded = through_bytes(wire);
            assert_eq!("snap-3-100", decoded.snapshot_id);
            let back = typ::SnapshotMeta::try_from(decoded).expect("converts back");
            assert_eq!(original, back);
        }
    }

    #[test]
    fn snapshot_meta_without_membership_is_rejected() {
        let wire = SnapshotMeta {
            last_log_id: None,
            last_membership: None,
            snapshot_id: String::new(),
        };
        let err = typ::SnapshotMeta::try_from(wire).expect_err("membership is required");
        assert!(
            matches!(err, WireError::MissingField("SnapshotMeta.last_membership")),
            "{err:?}"
        );
    }
}
