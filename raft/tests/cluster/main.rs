//! In-process cluster tests of the replica: real replicas, real loopback TCP, plain HTTP peer
//! transport, temporary data directories.

mod harness;
mod t10_replicated_write;
mod t12_concurrent_reads;
mod t15_peer_input;
mod t20_leader_failover;
mod t25_partition;
mod t30_full_restart;
mod t40_snapshot;
mod t50_join;
mod t55_remove;
mod t60_members;
