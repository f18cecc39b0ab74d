//! The client API's request and answer bodies (protobuf, like everything else that crosses the
//! simulated network). Writes reuse the replicated [`Txn`] and [`CommandResponse`].
//!
//! [`Txn`]: apiary_raft::command::Txn
//! [`CommandResponse`]: apiary_raft::command::CommandResponse

use apiary_raft::command::KeyValue;

/// A linearizable read of one key.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ReadRequest {
    /// The key read.
    #[prost(string, tag = "1")]
    pub key: String,
}

/// The answer to a [`ReadRequest`].
#[derive(Clone, PartialEq, prost::Message)]
pub struct ReadReply {
    /// The revision the replica served the read at (at least the read index).
    #[prost(uint64, tag = "1")]
    pub revision: u64,
    /// The key's current value; absent when the key does not exist.
    #[prost(message, optional, tag = "2")]
    pub kv: Option<KeyValue>,
}

/// What a replica knows about the cluster.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StatusReply {
    /// The replica's raft id.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// The leader it currently follows (or is), if any.
    #[prost(uint64, optional, tag = "2")]
    pub leader: Option<u64>,
    /// The newest revision it has applied.
    #[prost(uint64, tag = "3")]
    pub applied: u64,
}
