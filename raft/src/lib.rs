//! The replicated revisioned store behind Apiary: a pure MVCC state machine ([`mvcc`]) kept in
//! agreement across replicas by openraft.
//!
//! # Layout
//! - [`command`]: the replicated commands (protobuf) and their answers.
//! - [`error_chain()`]: an error and its causes on one line.
//! - [`log`]: the durable raft log (segmented write-ahead log, group-commit `fdatasync`).
//! - [`metrics`]: what the store measures (fsync, apply, snapshot, read-index and peer
//!   latencies, leader changes), recorded with atomics.
//! - [`mvcc`]: the pure, synchronous multi-version store.
//! - [`network`]: the peer RPCs over an injectable transport (client side and wire forms).
//! - [`replica`]: the replica handle: start, write, read index, status, and the server side of
//!   the peer RPCs ([`replica::peer_router`]).
//! - [`runtime`]: openraft's async runtime (tokio) with a random source a simulation can seed.
//! - [`state_machine`]: the raft state machine over [`mvcc`], with durable snapshots.
//! - [`typ`]: the raft type configuration.
//! - [`version`]: the versions of the peer protocol and the stored formats, and the peer RPC
//!   that tells what a peer speaks.
//! - [`wire`]: protobuf forms of the openraft types that are persisted or sent between replicas.

pub mod command;
mod error_chain;
pub mod log;
pub mod metrics;
pub mod mvcc;
pub mod network;
pub mod replica;
pub mod runtime;
pub mod state_machine;
pub mod typ;
pub mod version;
pub mod wire;

pub use error_chain::error_chain;
