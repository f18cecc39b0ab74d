//! Typed errors of the MVCC store.

use super::Revision;

/// Why a read or a compaction at a revision could not be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MvccError {
    /// The revision asked for is older than the compaction point: its history is gone.
    #[error("mvcc: required revision {requested} has been compacted (compacted at {compacted})")]
    Compacted {
        /// The revision asked for.
        requested: Revision,
        /// The store's compaction point.
        compacted: Revision,
    },
    /// The revision asked for is newer than anything this store has applied.
    #[error("mvcc: required revision {requested} is a future revision (current {current})")]
    FutureRevision {
        /// The revision asked for.
        requested: Revision,
        /// The newest revision applied.
        current: Revision,
    },
}
