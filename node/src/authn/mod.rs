//! The node's side of authentication methods: what needs files, the network or a background
//! task (the API crate keeps the pure parts), built from the flags into the API's
//! `AuthenticationMethods`.

pub mod jwt;
pub mod request_header;
pub mod token_file;
pub mod token_flags;
pub mod webhook;
