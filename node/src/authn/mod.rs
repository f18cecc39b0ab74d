//! The node's side of authentication methods: what needs files, the network or a
//! background task (the API crate keeps the pure parts).

pub mod jwt;
