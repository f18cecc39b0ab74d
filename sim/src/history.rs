//! What the simulated clients did and saw: every write and every quorum read with its outcome,
//! every watcher's stream of events, and the final view of every replica. Checkers
//! (`crate::check`) judge a [`History`] after the run.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use bytes::Bytes;

use crate::watch_history::WatchLog;

/// What a write asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOp {
    /// Create the object (`POST`).
    Create,
    /// Replace the object unconditionally (`PUT` without `resourceVersion`).
    Update,
    /// Delete the object (`DELETE`). Its acknowledgement is a `Status` that carries no
    /// revision, so an acknowledged delete has [`WriteOutcome::Acked`] with `revision: None`.
    Delete,
}

/// How a write ended, as the client saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOutcome {
    /// The replica answered success: the write is committed, at `revision` when the answer
    /// says which (a delete's does not).
    Acked {
        /// The committed revision, if the answer carried it.
        revision: Option<u64>,
    },
    /// The API refused the write with a client error (4xx other than 408): nothing was
    /// stored.
    Rejected {
        /// The HTTP status.
        status: u16,
        /// The API's answer.
        reason: String,
    },
    /// No definite answer (server error, timeout, partition): the write may or may not have
    /// been committed, so a checker may neither require nor forbid its effect on that basis
    /// alone.
    Unknown {
        /// Why the client gave up.
        reason: String,
    },
}

/// One write a client issued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteRecord {
    /// What the write asked for.
    pub op: WriteOp,
    /// The key written.
    pub key: String,
    /// The value written (empty for a delete).
    pub value: Bytes,
    /// The replica host the request went to.
    pub replica: String,
    /// Virtual time when the request was sent.
    pub sent_at: Duration,
    /// Virtual time when the outcome was known.
    pub done_at: Duration,
    /// The outcome.
    pub outcome: WriteOutcome,
}

impl WriteRecord {
    /// The committed revision, if the write was acknowledged with one.
    pub fn acked_revision(&self) -> Option<u64> {
        match self.outcome {
            WriteOutcome::Acked { revision } => revision,
            WriteOutcome::Rejected { .. } | WriteOutcome::Unknown { .. } => None,
        }
    }

    /// Whether the write was acknowledged (with or without its revision).
    pub fn is_acked(&self) -> bool {
        matches!(self.outcome, WriteOutcome::Acked { .. })
    }
}

impl fmt::Display for WriteRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} {} via {} at {:?}..{:?}: {:?}",
            self.op, self.key, self.replica, self.sent_at, self.done_at, self.outcome
        )
    }
}

/// A key's value as one replica served it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadValue {
    /// The stored value.
    pub value: Bytes,
    /// The revision of the write that produced it.
    pub mod_revision: u64,
}

/// How a quorum read ended, as the client saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadOutcome {
    /// The replica served the key: its value, or `None` when the key does not exist.
    Served(Option<ReadValue>),
    /// No answer, or an error answer.
    Failed {
        /// Why.
        reason: String,
    },
}

/// One quorum read ("Most Recent": no `resourceVersion`) a client issued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadRecord {
    /// The key read.
    pub key: String,
    /// The replica host the request went to.
    pub replica: String,
    /// Virtual time when the request was sent.
    pub sent_at: Duration,
    /// Virtual time when the outcome was known.
    pub done_at: Duration,
    /// The outcome.
    pub outcome: ReadOutcome,
}

/// The final linearizable reads of one replica: every key the history wrote, with what the
/// replica served for it (`None`: the key does not exist there).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplicaView {
    /// Values by key.
    pub reads: BTreeMap<String, Option<ReadValue>>,
}

/// Everything the clients of one run recorded.
#[derive(Debug, Clone, Default)]
pub struct History {
    /// Writes in the order they were issued.
    pub writes: Vec<WriteRecord>,
    /// Quorum reads in the order they finished.
    pub reads: Vec<ReadRecord>,
    /// Final quorum reads, by replica host name.
    pub final_views: BTreeMap<String, ReplicaView>,
    /// What every watcher saw, one log per watcher.
    pub watches: Vec<WatchLog>,
}

impl History {
    /// Appends a finished write.
    pub fn record_write(&mut self, record: WriteRecord) {
        // Logged too, so that a run's trace (`--reproduce`) holds its history in time order.
        tracing::debug!(write = %record, "history");
        self.writes.push(record);
    }

    /// Appends a finished read.
    pub fn record_read(&mut self, record: ReadRecord) {
        tracing::debug!(read = ?record, "history");
        self.reads.push(record);
    }

    /// The acknowledged writes.
    pub fn acked(&self) -> impl Iterator<Item = &WriteRecord> {
        self.writes.iter().filter(|w| w.is_acked())
    }

    /// A hash of everything recorded (keys, values, replicas, virtual times, outcomes, final
    /// views): equal for two runs that replay exactly. `std`'s default hasher has fixed keys,
    /// so the hash is the same in every process.
    pub fn fingerprint(&self) -> u64 {
        let mut hasher = std::hash::DefaultHasher::new();
        std::hash::Hash::hash(&format!("{self:?}"), &mut hasher);
        std::hash::Hasher::finish(&hasher)
    }

    /// Every key any write touched, each once, in key order.
    pub fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = self.writes.iter().map(|w| w.key.clone()).collect();
        keys.sort();
        keys.dedup();
        keys
    }
}
