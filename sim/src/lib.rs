//! Deterministic simulations of whole Apiary clusters: the real replica code runs on turmoil
//! hosts with simulated network and virtual time, clients record histories, and checkers verify
//! them (DESIGN.md §6).
//!
//! # Layout
//! - [`cluster`]: a seeded simulation with one host per replica, each running the node crate's
//!   own wiring (`apiary_node::wiring::run_host`) on simulated parts.
//! - [`clock`]: each replica host's wall clock, which clock-skew faults shift.
//! - [`disk`]: the in-memory disk under each replica's raft log.
//! - [`fault`]: host crashes and restarts, link latency and loss, clock skew a client asks
//!   for mid-run.
//! - [`net`]: simulated sockets the real routers are served on, the peer transport, and
//!   deadline-bounded calls between hosts.
//! - [`resource_api`]: what each host's resource API is configured with (port, identity,
//!   signing key).
//! - [`planted`]: bugs built into the replicas on purpose, to prove the checkers catch them.
//! - [`status_api`]: which leader a replica follows, for aiming faults; served beside the API.
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
