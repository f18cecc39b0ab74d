//! Kubernetes' `SetDefaults_*` for the kinds that have them: the pod spec (also inside every
//! pod template) and the workload kinds' specs. Defaults run on create and update, before
//! preparation and validation, as upstream's decoding does.

mod pod;
mod workloads;

pub use pod::default_pod_spec;
pub use workloads::default_cron_job;
pub use workloads::default_daemon_set;
pub use workloads::default_deployment;
pub use workloads::default_job;
pub use workloads::default_replica_set;
pub use workloads::default_replication_controller;
pub use workloads::default_stateful_set;
