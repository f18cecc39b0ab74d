//! Deterministic simulations of whole Apiary clusters: the real replica code runs on turmoil
//! hosts with simulated network and virtual time, clients record histories, and checkers verify
//! them (DESIGN.md §6).
//!
//! # Layout
//! - [`cluster`]: a seeded simulation with one host per replica.
//! - [`clock`]: each replica host's wall clock, which clock-skew faults shift.
//! - [`disk`]: the in-memory disk under each replica's raft log.
//! - [`fault`]: host crashes and restarts, link latency and loss, clock skew a client asks
//!   for mid-run.
//! - [`net`]: the real routers on simulated sockets, and deadline-bounded calls between hosts.
//! - [`resource_api`]: the real resource API each replica host serves.
//! - [`planted`]: bugs built into the replicas on purpose, to prove the checkers catch them.
//! - [`status_api`]: which leader a replica follows, for aiming faults.
//! - [`client`]: calls both, recording a [`history::History`].
//! - [`watch`]: watchers that stream events, resume across replicas and record a
//!   [`watch_history::WatchLog`].
//! - [`logging`]: log lines stamped with virtual time.
//! - [`check`]: one checker per named guarantee, run over a history.
//! - [`scenario`]: cluster + workload + faults + checks, as a function of a seed.
//! - [`trace`]: a digest of everything the replicas logged, to prove a seed replays exactly.

pub mod check;
pub mod client;
pub mod clock;
pub mod cluster;
pub mod disk;
pub mod fault;
pub mod history;
pub mod logging;
pub mod net;
pub mod planted;
pub mod resource_api;
pub mod scenario;
pub mod status_api;
pub mod trace;
pub mod watch;
pub mod watch_history;
