//! What the simulated clients did and saw: every write and every quorum read with its outcome,
//! and the final view of every replica. Checkers (`crate::check`) judge a [`History`] after the run.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use bytes::Bytes;

/// How a write ended, as the client saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOutcome {
    /// The replica answered success: the write is committed at `revision`.
    Acked {
        /// The committed revision.
        revision: u64,
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
    /// The key written.
    pub key: String,
    /// The value written.
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
    /// The committed revision, if the write was acknowledged.
    pub fn acked_revision(&self) -> Option<u64> {
        match self.outcome {
            WriteOutcome::Acked { revision } => Some(revision),
            WriteOutcome::Rejected { .. } | WriteOutcome::Unknown { .. } => None,
        }
    }
}

impl fmt::Display for WriteRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "write {} via {} at {:?}..{:?}: {:?}",
            self.key, self.replica, self.sent_at, self.done_at, self.outcome
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
}

impl History {
    /// Appends a finished write.
    pub fn record_write(&mut self, record: WriteRecord) {
        self.writes.push(record);
    }

    /// Appends a finished read.
    pub fn record_read(&mut self, record: ReadRecord) {
        self.reads.push(record);
    }

    /// The acknowledged writes.
    pub fn acked(&self) -> impl Iterator<Item = &WriteRecord> {
        self.writes.iter().filter(|w| w.acked_revision().is_some())
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
