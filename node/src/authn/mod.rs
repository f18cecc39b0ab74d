//! The node's side of authentication: the flags of each method and how they become the API's
//! authenticators.

pub mod request_header;
