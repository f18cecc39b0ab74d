//! Wire formats of responses and request bodies.

pub mod table;
