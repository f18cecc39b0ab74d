//! The kube-rs client (unmodified, from crates.io) against a real
//! `apiary dev --flavor kubernetes` cluster, one `Client` per kubeconfig context.

mod t10_configmaps;
