//! The pure, synchronous MVCC store behind every replica: revisions, per-key version chains,
//! transactions, ranges at a revision and compaction (modelled on etcd's `mvcc` package).
//!
//! Nothing here does IO or knows about raft or HTTP: the state machine feeds it committed
//! commands in log order, and it answers reads at any revision it still holds.

mod error;
mod event;
mod history;
mod key_history;
mod snapshot;
mod store;

pub use error::MvccError;
pub use event::Event;
pub use event::EventKind;
pub use snapshot::KeySnapshot;
pub use snapshot::StoreSnapshot;
pub use snapshot::VersionSnapshot;
pub use store::HistoryRead;
pub use store::LiveSize;
pub use store::RangeChunk;
pub use store::RangeResult;
pub use store::Store;
pub use store::prefix_end;

/// A point in the store's history: the raft log index of the entry that committed a write.
/// Identical on every replica and strictly increasing; not dense (entries that write nothing
/// still advance the applied revision).
pub type Revision = u64;
