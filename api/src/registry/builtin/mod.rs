//! The built-in kinds: the table of every group/version/resource ([`rows`]), the row builder
//! over k8s-openapi's constants, the generic strategy, and the strategies of the kinds with
//! rules of their own. Types and schemas come from `k8s-openapi`; the rules are Kubernetes'.

mod admission_policy;
mod certificate_signing_request;
mod cluster_trust_bundle;
mod config_map;
mod cron_job;
mod cron_schedule;
mod custom_resource_definition;
mod daemon_set;
mod data_keys;
mod defaults;
mod deployment;
mod event;
mod fields;
mod flowcontrol;
mod generic;
mod ingress;
mod job;
mod lease;
mod mutating_admission_policy;
mod namespace;
mod persistent_volume_claim;
mod pod;
mod pod_disruption_budget;
mod pod_spec;
mod rbac;
mod replica_set;
mod replication_controller;
mod row;
mod secret;
mod service;
mod service_account;
mod stateful_set;
mod table;
#[cfg(test)]
mod table_tests;
mod validating_admission_policy;
mod webhook_configuration;
mod workload;

pub use certificate_signing_request::CertificateSigningRequestStrategy;
pub use cluster_trust_bundle::ClusterTrustBundleStrategy;
pub use config_map::ConfigMapStrategy;
pub use cron_job::CronJobStrategy;
pub use custom_resource_definition::CustomResourceDefinitionStrategy;
pub use custom_resource_definition::lifecycle as custom_resource_definition_lifecycle;
pub use daemon_set::DaemonSetStrategy;
pub use deployment::DeploymentStrategy;
pub use event::EventStrategy;
pub use flowcontrol::FlowSchemaStrategy;
pub use flowcontrol::PriorityLevelStrategy;
pub use generic::GenericStrategy;
pub use ingress::IngressStrategy;
pub use job::JobStrategy;
pub use lease::LeaseStrategy;
pub use mutating_admission_policy::MutatingAdmissionPolicyBindingStrategy;
pub use mutating_admission_policy::MutatingAdmissionPolicyStrategy;
pub use namespace::NamespaceStrategy;
pub use persistent_volume_claim::PersistentVolumeClaimStrategy;
pub use pod::PodStrategy;
pub use pod_disruption_budget::PodDisruptionBudgetStrategy;
pub use rbac::RbacKind;
pub use rbac::RbacStrategy;
pub use replica_set::ReplicaSetStrategy;
pub use replication_controller::ReplicationControllerStrategy;
pub use row::GroupName;
pub use row::JsonSchemaFn;
pub use row::Row;
pub use row::ScopeOf;
pub use row::SharedHome;
pub use row::Stage;
pub use row::StorageHome;
pub use row::StrategyFn;
pub use row::Verbs;
pub use row::kind;
pub use row::virtual_kind;
pub use secret::SecretStrategy;
pub use service::ServiceStrategy;
pub use service_account::ServiceAccountStrategy;
pub use stateful_set::StatefulSetStrategy;
pub use table::rows;
pub use validating_admission_policy::ValidatingAdmissionPolicyBindingStrategy;
pub use validating_admission_policy::ValidatingAdmissionPolicyStrategy;
pub use webhook_configuration::ADMISSION_REVIEW_VERSIONS;
pub use webhook_configuration::MATCH_CONDITION_VARIABLES;
pub use webhook_configuration::WebhookConfigurationStrategy;
pub use webhook_configuration::WebhookKind;

use super::ResourceType;
use crate::flavor::Flavor;

/// `v1` Namespace (core: the same in both flavors).
pub fn namespace_type() -> ResourceType {
    table::namespace_row().resource_type(Flavor::Platform)
}
