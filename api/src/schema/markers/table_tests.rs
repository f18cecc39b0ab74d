//! The markers table against k8s-openapi: every entry names a definition and a property
//! that exist, so a typo (or a field upstream dropped) fails here.

use super::ListType;
use super::PatchStrategy;
use super::markers;
use super::markers_of;
use super::table::MARKERS;

/// The definitions (with everything they reference) that `T…` generate.
macro_rules! definitions {
    ($($t:ty,)*) => {{
        let mut generator = schemars::SchemaGenerator::default();
        $(generator.subschema_for::<$t>();)*
        generator.take_definitions(true)
    }};
}

#[test]
fn table_is_sorted_and_unique() {
    for pair in MARKERS.windows(2) {
        assert!(
            (pair[0].0, pair[0].1) < (pair[1].0, pair[1].1),
            "{}.{} before {}.{}",
            pair[0].0,
            pair[0].1,
            pair[1].0,
            pair[1].1
        );
    }
}

#[test]
fn every_entry_names_a_property_k8s_openapi_has() {
    let defs = definitions!(
            k8s_openapi::api::admissionregistration::v1::MatchResources,
            k8s_openapi::api::admissionregistration::v1::MutatingAdmissionPolicySpec,
            k8s_openapi::api::admissionregistration::v1::MutatingWebhook,
            k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration,
            k8s_openapi::api::admissionregistration::v1::NamedRuleWithOperations,
            k8s_openapi::api::admissionregistration::v1::RuleWithOperations,
            k8s_openapi::api::admissionregistration::v1::TypeChecking,
            k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicyBindingSpec,
            k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicySpec,
            k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicyStatus,
            k8s_openapi::api::admissionregistration::v1::ValidatingWebhook,
            k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration,
            k8s_openapi::api::admissionregistration::v1alpha1::MatchResources,
            k8s_openapi::api::admissionregistration::v1alpha1::MutatingAdmissionPolicySpec,
            k8s_openapi::api::admissionregistration::v1alpha1::NamedRuleWithOperations,
            k8s_openapi::api::admissionregistration::v1beta1::MatchResources,
            k8s_openapi::api::admissionregistration::v1beta1::MutatingAdmissionPolicySpec,
            k8s_openapi::api::admissionregistration::v1beta1::NamedRuleWithOperations,
            k8s_openapi::api::apiserverinternal::v1alpha1::ServerStorageVersion,
            k8s_openapi::api::apiserverinternal::v1alpha1::StorageVersionStatus,
            k8s_openapi::api::apps::v1::DaemonSetStatus,
            k8s_openapi::api::apps::v1::DeploymentSpec,
            k8s_openapi::api::apps::v1::DeploymentStatus,
            k8s_openapi::api::apps::v1::ReplicaSetStatus,
            k8s_openapi::api::apps::v1::StatefulSetSpec,
            k8s_openapi::api::apps::v1::StatefulSetStatus,
            k8s_openapi::api::authentication::v1::TokenRequestSpec,
            k8s_openapi::api::authentication::v1::TokenReviewSpec,
            k8s_openapi::api::authentication::v1::TokenReviewStatus,
            k8s_openapi::api::authentication::v1::UserInfo,
            k8s_openapi::api::authorization::v1::FieldSelectorAttributes,
            k8s_openapi::api::authorization::v1::LabelSelectorAttributes,
            k8s_openapi::api::authorization::v1::NonResourceRule,
            k8s_openapi::api::authorization::v1::ResourceRule,
            k8s_openapi::api::authorization::v1::SubjectAccessReviewSpec,
            k8s_openapi::api::authorization::v1::SubjectRulesReviewStatus,
            k8s_openapi::api::autoscaling::v2::HPAScalingRules,
            k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscalerSpec,
            k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscalerStatus,
            k8s_openapi::api::batch::v1::CronJobStatus,
            k8s_openapi::api::batch::v1::JobStatus,
            k8s_openapi::api::batch::v1::PodFailurePolicy,
            k8s_openapi::api::batch::v1::PodFailurePolicyOnExitCodesRequirement,
            k8s_openapi::api::batch::v1::PodFailurePolicyRule,
            k8s_openapi::api::batch::v1::SuccessPolicy,
            k8s_openapi::api::batch::v1::UncountedTerminatedPods,
            k8s_openapi::api::certificates::v1::CertificateSigningRequestSpec,
            k8s_openapi::api::certificates::v1::CertificateSigningRequestStatus,
            k8s_openapi::api::certificates::v1beta1::PodCertificateRequestStatus,
            k8s_openapi::api::core::v1::Capabilities,
            k8s_openapi::api::core::v1::CephFSPersistentVolumeSource,
            k8s_openapi::api::core::v1::CephFSVolumeSource,
            k8s_openapi::api::core::v1::ComponentStatus,
            k8s_openapi::api::core::v1::ConfigMapProjection,
            k8s_openapi::api::core::v1::ConfigMapVolumeSource,
            k8s_openapi::api::core::v1::Container,
            k8s_openapi::api::core::v1::ContainerImage,
            k8s_openapi::api::core::v1::ContainerRestartRuleOnExitCodes,
            k8s_openapi::api::core::v1::ContainerStatus,
            k8s_openapi::api::core::v1::DownwardAPIProjection,
            k8s_openapi::api::core::v1::DownwardAPIVolumeSource,
            k8s_openapi::api::core::v1::EndpointSubset,
            k8s_openapi::api::core::v1::Endpoints,
            k8s_openapi::api::core::v1::EphemeralContainer,
            k8s_openapi::api::core::v1::ExecAction,
            k8s_openapi::api::core::v1::FCVolumeSource,
            k8s_openapi::api::core::v1::HTTPGetAction,
            k8s_openapi::api::core::v1::HostAlias,
            k8s_openapi::api::core::v1::ISCSIPersistentVolumeSource,
            k8s_openapi::api::core::v1::ISCSIVolumeSource,
            k8s_openapi::api::core::v1::LimitRangeSpec,
            k8s_openapi::api::core::v1::LinuxContainerUser,
            k8s_openapi::api::core::v1::LoadBalancerIngress,
            k8s_openapi::api::core::v1::LoadBalancerStatus,
            k8s_openapi::api::core::v1::NamespaceSpec,
            k8s_openapi::api::core::v1::NamespaceStatus,
            k8s_openapi::api::core::v1::NodeAffinity,
            k8s_openapi::api::core::v1::NodeAllocatableResourceClaimStatus,
            k8s_openapi::api::core::v1::NodeSelector,
            k8s_openapi::api::core::v1::NodeSelectorRequirement,
            k8s_openapi::api::core::v1::NodeSelectorTerm,
            k8s_openapi::api::core::v1::NodeSpec,
            k8s_openapi::api::core::v1::NodeStatus,
            k8s_openapi::api::core::v1::PersistentVolumeClaimSpec,
            k8s_openapi::api::core::v1::PersistentVolumeClaimStatus,
            k8s_openapi::api::core::v1::PersistentVolumeSpec,
            k8s_openapi::api::core::v1::PodAffinity,
            k8s_openapi::api::core::v1::PodAffinityTerm,
            k8s_openapi::api::core::v1::PodAntiAffinity,
            k8s_openapi::api::core::v1::PodDNSConfig,
            k8s_openapi::api::core::v1::PodExtendedResourceClaimStatus,
            k8s_openapi::api::core::v1::PodSecurityContext,
            k8s_openapi::api::core::v1::PodSpec,
            k8s_openapi::api::core::v1::PodStatus,
            k8s_openapi::api::core::v1::ProjectedVolumeSource,
            k8s_openapi::api::core::v1::RBDPersistentVolumeSource,
            k8s_openapi::api::core::v1::RBDVolumeSource,
            k8s_openapi::api::core::v1::ReplicationControllerSpec,
            k8s_openapi::api::core::v1::ReplicationControllerStatus,
            k8s_openapi::api::core::v1::ResourceQuotaSpec,
            k8s_openapi::api::core::v1::ResourceRequirements,
            k8s_openapi::api::core::v1::ResourceStatus,
            k8s_openapi::api::core::v1::ScopeSelector,
            k8s_openapi::api::core::v1::ScopedResourceSelectorRequirement,
            k8s_openapi::api::core::v1::SecretProjection,
            k8s_openapi::api::core::v1::SecretVolumeSource,
            k8s_openapi::api::core::v1::ServiceAccount,
            k8s_openapi::api::core::v1::ServiceSpec,
            k8s_openapi::api::core::v1::ServiceStatus,
            k8s_openapi::api::core::v1::TopologySelectorLabelRequirement,
            k8s_openapi::api::core::v1::TopologySelectorTerm,
            k8s_openapi::api::core::v1::TopologySpreadConstraint,
            k8s_openapi::api::discovery::v1::Endpoint,
            k8s_openapi::api::discovery::v1::EndpointHints,
            k8s_openapi::api::discovery::v1::EndpointSlice,
            k8s_openapi::api::flowcontrol::v1::FlowSchemaSpec,
            k8s_openapi::api::flowcontrol::v1::FlowSchemaStatus,
            k8s_openapi::api::flowcontrol::v1::NonResourcePolicyRule,
            k8s_openapi::api::flowcontrol::v1::PolicyRulesWithSubjects,
            k8s_openapi::api::flowcontrol::v1::PriorityLevelConfigurationStatus,
            k8s_openapi::api::flowcontrol::v1::ResourcePolicyRule,
            k8s_openapi::api::networking::v1::HTTPIngressRuleValue,
            k8s_openapi::api::networking::v1::IPBlock,
            k8s_openapi::api::networking::v1::IngressLoadBalancerIngress,
            k8s_openapi::api::networking::v1::IngressLoadBalancerStatus,
            k8s_openapi::api::networking::v1::IngressSpec,
            k8s_openapi::api::networking::v1::IngressTLS,
            k8s_openapi::api::networking::v1::NetworkPolicyEgressRule,
            k8s_openapi::api::networking::v1::NetworkPolicyIngressRule,
            k8s_openapi::api::networking::v1::NetworkPolicySpec,
            k8s_openapi::api::networking::v1::ServiceCIDRSpec,
            k8s_openapi::api::networking::v1::ServiceCIDRStatus,
            k8s_openapi::api::node::v1::Scheduling,
            k8s_openapi::api::policy::v1::PodDisruptionBudgetSpec,
            k8s_openapi::api::policy::v1::PodDisruptionBudgetStatus,
            k8s_openapi::api::rbac::v1::AggregationRule,
            k8s_openapi::api::rbac::v1::ClusterRole,
            k8s_openapi::api::rbac::v1::ClusterRoleBinding,
            k8s_openapi::api::rbac::v1::PolicyRule,
            k8s_openapi::api::rbac::v1::Role,
            k8s_openapi::api::rbac::v1::RoleBinding,
            k8s_openapi::api::resource::v1::AllocatedDeviceStatus,
            k8s_openapi::api::resource::v1::CapacityRequestPolicy,
            k8s_openapi::api::resource::v1::Device,
            k8s_openapi::api::resource::v1::DeviceAllocationConfiguration,
            k8s_openapi::api::resource::v1::DeviceAllocationResult,
            k8s_openapi::api::resource::v1::DeviceAttribute,
            k8s_openapi::api::resource::v1::DeviceClaim,
            k8s_openapi::api::resource::v1::DeviceClaimConfiguration,
            k8s_openapi::api::resource::v1::DeviceClassSpec,
            k8s_openapi::api::resource::v1::DeviceConstraint,
            k8s_openapi::api::resource::v1::DeviceRequest,
            k8s_openapi::api::resource::v1::DeviceRequestAllocationResult,
            k8s_openapi::api::resource::v1::DeviceSubRequest,
            k8s_openapi::api::resource::v1::ExactDeviceRequest,
            k8s_openapi::api::resource::v1::NetworkDeviceData,
            k8s_openapi::api::resource::v1::ResourceClaimStatus,
            k8s_openapi::api::resource::v1::ResourceSliceSpec,
            k8s_openapi::api::resource::v1alpha3::DeviceTaintRuleStatus,
            k8s_openapi::api::resource::v1alpha3::ResourcePoolStatusRequestStatus,
            k8s_openapi::api::resource::v1beta1::AllocatedDeviceStatus,
            k8s_openapi::api::resource::v1beta1::BasicDevice,
            k8s_openapi::api::resource::v1beta1::CapacityRequestPolicy,
            k8s_openapi::api::resource::v1beta1::DeviceAllocationConfiguration,
            k8s_openapi::api::resource::v1beta1::DeviceAllocationResult,
            k8s_openapi::api::resource::v1beta1::DeviceAttribute,
            k8s_openapi::api::resource::v1beta1::DeviceClaim,
            k8s_openapi::api::resource::v1beta1::DeviceClaimConfiguration,
            k8s_openapi::api::resource::v1beta1::DeviceClassSpec,
            k8s_openapi::api::resource::v1beta1::DeviceConstraint,
            k8s_openapi::api::resource::v1beta1::DeviceRequest,
            k8s_openapi::api::resource::v1beta1::DeviceRequestAllocationResult,
            k8s_openapi::api::resource::v1beta1::DeviceSubRequest,
            k8s_openapi::api::resource::v1beta1::NetworkDeviceData,
            k8s_openapi::api::resource::v1beta1::ResourceClaimStatus,
            k8s_openapi::api::resource::v1beta1::ResourceSliceSpec,
            k8s_openapi::api::resource::v1beta2::AllocatedDeviceStatus,
            k8s_openapi::api::resource::v1beta2::CapacityRequestPolicy,
            k8s_openapi::api::resource::v1beta2::Device,
            k8s_openapi::api::resource::v1beta2::DeviceAllocationConfiguration,
            k8s_openapi::api::resource::v1beta2::DeviceAllocationResult,
            k8s_openapi::api::resource::v1beta2::DeviceAttribute,
            k8s_openapi::api::resource::v1beta2::DeviceClaim,
            k8s_openapi::api::resource::v1beta2::DeviceClaimConfiguration,
            k8s_openapi::api::resource::v1beta2::DeviceClassSpec,
            k8s_openapi::api::resource::v1beta2::DeviceConstraint,
            k8s_openapi::api::resource::v1beta2::DeviceRequest,
            k8s_openapi::api::resource::v1beta2::DeviceRequestAllocationResult,
            k8s_openapi::api::resource::v1beta2::DeviceSubRequest,
            k8s_openapi::api::resource::v1beta2::DeviceTaintRuleStatus,
            k8s_openapi::api::resource::v1beta2::ExactDeviceRequest,
            k8s_openapi::api::resource::v1beta2::NetworkDeviceData,
            k8s_openapi::api::resource::v1beta2::ResourceClaimStatus,
            k8s_openapi::api::resource::v1beta2::ResourceSliceSpec,
            k8s_openapi::api::storage::v1::CSIDriverSpec,
            k8s_openapi::api::storage::v1::CSINodeDriver,
            k8s_openapi::api::storage::v1::CSINodeSpec,
            k8s_openapi::api::storage::v1::StorageClass,
            k8s_openapi::api::storagemigration::v1beta1::StorageVersionMigrationStatus,
            k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionNames,
            k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionSpec,
            k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionStatus,
            k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionVersion,
            k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::JSONSchemaProps,
            k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::WebhookConversion,
            k8s_openapi::apimachinery::pkg::apis::meta::v1::APIGroup,
            k8s_openapi::apimachinery::pkg::apis::meta::v1::APIGroupList,
            k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResource,
            k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResourceList,
            k8s_openapi::apimachinery::pkg::apis::meta::v1::APIVersions,
            k8s_openapi::apimachinery::pkg::apis::meta::v1::DeleteOptions,
            k8s_openapi::apimachinery::pkg::apis::meta::v1::FieldSelectorRequirement,
            k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector,
            k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement,
            k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
            k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusDetails,
            k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIServiceSpec,
            k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIServiceStatus,
    );
    let mut missing = Vec::new();
    for (definition, property, _) in MARKERS {
        let found = defs
            .get(*definition)
            .and_then(|d| d.get("properties"))
            .and_then(|p| p.get(*property));
        if found.is_none() {
            missing.push(format!("{definition}.{property}"));
        }
    }
    assert!(missing.is_empty(), "not in k8s-openapi: {missing:?}");
}

#[test]
fn merge_keys_come_with_a_merge_strategy_and_map_lists_with_keys() {
    for (definition, property, m) in MARKERS {
        if m.patch_merge_key.is_some() {
            assert!(
                m.patch_strategy.is_some_and(PatchStrategy::merges),
                "{definition}.{property}: a merge key without a merge strategy"
            );
        }
        if let Some(ListType::Map(keys)) = m.list_type {
            assert!(!keys.is_empty(), "{definition}.{property}");
        }
    }
}

#[test]
fn lookups_find_upstream_markers() {
    let containers = markers("io.k8s.api.core.v1.PodSpec", "containers").expect("containers");
    assert_eq!(containers.list_type, Some(ListType::Map(&["name"])));
    assert_eq!(containers.patch_strategy, Some(PatchStrategy::Merge));
    assert_eq!(containers.patch_merge_key, Some("name"));
    let volumes = markers("io.k8s.api.core.v1.PodSpec", "volumes").expect("volumes");
    assert_eq!(volumes.patch_strategy, Some(PatchStrategy::MergeRetainKeys));
    let ports = markers("io.k8s.api.core.v1.Container", "ports").expect("ports");
    assert_eq!(
        ports.list_type.map(ListType::map_keys),
        Some(&["containerPort", "protocol"][..])
    );
    assert_eq!(ports.patch_merge_key, Some("containerPort"));
    let owners = markers(
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "ownerReferences",
    )
    .expect("ownerReferences");
    assert_eq!(owners.patch_merge_key, Some("uid"));
    let finalizers = markers(
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "finalizers",
    )
    .expect("set");
    assert_eq!(finalizers.list_type, Some(ListType::Set));
    assert_eq!(finalizers.patch_strategy, Some(PatchStrategy::Merge));
    let strategy = markers("io.k8s.api.apps.v1.DeploymentSpec", "strategy").expect("strategy");
    assert_eq!(strategy.patch_strategy, Some(PatchStrategy::RetainKeys));
    assert_eq!(markers("io.k8s.api.core.v1.PodSpec", "nodeName"), None);
    assert_eq!(markers("io.k8s.api.core.v1.NoSuchSpec", "containers"), None);
}

#[test]
fn markers_of_lists_one_definition() {
    let props: Vec<&str> = markers_of("io.k8s.api.core.v1.Container")
        .map(|(p, _)| p)
        .collect();
    assert!(
        props.contains(&"env") && props.contains(&"volumeMounts"),
        "{props:?}"
    );
    assert!(props.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(markers_of("io.k8s.api.core.v1.ConfigMap").count(), 0);
}

#[test]
fn marker_values_are_upstream_spelling() {
    let spelled: Vec<&str> = [
        PatchStrategy::Merge,
        PatchStrategy::MergeRetainKeys,
        PatchStrategy::RetainKeys,
        PatchStrategy::Replace,
    ]
    .iter()
    .map(|s| s.as_str())
    .collect();
    assert_eq!(
        spelled,
        ["merge", "merge,retainKeys", "retainKeys", "replace"]
    );
}
