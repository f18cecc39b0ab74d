//! The protobuf form of a whole MVCC store, as written into snapshot files and sent to
//! lagging replicas. Fields are only ever added, with new tags.

use bytes::Bytes;

/// A whole store.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StoreSnapshot {
    /// The newest revision applied.
    #[prost(uint64, tag = "1")]
    pub revision: u64,
    /// The compaction point.
    #[prost(uint64, tag = "2")]
    pub compacted: u64,
    /// Every key with its version chain, in key order.
    #[prost(message, repeated, tag = "3")]
    pub keys: Vec<KeySnapshot>,
    /// The cluster's identity, recorded when it was restored from a backup (empty for a
    /// cluster founded afresh).
    #[prost(string, tag = "4")]
    pub cluster_id: String,
}

/// One key's version chain.
#[derive(Clone, PartialEq, prost::Message)]
pub struct KeySnapshot {
    /// The key.
    #[prost(string, tag = "1")]
    pub key: String,
    /// Its versions in increasing `mod_revision` order.
    #[prost(message, repeated, tag = "2")]
    pub versions: Vec<VersionSnapshot>,
}

/// One version of a key.
#[derive(Clone, PartialEq, prost::Message)]
pub struct VersionSnapshot {
    /// The revision of the write.
    #[prost(uint64, tag = "1")]
    pub mod_revision: u64,
    /// The revision that created the key's generation (0 for a tombstone).
    #[prost(uint64, tag = "2")]
    pub create_revision: u64,
    /// Writes in the generation so far (0 for a tombstone).
    #[prost(uint64, tag = "3")]
    pub version: u64,
    /// The value; absent for a tombstone.
    #[prost(bytes = "bytes", optional, tag = "4")]
    pub value: Option<Bytes>,
}
