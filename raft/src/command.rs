//! The replicated commands: what a raft log entry carries and what applying it answers.
//!
//! Everything here is protobuf (prost) so that a newer replica reads an older one's log entries
//! and snapshots (rolling upgrades): fields are only ever added, with new tags.
//!
//! A [`Command`] is either a [`Txn`] — compares on a key's `mod_revision` or existence, then the
//! success or the failure operations — or a [`Compact`]. Everything that must be identical on all
//! replicas (object bodies with their uid and timestamps) is decided before proposing, so applying
//! a command is deterministic.

use std::fmt;
use std::sync::Arc;

use bytes::Buf;
use bytes::BufMut;
use bytes::Bytes;
use prost::DecodeError;
use prost::encoding::DecodeContext;
use prost::encoding::WireType;
use prost::encoding::message;

/// One replicated command.
///
/// Its protobuf is the one `prost` derives for `message Command { oneof kind { Txn txn = 1;
/// Compact compact = 2; } }`, written out by hand (the [`prost::Message`] impl below) only
/// because the transaction sits behind an [`Arc`]: openraft clones each log entry it reads back
/// (once per follower it replicates to, once to apply it), and a clone now counts a reference
/// instead of copying every operation and key.
#[derive(Clone, PartialEq, Default, Debug)]
pub struct Command {
    /// The command's kind.
    pub kind: Option<command::Kind>,
}

/// Nested types of [`Command`].
#[allow(clippy::module_inception)]
pub mod command {
    use std::sync::Arc;

    /// The kinds of command.
    #[derive(Clone, PartialEq, Debug)]
    pub enum Kind {
        /// A transaction (field 1), shared by every clone of the command.
        Txn(Arc<super::Txn>),
        /// A history compaction (field 2).
        Compact(super::Compact),
    }
}

/// The field number of [`command::Kind::Txn`].
const TXN_TAG: u32 = 1;
/// The field number of [`command::Kind::Compact`].
const COMPACT_TAG: u32 = 2;

impl prost::Message for Command {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        match &self.kind {
            Some(command::Kind::Txn(txn)) => message::encode(TXN_TAG, txn.as_ref(), buf),
            Some(command::Kind::Compact(compact)) => message::encode(COMPACT_TAG, compact, buf),
            None => {}
        }
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        // As prost's derived oneof: a field of the kind present merges into it, another
        // replaces it.
        match (tag, &mut self.kind) {
            (TXN_TAG, Some(command::Kind::Txn(txn))) => {
                message::merge(wire_type, Arc::make_mut(txn), buf, ctx)
            }
            (TXN_TAG, _) => {
                let mut txn = Txn::default();
                message::merge(wire_type, &mut txn, buf, ctx)?;
                self.kind = Some(command::Kind::Txn(Arc::new(txn)));
                Ok(())
            }
            (COMPACT_TAG, Some(command::Kind::Compact(compact))) => {
                message::merge(wire_type, compact, buf, ctx)
            }
            (COMPACT_TAG, _) => {
                let mut compact = Compact::default();
                message::merge(wire_type, &mut compact, buf, ctx)?;
                self.kind = Some(command::Kind::Compact(compact));
                Ok(())
            }
            _ => prost::encoding::skip_field(wire_type, tag, buf, ctx),
        }
    }

    fn encoded_len(&self) -> usize {
        match &self.kind {
            Some(command::Kind::Txn(txn)) => message::encoded_len(TXN_TAG, txn.as_ref()),
            Some(command::Kind::Compact(compact)) => message::encoded_len(COMPACT_TAG, compact),
            None => 0,
        }
    }

    fn clear(&mut self) {
        self.kind = None;
    }
}

impl Command {
    /// A transaction command.
    pub fn txn(txn: Txn) -> Self {
        Self {
            kind: Some(command::Kind::Txn(Arc::new(txn))),
        }
    }

    /// A compaction command.
    pub fn compact(revision: u64) -> Self {
        Self {
            kind: Some(command::Kind::Compact(Compact { revision })),
        }
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Some(command::Kind::Txn(t)) => write!(
                f,
                "txn(compares={}, success={}, failure={})",
                t.compares.len(),
                t.success.len(),
                t.failure.len()
            ),
            Some(command::Kind::Compact(c)) => write!(f, "compact({})", c.revision),
            None => write!(f, "empty"),
        }
    }
}

/// A transaction: if every compare holds, run `success`, else run `failure`. All writes of one
/// transaction share one revision, so a key may be written at most once per transaction.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Txn {
    /// Conditions, all of which must hold for `success` to run.
    #[prost(message, repeated, tag = "1")]
    pub compares: Vec<Compare>,
    /// Operations run when every compare holds.
    #[prost(message, repeated, tag = "2")]
    pub success: Vec<Op>,
    /// Operations run otherwise.
    #[prost(message, repeated, tag = "3")]
    pub failure: Vec<Op>,
}

/// A condition on one key's current state.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Compare {
    /// The key compared.
    #[prost(string, tag = "1")]
    pub key: String,
    /// What is compared.
    #[prost(oneof = "compare::Target", tags = "2, 3")]
    pub target: Option<compare::Target>,
}

/// Nested types of [`Compare`].
pub mod compare {
    /// What a [`Compare`](super::Compare) checks.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Target {
        /// The key's current `mod_revision` equals this (0 = the key does not exist).
        #[prost(uint64, tag = "2")]
        ModRevision(u64),
        /// The key exists (`true`) or does not (`false`).
        #[prost(bool, tag = "3")]
        Exists(bool),
    }
}

impl Compare {
    /// Holds when `key` currently has this `mod_revision`.
    pub fn mod_revision(key: impl Into<String>, revision: u64) -> Self {
        Self {
            key: key.into(),
            target: Some(compare::Target::ModRevision(revision)),
        }
    }

    /// Holds when `key` exists (`true`) or does not (`false`).
    pub fn exists(key: impl Into<String>, exists: bool) -> Self {
        Self {
            key: key.into(),
            target: Some(compare::Target::Exists(exists)),
        }
    }
}

/// One operation of a transaction.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Op {
    /// The operation.
    #[prost(oneof = "op::Kind", tags = "1, 2, 3")]
    pub kind: Option<op::Kind>,
}

/// Nested types of [`Op`].
pub mod op {
    /// The kinds of operation.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Kind {
        /// Write a value; answers the previous value.
        #[prost(message, tag = "1")]
        Put(super::Put),
        /// Delete a key; answers the deleted value.
        #[prost(string, tag = "2")]
        Delete(String),
        /// Read a key; answers its current value.
        #[prost(string, tag = "3")]
        Get(String),
    }
}

/// The body of [`op::Kind::Put`].
#[derive(Clone, PartialEq, prost::Message)]
pub struct Put {
    /// The key written.
    #[prost(string, tag = "1")]
    pub key: String,
    /// The value written.
    #[prost(bytes = "bytes", tag = "2")]
    pub value: Bytes,
}

impl Op {
    /// Write `value` at `key`.
    pub fn put(key: impl Into<String>, value: impl Into<Bytes>) -> Self {
        Self {
            kind: Some(op::Kind::Put(Put {
                key: key.into(),
                value: value.into(),
            })),
        }
    }

    /// Delete `key`.
    pub fn delete(key: impl Into<String>) -> Self {
        Self {
            kind: Some(op::Kind::Delete(key.into())),
        }
    }

    /// Read `key`.
    pub fn get(key: impl Into<String>) -> Self {
        Self {
            kind: Some(op::Kind::Get(key.into())),
        }
    }
}

/// Compact history up to (excluding) `revision`: reads at revisions below it fail with
/// "compacted" afterwards.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Compact {
    /// The new compaction point.
    #[prost(uint64, tag = "1")]
    pub revision: u64,
}

/// A key's value at some revision, with its revision bookkeeping (as etcd's `KeyValue`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct KeyValue {
    /// The key.
    #[prost(string, tag = "1")]
    pub key: String,
    /// The value.
    #[prost(bytes = "bytes", tag = "2")]
    pub value: Bytes,
    /// The revision at which the key was last created.
    #[prost(uint64, tag = "3")]
    pub create_revision: u64,
    /// The revision of the last write to the key.
    #[prost(uint64, tag = "4")]
    pub mod_revision: u64,
    /// Writes since the key was created (1 after the create).
    #[prost(uint64, tag = "5")]
    pub version: u64,
}

/// What applying a [`Command`] answered.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CommandResponse {
    /// The revision of the entry that carried the command (its raft log index).
    #[prost(uint64, tag = "1")]
    pub revision: u64,
    /// For a [`Txn`]: whether the compares held (the success branch ran).
    #[prost(bool, tag = "2")]
    pub succeeded: bool,
    /// One result per operation of the branch that ran, in order.
    #[prost(message, repeated, tag = "3")]
    pub results: Vec<OpResult>,
    /// Set when the command could not be applied (e.g. compaction to a future revision);
    /// the entry is still consumed so replicas stay identical.
    #[prost(string, optional, tag = "4")]
    pub error: Option<String>,
}

/// The result of one [`Op`].
#[derive(Clone, PartialEq, prost::Message)]
pub struct OpResult {
    /// Put: the previous value; Delete: the deleted value; Get: the current value.
    #[prost(message, optional, tag = "1")]
    pub kv: Option<KeyValue>,
}

#[cfg(test)]
#[path = "command_test.rs"]
mod tests;
