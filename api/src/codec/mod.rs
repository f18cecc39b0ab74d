//! Wire formats of request and response bodies.

pub mod protobuf;
