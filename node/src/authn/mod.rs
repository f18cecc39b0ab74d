//! The authentication methods the node builds from its flags into the API's
//! `AuthenticationMethods`.

pub mod token_file;
pub mod token_flags;
pub mod webhook;
