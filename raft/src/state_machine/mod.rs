//! The replicated state machine: committed raft entries applied to the MVCC store, the applied
//! revision and apply notices published to readers, watches over them, durable snapshots, and
//! backups with their restore into a new cluster.

mod backup;
mod builder;
mod notice;
mod restore;
mod shared;
mod snapshot_dir;
mod snapshot_file;
mod store;
mod watch;
mod watch_hub;

pub use backup::Backup;
pub use backup::BackupError;
pub use backup::BackupInfo;
pub use backup::recorded_checksum;
pub use builder::SnapshotBuilder;
pub use notice::ApplyNotice;
pub use restore::RestoreError;
pub use restore::RestoreTarget;
pub use restore::restore;
pub use restore::restore_on;
pub use shared::SharedState;
pub use store::StateMachineStore;
pub use watch::WatchBatch;
pub use watch::WatchStream;
