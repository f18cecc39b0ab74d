//! Everything HTTP about resources: request info, the registry and its generic store, the
//! authentication and authorization stages, discovery and health. No raft types in here: the
//! store is reached through [`storage::Storage`].

pub mod storage;
