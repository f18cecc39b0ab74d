//! Black-box tests of real `apiary dev` clusters (three `apiary serve` processes) over HTTPS with
//! the admin client certificate of the generated kubeconfig. Each test starts its own cluster in
//! a temporary directory on free loopback ports.

mod t05_readiness;
mod t10_replication;
mod t20_conflicts;
mod t30_leader_loss;
mod t40_restart;
