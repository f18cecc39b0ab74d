//! The kube-rs client (unmodified, from crates.io) against a real
//! `apiary dev --flavor kubernetes` cluster, one `Client` per kubeconfig context, including
//! across a leader change.

mod t10_configmaps;
mod t20_leader_change;
