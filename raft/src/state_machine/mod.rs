//! The replicated state machine: committed raft entries applied to the MVCC store, the applied
//! revision and apply notices published to readers, watches over them, and durable snapshots.

mod builder;
mod notice;
mod shared;
mod snapshot_dir;
mod snapshot_file;
mod store;
mod watch;

pub use builder::SnapshotBuilder;
pub use notice::ApplyNotice;
pub use shared::SharedState;
pub use store::StateMachineStore;
pub use watch::WatchBatch;
pub use watch::WatchStream;
