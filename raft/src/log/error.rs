//! Errors of the durable raft log.

use std::io;
use std::path::PathBuf;

use crate::wire::WireError;

/// Why the raft log failed.
///
/// Every variant is fatal for the replica: the log can no longer promise that what it reported
/// durable is durable, or what it reads is what was written. None is retryable, and none is a
/// forward-to-leader case (the log is local). openraft receives them as [`io::Error`] (see the
/// `From` impl) and stops the raft node.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// A file operation failed.
    #[error("raft log: cannot {op} {}", path.display())]
    Io {
        /// The operation, e.g. "read segment".
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A record before the last segment's tail is damaged: acknowledged entries are lost.
    #[error("raft log: segment {} is corrupt at byte {offset}: {reason}", path.display())]
    Corrupt {
        /// The segment file.
        path: PathBuf,
        /// Where the damaged record starts.
        offset: u64,
        /// What is wrong with it.
        reason: String,
    },
    /// A record's checksum holds but its payload is not a valid entry: a writer bug or a format
    /// this build does not understand.
    #[error("raft log: record at byte {offset} of {} is not a valid entry", path.display())]
    InvalidEntry {
        /// The segment file.
        path: PathBuf,
        /// Where the record starts.
        offset: u64,
        /// What is invalid.
        #[source]
        source: InvalidRecord,
    },
    /// The entries on disk skip or repeat an index.
    #[error("raft log: expected entry {expected} but found {found} in {}", path.display())]
    Gap {
        /// The segment file.
        path: PathBuf,
        /// The index that should come next.
        expected: u64,
        /// The index found.
        found: u64,
    },
    /// The state file (vote, committed, purged) is damaged. It is replaced atomically, so this is
    /// disk corruption, not a torn write.
    #[error("raft log: state file {} is corrupt", path.display())]
    CorruptState {
        /// The state file.
        path: PathBuf,
        /// What is invalid.
        #[source]
        source: InvalidRecord,
    },
    /// An entry is too large for one record (4 GiB).
    #[error("raft log: entry {index} is {len} bytes, larger than a record can hold")]
    RecordTooLarge {
        /// The entry's index.
        index: u64,
        /// Its encoded length.
        len: usize,
    },
    /// An append does not continue the log (it would leave a hole or rewrite purged entries).
    #[error("raft log: cannot append entry {found} after entry {last:?}")]
    NotContiguous {
        /// The last index in the log, if any.
        last: Option<u64>,
        /// The index appended.
        found: u64,
    },
    /// An earlier write failed, so the log on disk is in an unknown state and accepts no more
    /// work.
    #[error("raft log: an earlier write failed; the log is stopped")]
    Stopped,
}

/// Why a record's bytes are not a valid value.
#[derive(Debug, thiserror::Error)]
pub enum InvalidRecord {
    /// The framing (length or checksum) is wrong.
    #[error("bad framing: {0}")]
    Framing(String),
    /// The payload is not valid protobuf.
    #[error("payload does not decode")]
    Decode(#[source] prost::DecodeError),
    /// The payload decodes but is not a valid openraft value.
    #[error("payload is not a valid value")]
    Wire(#[source] WireError),
}

impl From<LogError> for io::Error {
    fn from(err: LogError) -> Self {
        let kind = match &err {
            LogError::Io { source, .. } => source.kind(),
            LogError::Corrupt { .. }
            | LogError::InvalidEntry { .. }
            | LogError::Gap { .. }
            | LogError::CorruptState { .. } => io::ErrorKind::InvalidData,
            LogError::RecordTooLarge { .. } | LogError::NotContiguous { .. } => {
                io::ErrorKind::InvalidInput
            }
            LogError::Stopped => io::ErrorKind::BrokenPipe,
        };
        io::Error::new(kind, err)
    }
}
