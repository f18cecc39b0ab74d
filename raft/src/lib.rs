//! The replicated revisioned store behind Apiary: a pure MVCC state machine ([`mvcc`]) kept in
//! agreement across replicas by openraft.
//!
//! # Layout
//! - [`command`]: the replicated commands (protobuf) and their answers.
//! - [`mvcc`]: the pure, synchronous multi-version store.
//! - [`typ`]: the raft type configuration.

pub mod command;
pub mod mvcc;
pub mod typ;
pub mod wire;
