//! What the simulated clients did and saw: every write and every read (quorum, "Any",
//! "NotOlderThan") with its outcome, every page of every paged list, every watcher's stream of
//! events, and the final view of every replica. Checkers
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
    /// Replace the object only if its revision is still `expected` (`PUT` carrying
    /// `metadata.resourceVersion`); a 409 Conflict refuses it.
    UpdateIf {
        /// The revision the writer last saw for the key.
        expected: u64,
    },
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
    /// The API refused the write with a client error (4xx other than 408), or with a 503 that
    /// invites a retry (`Retry-After`: the write was never proposed): nothing was stored.
    Rejected {
        /// The HTTP status.
        status: u16,
        /// The API's answer.
        reason: String,
    },
    /// No definite answer (a 504 Timeout, another server error, a timeout, a partition): the
    /// write may or may not have been committed, so a checker may neither require nor forbid
    /// its effect on that basis alone.
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

/// Which state a read asked for (its `resourceVersion`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadAt {
    /// No `resourceVersion`: "Most Recent", a quorum read.
    Quorum,
    /// `resourceVersion=0`: "Any", served from the replica's local applied state.
    Any,
    /// `resourceVersion=R`: "NotOlderThan", local state once the replica applied `R`.
    NotOlderThan(u64),
}

/// How a read ended, as the client saw it.
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

/// One read of a single key a client issued.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadRecord {
    /// The key read.
    pub key: String,
    /// Which state the read asked for.
    pub at: ReadAt,
    /// The replica host the request went to.
    pub replica: String,
    /// Virtual time when the request was sent.
    pub sent_at: Duration,
    /// Virtual time when the outcome was known.
    pub done_at: Duration,
    /// The outcome.
    pub outcome: ReadOutcome,
}

/// One item of a list page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListItem {
    /// The object's name (the key).
    pub key: String,
    /// Its value and revision.
    pub value: ReadValue,
}

/// A page the API served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The list's `metadata.resourceVersion`: the revision the page was served at.
    pub revision: u64,
    /// The items, in the order served.
    pub items: Vec<ListItem>,
    /// `metadata.continue`, when more items remain.
    pub continue_token: Option<String>,
    /// `metadata.remainingItemCount`, when the API said it.
    pub remaining: Option<u64>,
}

/// How one page request ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageOutcome {
    /// The page was served.
    Served(Page),
    /// 410 Gone: the continue token's revision was compacted.
    Gone,
    /// No answer, or another error answer.
    Failed {
        /// Why.
        reason: String,
    },
}

/// One request of a paged list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRecord {
    /// The replica host the request went to.
    pub replica: String,
    /// Virtual time when the request was sent.
    pub sent_at: Duration,
    /// Virtual time when the outcome was known.
    pub done_at: Duration,
    /// The outcome.
    pub outcome: PageOutcome,
}

/// A paged list (`?limit=N`, then each `continue` token), page by page until the last page
/// or the first page that was not served. Its first page is a quorum list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListRecord {
    /// The `limit` of every page.
    pub limit: u64,
    /// Every page request, in order.
    pub pages: Vec<PageRecord>,
}

impl ListRecord {
    /// The pages served, in order (those before the first that was not).
    pub fn served(&self) -> impl Iterator<Item = &Page> {
        self.pages.iter().map_while(|page| match &page.outcome {
            PageOutcome::Served(served) => Some(served),
            PageOutcome::Gone | PageOutcome::Failed { .. } => None,
        })
    }

    /// Whether the list was read to its last page (one without a `continue` token).
    pub fn complete(&self) -> bool {
        self.served()
            .last()
            .is_some_and(|page| page.continue_token.is_none())
    }
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
    /// Reads of single keys in the order they finished.
    pub reads: Vec<ReadRecord>,
    /// Paged lists in the order they finished.
    pub lists: Vec<ListRecord>,
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

    /// Appends a finished paged list.
    pub fn record_list(&mut self, record: ListRecord) {
        tracing::debug!(list = ?record, "history");
        self.lists.push(record);
    }

    /// The quorum reads ("Most Recent"), in the order they finished.
    pub fn quorum_reads(&self) -> impl Iterator<Item = &ReadRecord> {
        self.reads.iter().filter(|r| r.at == ReadAt::Quorum)
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
