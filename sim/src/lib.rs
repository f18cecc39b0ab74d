//! Deterministic simulations of whole Apiary clusters: the real replica code runs on turmoil
//! hosts with simulated network and virtual time, clients record histories, and checkers verify
//! them (DESIGN.md §6).
//!
//! # Layout
//! - [`net`]: the real routers on simulated sockets, and deadline-bounded calls between hosts.
//! - [`history`]: what clients did and saw.
//! - [`check`]: one checker per named guarantee, run over a history.

pub mod check;
pub mod history;
pub mod net;
