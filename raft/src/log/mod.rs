//! The durable raft log: openraft's log storage over a segmented write-ahead log.
//!
//! # Layout on disk
//! One directory holds segment files named by the index of their first entry
//! (`00000000000000000001.wal`), each a run of CRC-framed protobuf entries, and `log-state`, the
//! vote, committed log id and purged log id, replaced atomically.
//!
//! # Parts
//! - [`LogStore`] (`store`): the openraft `RaftLogStorage` / `RaftLogReader`, with the in-memory
//!   index and entry cache (bounded in entries and in bytes).
//! - `writer`: the single writer (a thread, or a task in [`WriterMode::Task`]); group commit,
//!   one `fdatasync` per group of appends.
//! - `recovery`: reading segments back on open, cutting a torn tail.
//! - `record`, `segment`, `hard_state`: framing, segment names, the state file.
//! - [`LogFs`] (`fs`): the file-system seam, with [`StdFs`] the real one.

mod error;
mod fs;
mod hard_state;
mod record;
mod recovery;
mod segment;
mod store;
mod writer;

#[cfg(test)]
mod cache_test;
#[cfg(test)]
mod commit_save_test;
#[cfg(test)]
mod store_test;
#[cfg(test)]
mod suite_test;

pub use error::InvalidRecord;
pub use error::LogError;
pub use fs::LogFile;
pub use fs::LogFs;
pub use fs::StdFs;
pub use store::LogOptions;
pub use store::LogStore;
pub use writer::WriterMode;
