//! The storage seam of the API server: the only way `api` reaches persisted objects.
//!
//! `node` implements [`Storage`] over the replicated store; `api`'s own tests implement it over
//! the in-memory MVCC store. Keys are opaque strings (`/registry/<group>/<resource>/[<ns>/]<name>`)
//! and values opaque bytes; revisions are the store's (DESIGN.md §3): strictly increasing,
//! identical on every replica, not dense.

use bytes::Bytes;

/// A point in the store's history; `metadata.resourceVersion` is its decimal string.
pub type Revision = u64;

/// One stored object version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredObject {
    /// The object's key.
    pub key: String,
    /// The bytes the API layer stored.
    pub value: Bytes,
    /// The revision of the write that produced this version.
    pub mod_revision: Revision,
    /// The revision at which the object was created.
    pub create_revision: Revision,
}

/// How fresh a read must be ("Resource versions", spec 000; DESIGN.md §3 "Read consistency").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadConsistency {
    /// Most recent: linearizable (quorum read-index), on any replica.
    Linearizable,
    /// Any: whatever the serving replica has applied, immediately.
    Any,
    /// At least this revision: the replica's state once it has applied it.
    NotOlderThan(Revision),
    /// Exactly this revision, from MVCC history.
    Exact(Revision),
}

/// A condition a write makes on another key than its own: that `key` still exists at
/// `mod_revision`, the version the write's decision was made from (a create in a namespace
/// guards the namespace it found open).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    /// The guarded key.
    pub key: String,
    /// The revision the key must still be at.
    pub mod_revision: Revision,
}

/// A page of a list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListPage {
    /// Matching objects in key order.
    pub items: Vec<StoredObject>,
    /// The revision the list was served at.
    pub revision: Revision,
    /// Matching objects after this page (0: the list is complete).
    pub remaining: u64,
}

/// A chunk of a collection read in chunks ([`Storage::list_chunk`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListChunk {
    /// Matching objects in key order.
    pub items: Vec<StoredObject>,
    /// The revision the chunk was served at.
    pub revision: Revision,
    /// Whether matching objects follow the chunk.
    pub more: bool,
}

/// What a watched change did to its object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// The object was created or replaced.
    Put,
    /// The object was removed.
    Delete,
}

/// One change to one object, as a watch delivers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// What happened.
    pub kind: ChangeKind,
    /// For a put, the new version. For a delete, the last version before it, with
    /// `mod_revision` set to the revision of the deletion (a `DELETED` event carries the last
    /// state of the object at the deletion's resourceVersion).
    pub object: StoredObject,
    /// The version before the change; `None` when the put created the object.
    pub previous: Option<StoredObject>,
}

/// The changes one revision made under a watched prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeBatch {
    /// The revision of the changes.
    pub revision: Revision,
    /// The changes, in the order the revision made them (never empty).
    pub changes: Vec<Change>,
}

/// The changes under a prefix after a revision, in revision order, each once.
///
/// ### Correctness requirements
/// - Batches come in strictly increasing revision order, and together they hold every change
///   under the prefix after the start revision: a watch restarted after the last revision it
///   received, on any replica, continues with no gap and no duplicate.
/// - [`WatchStream::progress`] never exceeds a revision whose changes are still to come.
/// - [`WatchStream::next`] is cancel safe: dropping its future loses nothing.
#[async_trait::async_trait]
pub trait WatchStream: Send {
    /// The next revision's changes; waits while there are none. `Ok(None)` when the store
    /// stopped serving; `Compacted` when the watch fell behind the history kept.
    async fn next(&mut self) -> Result<Option<ChangeBatch>, StorageError>;

    /// Every change up to this revision has been returned (what a BOOKMARK reports).
    fn progress(&self) -> Revision;
}

/// Why a storage call failed. Fatal, retryable and outcome-unknown failures are kept apart:
/// `Unavailable` did nothing and may succeed if tried again (no leader yet, a deadline passed
/// before the write was proposed), `OutcomeUnknown` is a write that may have happened, and
/// `Internal` will not succeed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StorageError {
    /// No object at the key (or not at the requested revision).
    #[error("key {key} not found")]
    NotFound {
        /// The key.
        key: String,
    },
    /// A create found an object at the key.
    #[error("key {key} already exists")]
    AlreadyExists {
        /// The key.
        key: String,
    },
    /// A compare-and-swap found another revision than the one expected.
    #[error("key {key} is at revision {actual}, not {expected}")]
    Conflict {
        /// The key.
        key: String,
        /// The revision the caller expected.
        expected: Revision,
        /// The revision found.
        actual: Revision,
    },
    /// A write's [`Guard`] no longer held: its key moved on or is gone. Nothing was written.
    #[error("key {key} changed after the write read it")]
    GuardFailed {
        /// The guarded key.
        key: String,
    },
    /// The revision asked for is older than the compaction point.
    #[error("revision {requested} has been compacted (oldest available {compacted})")]
    Compacted {
        /// The revision asked for.
        requested: Revision,
        /// The compaction point.
        compacted: Revision,
    },
    /// The replica did not reach the revision asked for within the wait bound.
    #[error("revision {requested} is newer than this replica's {current}")]
    TooLargeRevision {
        /// The revision asked for.
        requested: Revision,
        /// The replica's newest applied revision.
        current: Revision,
    },
    /// The store cannot answer now (no leader, a peer deadline passed); retrying may succeed.
    #[error("storage unavailable: {reason}")]
    Unavailable {
        /// What was unavailable.
        reason: String,
    },
    /// A write was proposed but its commit was not observed here in time: it may have happened
    /// (or did, and is not applied on this replica yet). Retrying it blindly could apply it twice.
    #[error("the write's outcome is unknown: {reason}")]
    OutcomeUnknown {
        /// Why the outcome is unknown.
        reason: String,
    },
    /// The store failed in a way retrying will not fix.
    #[error("storage failure: {reason}")]
    Internal {
        /// What failed.
        reason: String,
    },
    /// The value of a write is larger than a stored object may be (etcd's `request is too
    /// large`); the write was refused before it was proposed.
    #[error("the value for key {key} is {size} bytes, more than the {limit} allowed")]
    TooLarge {
        /// The key.
        key: String,
        /// The value's size in bytes.
        size: usize,
        /// The most bytes a value may have.
        limit: usize,
    },
}

/// Object persistence with revisions.
///
/// ### Correctness requirements
/// - Every write returns only after it is committed by a quorum and applied on the replica that
///   answers, so a later read from the same replica with any consistency sees it.
/// - Revisions returned are the store's global revisions: a revision obtained on one replica
///   means the same history on every replica.
/// - A failed write stores nothing.
#[async_trait::async_trait]
pub trait Storage: Send + Sync + 'static {
    /// Stores `value` at `key` if no object is there; fails with `AlreadyExists` otherwise.
    async fn create(&self, key: &str, value: Bytes) -> Result<StoredObject, StorageError>;

    /// As [`Storage::create`], in the same transaction as a check of `guard`: `GuardFailed`
    /// when the guarded key is not at its revision (then nothing is written), else as
    /// `create`. One proposal: the guard costs no read before it.
    async fn create_guarded(
        &self,
        key: &str,
        value: Bytes,
        guard: &Guard,
    ) -> Result<StoredObject, StorageError>;

    /// The object at `key`, read with `consistency`. `Compacted` for an `Exact` revision below
    /// the compaction point; `TooLargeRevision` when a `NotOlderThan`/`Exact` revision is not
    /// reached in time.
    async fn get(
        &self,
        key: &str,
        consistency: ReadConsistency,
    ) -> Result<Option<StoredObject>, StorageError>;

    /// Objects whose keys start with `prefix` and sort after `start_after` (if given), in key
    /// order, at most `limit` (0: all). Errors as for [`Storage::get`].
    async fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
        limit: usize,
        consistency: ReadConsistency,
    ) -> Result<ListPage, StorageError>;

    /// At most `limit` (at least one) objects under `prefix` after `start_after`, as
    /// [`Storage::list`] reads them, and whether more follow: for reading a whole collection
    /// in chunks, where counting what remains after each chunk would cost a pass over the
    /// rest of it. A store may answer it through [`Storage::list`], as this default does.
    async fn list_chunk(
        &self,
        prefix: &str,
        start_after: Option<&str>,
        limit: usize,
        consistency: ReadConsistency,
    ) -> Result<ListChunk, StorageError> {
        let page = self
            .list(prefix, start_after, limit.max(1), consistency)
            .await?;
        Ok(ListChunk {
            items: page.items,
            revision: page.revision,
            more: page.remaining > 0,
        })
    }

    /// Replaces the object at `key` if its current `mod_revision` is `expected`. `NotFound`
    /// when there is no object; `Conflict` (with the current revision) when it moved on.
    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected: Revision,
    ) -> Result<StoredObject, StorageError>;

    /// Watches the objects whose keys start with `prefix` for changes after revision `after`.
    /// Fails with `Compacted` when `after` is below the compaction point. An `after` the
    /// serving replica has not reached yet is not an error: the stream waits for it.
    async fn watch(
        &self,
        prefix: &str,
        after: Revision,
    ) -> Result<Box<dyn WatchStream>, StorageError>;

    /// Removes the object at `key`, if `expected` is given only when its current
    /// `mod_revision` equals it. Returns the deleted version, with `mod_revision` set to the
    /// revision of the deletion.
    async fn delete(
        &self,
        key: &str,
        expected: Option<Revision>,
    ) -> Result<StoredObject, StorageError>;
}
