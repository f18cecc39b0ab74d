//! The replicated revisioned store behind Apiary: a pure MVCC state machine ([`mvcc`]) kept in
//! agreement across replicas by openraft.
//!
//! # Layout
//! - [`command`]: the replicated commands (protobuf) and their answers.
//! - [`log`]: the durable raft log (segmented write-ahead log, group-commit `fdatasync`).
//! - [`mvcc`]: the pure, synchronous multi-version store.
//! - [`network`]: the peer RPCs over an injectable transport.
//! - [`replica`]: the replica handle: start, write, read index, status.
//! - [`runtime`]: openraft's async runtime (tokio) with a random source a simulation can seed.
//! - [`state_machine`]: the raft state machine over [`mvcc`], with durable snapshots.
//! - [`typ`]: the raft type configuration.
//! - [`wire`]: protobuf forms of the openraft types that are persisted or sent between replicas.

pub mod command;
pub mod log;
pub mod mvcc;
pub mod network;
pub mod replica;
pub mod runtime;
pub mod state_machine;
pub mod typ;
pub mod wire;
