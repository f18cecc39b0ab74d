//! THE built-in table: one row per group/version/resource of k8s-openapi `latest`
//! (Kubernetes 1.37), grouped by API group in Kubernetes' priority order (core first, then
//! the order of upstream's `/apis`), versions in priority order within a group.
//!
//! Rows that are not served in this build stay in the table, marked:
//! - `.stored_as::<H>(conversion)` / `.same_as::<H>()`: stored with another version's objects
//!   and served through a conversion (events.k8s.io/v1 events, autoscaling/v1 HPAs, and the
//!   off betas and alphas whose schema equals their storage version's);
//! - `.shares::<H>()`: stored with another version's objects, whose schema differs; not
//!   servable until a conversion is written (`--runtime-config` enabling one is refused);
//! - `virtual_kind` / `.computed()`: answers computed, nothing stored (the reviews,
//!   componentstatuses, bindings);
//! - off by default (alpha, and beta introduced after 1.22): served only when
//!   `--runtime-config` enables them and they own their storage.

use k8s_openapi::api::admissionregistration::v1 as admissionregistration_v1;
use k8s_openapi::api::admissionregistration::v1alpha1 as admissionregistration_v1alpha1;
use k8s_openapi::api::admissionregistration::v1beta1 as admissionregistration_v1beta1;
use k8s_openapi::api::apiserverinternal::v1alpha1 as apiserverinternal_v1alpha1;
use k8s_openapi::api::apps::v1 as apps_v1;
use k8s_openapi::api::authentication::v1 as authentication_v1;
use k8s_openapi::api::authorization::v1 as authorization_v1;
use k8s_openapi::api::autoscaling::v1 as autoscaling_v1;
use k8s_openapi::api::autoscaling::v2 as autoscaling_v2;
use k8s_openapi::api::batch::v1 as batch_v1;
use k8s_openapi::api::certificates::v1 as certificates_v1;
use k8s_openapi::api::certificates::v1beta1 as certificates_v1beta1;
use k8s_openapi::api::coordination::v1 as coordination_v1;
use k8s_openapi::api::coordination::v1alpha2 as coordination_v1alpha2;
use k8s_openapi::api::coordination::v1beta1 as coordination_v1beta1;
use k8s_openapi::api::core::v1 as core_v1;
use k8s_openapi::api::discovery::v1 as discovery_v1;
use k8s_openapi::api::events::v1 as events_v1;
use k8s_openapi::api::flowcontrol::v1 as flowcontrol_v1;
use k8s_openapi::api::lifecycle::v1alpha1 as lifecycle_v1alpha1;
use k8s_openapi::api::networking::v1 as networking_v1;
use k8s_openapi::api::node::v1 as node_v1;
use k8s_openapi::api::policy::v1 as policy_v1;
use k8s_openapi::api::rbac::v1 as rbac_v1;
use k8s_openapi::api::resource::v1 as resource_v1;
use k8s_openapi::api::resource::v1alpha3 as resource_v1alpha3;
use k8s_openapi::api::resource::v1beta1 as resource_v1beta1;
use k8s_openapi::api::resource::v1beta2 as resource_v1beta2;
use k8s_openapi::api::scheduling::v1 as scheduling_v1;
use k8s_openapi::api::scheduling::v1alpha3 as scheduling_v1alpha3;
use k8s_openapi::api::scheduling::v1beta1 as scheduling_v1beta1;
use k8s_openapi::api::storage::v1 as storage_v1;
use k8s_openapi::api::storagemigration::v1 as storagemigration_v1;
use k8s_openapi::api::storagemigration::v1beta1 as storagemigration_v1beta1;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions_v1;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1 as apiregistration_v1;

use super::CertificateSigningRequestStrategy;
use super::ClusterTrustBundleStrategy;
use super::ConfigMapStrategy;
use super::CronJobStrategy;
use super::CustomResourceDefinitionStrategy;
use super::DaemonSetStrategy;
use super::DeploymentStrategy;
use super::EventStrategy;
use super::FlowSchemaStrategy;
use super::IngressStrategy;
use super::JobStrategy;
use super::LeaseStrategy;
use super::MutatingAdmissionPolicyBindingStrategy;
use super::MutatingAdmissionPolicyStrategy;
use super::NamespaceStrategy;
use super::PersistentVolumeClaimStrategy;
use super::PodDisruptionBudgetStrategy;
use super::PodStrategy;
use super::PriorityLevelStrategy;
use super::RbacKind;
use super::RbacStrategy;
use super::ReplicaSetStrategy;
use super::ReplicationControllerStrategy;
use super::SecretStrategy;
use super::ServiceAccountStrategy;
use super::ServiceStrategy;
use super::StatefulSetStrategy;
use super::ValidatingAdmissionPolicyBindingStrategy;
use super::ValidatingAdmissionPolicyStrategy;
use super::WebhookConfigurationStrategy;
use super::WebhookKind;
use super::row::Row;
use super::row::Verbs;
use super::row::kind;
use super::row::virtual_kind;
use crate::registry::Subresource::Approval;
use crate::registry::Subresource::Binding;
use crate::registry::Subresource::Connect;
use crate::registry::Subresource::EphemeralContainers;
use crate::registry::Subresource::Eviction;
use crate::registry::Subresource::Finalize;
use crate::registry::Subresource::Resize;
use crate::registry::Subresource::Token;
use crate::registry::conversion::EVENTS_V1;
use crate::registry::conversion::HPA_V1;

/// Every built-in row, in discovery order.
pub fn rows() -> Vec<Row> {
    let mut rows = core();
    rows.extend(named_groups_a());
    rows.extend(named_groups_b());
    rows
}

/// The namespaces row (also read on every namespaced create, so built on its own).
pub fn namespace_row() -> Row {
    kind::<core_v1::Namespace>()
        .short(&["ns"])
        .verbs(Verbs::NoCollectionDelete)
        .subresource(Finalize)
        .status()
        .returns_deleted_object()
        .strategy(|flavor| Box::new(NamespaceStrategy::new(flavor)))
}

fn core() -> Vec<Row> {
    use core_v1::*;
    vec![
        virtual_kind::<Binding>(),
        kind::<ComponentStatus>()
            .short(&["cs"])
            .verbs(Verbs::GetList)
            .computed(),
        kind::<ConfigMap>()
            .short(&["cm"])
            .strategy(|_| Box::new(ConfigMapStrategy)),
        kind::<Endpoints>().short(&["ep"]),
        kind::<Event>()
            .short(&["ev"])
            .strategy(|flavor| Box::new(EventStrategy::new(flavor))),
        kind::<LimitRange>().short(&["limits"]),
        namespace_row(),
        kind::<Node>()
            .short(&["no"])
            .subresource(Connect("proxy"))
            .status(),
        kind::<PersistentVolumeClaim>()
            .short(&["pvc"])
            .status()
            .strategy(|flavor| Box::new(PersistentVolumeClaimStrategy::new(flavor))),
        kind::<PersistentVolume>().short(&["pv"]).status(),
        kind::<Pod>()
            .short(&["po"])
            .all()
            .subresource(Connect("attach"))
            .subresource(Binding)
            .subresource(EphemeralContainers)
            .subresource(Eviction)
            .subresource(Connect("exec"))
            .subresource(Connect("log"))
            .subresource(Connect("portforward"))
            .subresource(Connect("proxy"))
            .subresource(Resize)
            .status()
            .returns_deleted_object()
            .strategy(|_| Box::new(PodStrategy)),
        kind::<PodTemplate>(),
        kind::<ReplicationController>()
            .short(&["rc"])
            .all()
            .scale()
            .strategy(|_| Box::new(ReplicationControllerStrategy)),
        kind::<ResourceQuota>().short(&["quota"]).status(),
        kind::<Secret>().strategy(|flavor| Box::new(SecretStrategy::new(flavor))),
        kind::<ServiceAccount>()
            .short(&["sa"])
            .subresource(Token)
            .returns_deleted_object()
            .strategy(|_| Box::new(ServiceAccountStrategy)),
        kind::<Service>()
            .short(&["svc"])
            .all()
            .subresource(Connect("proxy"))
            .status()
            .returns_deleted_object()
            .strategy(|_| Box::new(ServiceStrategy)),
    ]
}

/// apiregistration .. storage, in upstream's priority order.
fn named_groups_a() -> Vec<Row> {
    vec![
        kind::<apiregistration_v1::APIService>()
            .api_extensions()
            .status(),
        kind::<apps_v1::ControllerRevision>(),
        kind::<apps_v1::DaemonSet>()
            .short(&["ds"])
            .all()
            .status()
            .strategy(|_| Box::new(DaemonSetStrategy)),
        kind::<apps_v1::Deployment>()
            .short(&["deploy"])
            .all()
            .scale()
            .strategy(|_| Box::new(DeploymentStrategy)),
        kind::<apps_v1::ReplicaSet>()
            .short(&["rs"])
            .all()
            .scale()
            .strategy(|_| Box::new(ReplicaSetStrategy)),
        kind::<apps_v1::StatefulSet>()
            .short(&["sts"])
            .all()
            .scale()
            .strategy(|_| Box::new(StatefulSetStrategy)),
        kind::<events_v1::Event>()
            .short(&["ev"])
            .stored_as::<core_v1::Event>(&EVENTS_V1),
        virtual_kind::<authentication_v1::SelfSubjectReview>(),
        virtual_kind::<authentication_v1::TokenReview>(),
        virtual_kind::<authorization_v1::LocalSubjectAccessReview>(),
        virtual_kind::<authorization_v1::SelfSubjectAccessReview>(),
        virtual_kind::<authorization_v1::SelfSubjectRulesReview>(),
        virtual_kind::<authorization_v1::SubjectAccessReview>(),
        kind::<autoscaling_v2::HorizontalPodAutoscaler>()
            .short(&["hpa"])
            .all()
            .status(),
        kind::<autoscaling_v1::HorizontalPodAutoscaler>()
            .short(&["hpa"])
            .all()
            .status()
            .stored_as::<autoscaling_v2::HorizontalPodAutoscaler>(&HPA_V1),
        kind::<batch_v1::CronJob>()
            .short(&["cj"])
            .all()
            .status()
            .strategy(|_| Box::new(CronJobStrategy)),
        kind::<batch_v1::Job>()
            .all()
            .status()
            .strategy(|flavor| Box::new(JobStrategy::new(flavor))),
        kind::<certificates_v1::CertificateSigningRequest>()
            .short(&["csr"])
            .subresource(Approval)
            .status()
            .strategy(|_| Box::new(CertificateSigningRequestStrategy)),
        kind::<certificates_v1::ClusterTrustBundle>()
            .strategy(|_| Box::new(ClusterTrustBundleStrategy)),
        kind::<certificates_v1::PodCertificateRequest>().status(),
        kind::<certificates_v1beta1::ClusterTrustBundle>()
            .same_as::<certificates_v1::ClusterTrustBundle>()
            .strategy(|_| Box::new(ClusterTrustBundleStrategy)),
        kind::<certificates_v1beta1::PodCertificateRequest>()
            .status()
            .shares::<certificates_v1::PodCertificateRequest>(),
        kind::<networking_v1::IngressClass>(),
        kind::<networking_v1::Ingress>()
            .short(&["ing"])
            .status()
            .strategy(|flavor| Box::new(IngressStrategy::new(flavor))),
        kind::<networking_v1::IPAddress>().short(&["ip"]),
        kind::<networking_v1::NetworkPolicy>().short(&["netpol"]),
        kind::<networking_v1::ServiceCIDR>().status(),
        kind::<policy_v1::PodDisruptionBudget>()
            .short(&["pdb"])
            .status()
            .strategy(|flavor| Box::new(PodDisruptionBudgetStrategy::new(flavor))),
        kind::<rbac_v1::ClusterRoleBinding>()
            .strategy(|flavor| Box::new(RbacStrategy::new(RbacKind::ClusterRoleBinding, flavor))),
        kind::<rbac_v1::ClusterRole>()
            .strategy(|flavor| Box::new(RbacStrategy::new(RbacKind::ClusterRole, flavor))),
        kind::<rbac_v1::RoleBinding>()
            .strategy(|flavor| Box::new(RbacStrategy::new(RbacKind::RoleBinding, flavor))),
        kind::<rbac_v1::Role>()
            .strategy(|flavor| Box::new(RbacStrategy::new(RbacKind::Role, flavor))),
        kind::<storage_v1::CSIDriver>(),
        kind::<storage_v1::CSINode>(),
        kind::<storage_v1::CSIStorageCapacity>(),
        kind::<storage_v1::StorageClass>()
            .short(&["sc"])
            .returns_deleted_object(),
        kind::<storage_v1::VolumeAttachment>().status(),
        kind::<storage_v1::VolumeAttributesClass>().short(&["vac"]),
    ]
}

/// admissionregistration .. lifecycle, in upstream's priority order (the groups newer than
/// upstream's priority list come last).
fn named_groups_b() -> Vec<Row> {
    use admissionregistration_v1 as ar;
    vec![
        kind::<ar::MutatingAdmissionPolicy>()
            .api_extensions()
            .strategy(|_| Box::new(MutatingAdmissionPolicyStrategy)),
        kind::<ar::MutatingAdmissionPolicyBinding>()
            .api_extensions()
            .strategy(|_| Box::new(MutatingAdmissionPolicyBindingStrategy)),
        kind::<ar::MutatingWebhookConfiguration>()
            .api_extensions()
            .strategy(|flavor| {
                Box::new(WebhookConfigurationStrategy::new(
                    WebhookKind::Mutating,
                    flavor,
                ))
            }),
        kind::<ar::ValidatingAdmissionPolicy>()
            .api_extensions()
            .status()
            .strategy(|_| Box::new(ValidatingAdmissionPolicyStrategy)),
        kind::<ar::ValidatingAdmissionPolicyBinding>()
            .api_extensions()
            .strategy(|_| Box::new(ValidatingAdmissionPolicyBindingStrategy)),
        kind::<ar::ValidatingWebhookConfiguration>()
            .api_extensions()
            .strategy(|flavor| {
                Box::new(WebhookConfigurationStrategy::new(
                    WebhookKind::Validating,
                    flavor,
                ))
            }),
        kind::<admissionregistration_v1beta1::MutatingAdmissionPolicy>()
            .api_extensions()
            .strategy(|_| Box::new(MutatingAdmissionPolicyStrategy))
            .same_as::<ar::MutatingAdmissionPolicy>(),
        kind::<admissionregistration_v1beta1::MutatingAdmissionPolicyBinding>()
            .api_extensions()
            .strategy(|_| Box::new(MutatingAdmissionPolicyBindingStrategy))
            .same_as::<ar::MutatingAdmissionPolicyBinding>(),
        kind::<admissionregistration_v1alpha1::MutatingAdmissionPolicy>()
            .api_extensions()
            .strategy(|_| Box::new(MutatingAdmissionPolicyStrategy))
            .same_as::<ar::MutatingAdmissionPolicy>(),
        kind::<admissionregistration_v1alpha1::MutatingAdmissionPolicyBinding>()
            .api_extensions()
            .strategy(|_| Box::new(MutatingAdmissionPolicyBindingStrategy))
            .same_as::<ar::MutatingAdmissionPolicyBinding>(),
        kind::<apiextensions_v1::CustomResourceDefinition>()
            .short(&["crd", "crds"])
            .api_extensions()
            .status()
            .strategy(|flavor| Box::new(CustomResourceDefinitionStrategy::new(flavor))),
        kind::<scheduling_v1::PriorityClass>().short(&["pc"]),
        kind::<scheduling_v1beta1::PodGroup>().status(),
        kind::<scheduling_v1beta1::Workload>(),
        kind::<scheduling_v1alpha3::CompositePodGroup>().status(),
        kind::<scheduling_v1alpha3::PodGroup>()
            .status()
            .same_as::<scheduling_v1beta1::PodGroup>(),
        kind::<scheduling_v1alpha3::Workload>().same_as::<scheduling_v1beta1::Workload>(),
        kind::<coordination_v1::Lease>().strategy(|flavor| Box::new(LeaseStrategy::new(flavor))),
        kind::<coordination_v1beta1::LeaseCandidate>(),
        kind::<coordination_v1alpha2::LeaseCandidate>()
            .same_as::<coordination_v1beta1::LeaseCandidate>(),
        kind::<node_v1::RuntimeClass>(),
        kind::<discovery_v1::EndpointSlice>(),
        kind::<flowcontrol_v1::FlowSchema>()
            .status()
            .strategy(|flavor| Box::new(FlowSchemaStrategy::new(flavor))),
        kind::<flowcontrol_v1::PriorityLevelConfiguration>()
            .status()
            .strategy(|flavor| Box::new(PriorityLevelStrategy::new(flavor))),
        kind::<apiserverinternal_v1alpha1::StorageVersion>().status(),
        kind::<resource_v1::DeviceClass>(),
        kind::<resource_v1::DeviceTaintRule>(),
        kind::<resource_v1::ResourceClaim>().status(),
        kind::<resource_v1::ResourceClaimTemplate>(),
        kind::<resource_v1::ResourceSlice>(),
        kind::<resource_v1beta2::DeviceClass>().same_as::<resource_v1::DeviceClass>(),
        kind::<resource_v1beta2::DeviceTaintRule>().same_as::<resource_v1::DeviceTaintRule>(),
        kind::<resource_v1beta2::ResourceClaim>()
            .status()
            .same_as::<resource_v1::ResourceClaim>(),
        kind::<resource_v1beta2::ResourceClaimTemplate>()
            .same_as::<resource_v1::ResourceClaimTemplate>(),
        kind::<resource_v1beta2::ResourceSlice>().same_as::<resource_v1::ResourceSlice>(),
        kind::<resource_v1beta1::DeviceClass>().same_as::<resource_v1::DeviceClass>(),
        kind::<resource_v1beta1::ResourceClaim>()
            .status()
            .shares::<resource_v1::ResourceClaim>(),
        kind::<resource_v1beta1::ResourceClaimTemplate>()
            .shares::<resource_v1::ResourceClaimTemplate>(),
        kind::<resource_v1beta1::ResourceSlice>().shares::<resource_v1::ResourceSlice>(),
        kind::<resource_v1alpha3::DeviceTaintRule>().same_as::<resource_v1::DeviceTaintRule>(),
        kind::<resource_v1alpha3::ResourcePoolStatusRequest>().status(),
        kind::<storagemigration_v1::StorageVersionMigration>().status(),
        kind::<storagemigration_v1beta1::StorageVersionMigration>()
            .status()
            .same_as::<storagemigration_v1::StorageVersionMigration>(),
        kind::<lifecycle_v1alpha1::EvictionRequest>(),
        kind::<lifecycle_v1alpha1::Eviction>(),
    ]
}
