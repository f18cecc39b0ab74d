//! What the built-in types declare about their lifecycle, as Kubernetes' API types declare it
//! (`+k8s:prerelease-lifecycle-gen` tags in `k8s.io/api`, and the hand-written lifecycle of
//! core `v1`): the release each prerelease kind was introduced in, and the explicit
//! deprecation release and replacement where a type overrides the policy. Everything else
//! (the default deprecation and removal releases) is derived in [`super::Declared::lifecycle`].
//!
//! Kinds not listed declare nothing and are never deprecated: every GA kind but the two core
//! ones below, and the versions Kubernetes does not tag (`internal.apiserver/v1alpha1`,
//! `scheduling/v1alpha3`).

use k8s_openapi::api::admissionregistration::v1 as admissionregistration_v1;
use k8s_openapi::api::admissionregistration::v1alpha1 as admissionregistration_v1alpha1;
use k8s_openapi::api::admissionregistration::v1beta1 as admissionregistration_v1beta1;
use k8s_openapi::api::certificates::v1 as certificates_v1;
use k8s_openapi::api::certificates::v1beta1 as certificates_v1beta1;
use k8s_openapi::api::coordination::v1alpha2 as coordination_v1alpha2;
use k8s_openapi::api::coordination::v1beta1 as coordination_v1beta1;
use k8s_openapi::api::core::v1 as core_v1;
use k8s_openapi::api::discovery::v1 as discovery_v1;
use k8s_openapi::api::lifecycle::v1alpha1 as lifecycle_v1alpha1;
use k8s_openapi::api::resource::v1alpha3 as resource_v1alpha3;
use k8s_openapi::api::resource::v1beta1 as resource_v1beta1;
use k8s_openapi::api::resource::v1beta2 as resource_v1beta2;
use k8s_openapi::api::scheduling::v1beta1 as scheduling_v1beta1;
use k8s_openapi::api::storagemigration::v1 as storagemigration_v1;
use k8s_openapi::api::storagemigration::v1beta1 as storagemigration_v1beta1;

use super::Declared;
use super::Release;
use super::declared;

const fn release(minor: u32) -> Release {
    Release::new(1, minor)
}

/// Every declared lifecycle, by group in the built-in table's order.
pub(super) fn declared_lifecycles() -> Vec<Declared> {
    let mut all = core();
    all.extend(named_groups());
    all
}

/// Core `v1` is GA, so only its explicit deprecations count (`core/v1/lifecycle.go`).
fn core() -> Vec<Declared> {
    vec![
        declared::<core_v1::ComponentStatus>(release(0)).deprecated(release(19)),
        declared::<core_v1::Endpoints>(release(0))
            .deprecated(release(33))
            .replaced_by::<discovery_v1::EndpointSlice>(),
    ]
}

fn named_groups() -> Vec<Declared> {
    use admissionregistration_v1alpha1 as ar_alpha;
    use admissionregistration_v1beta1 as ar_beta;
    vec![
        declared::<certificates_v1beta1::ClusterTrustBundle>(release(33))
            .deprecated(release(37))
            .replaced_by::<certificates_v1::ClusterTrustBundle>(),
        declared::<certificates_v1beta1::PodCertificateRequest>(release(35))
            .deprecated(release(37))
            .replaced_by::<certificates_v1::PodCertificateRequest>(),
        declared::<ar_beta::MutatingAdmissionPolicy>(release(34))
            .replaced_by::<admissionregistration_v1::MutatingAdmissionPolicy>(),
        declared::<ar_beta::MutatingAdmissionPolicyBinding>(release(34))
            .replaced_by::<admissionregistration_v1::MutatingAdmissionPolicyBinding>(),
        declared::<ar_alpha::MutatingAdmissionPolicy>(release(32)),
        declared::<ar_alpha::MutatingAdmissionPolicyBinding>(release(32)),
        declared::<scheduling_v1beta1::PodGroup>(release(37)),
        declared::<scheduling_v1beta1::Workload>(release(37)),
        declared::<coordination_v1beta1::LeaseCandidate>(release(33)),
        declared::<coordination_v1alpha2::LeaseCandidate>(release(32)),
        declared::<resource_v1beta2::DeviceClass>(release(33)),
        declared::<resource_v1beta2::DeviceTaintRule>(release(36)),
        declared::<resource_v1beta2::ResourceClaim>(release(33)),
        declared::<resource_v1beta2::ResourceClaimTemplate>(release(33)),
        declared::<resource_v1beta2::ResourceSlice>(release(33)),
        declared::<resource_v1beta1::DeviceClass>(release(32)),
        declared::<resource_v1beta1::ResourceClaim>(release(32)),
        declared::<resource_v1beta1::ResourceClaimTemplate>(release(32)),
        declared::<resource_v1beta1::ResourceSlice>(release(32)),
        declared::<resource_v1alpha3::DeviceTaintRule>(release(33)),
        declared::<resource_v1alpha3::ResourcePoolStatusRequest>(release(36)),
        declared::<storagemigration_v1beta1::StorageVersionMigration>(release(35))
            .deprecated(release(37))
            .replaced_by::<storagemigration_v1::StorageVersionMigration>(),
        declared::<lifecycle_v1alpha1::EvictionRequest>(release(37)),
        declared::<lifecycle_v1alpha1::Eviction>(release(37)),
    ]
}
