//! The deprecation table against Kubernetes' declared lifecycles, and the annotations.

use super::*;
use crate::registry::builtin::Row;
use crate::registry::builtin::rows;

/// The versions whose types Kubernetes does not tag with a lifecycle (no
/// `+k8s:prerelease-lifecycle-gen` in their package): never deprecated.
const UNDECLARED_VERSIONS: [(&str, &str); 2] = [
    ("internal.apiserver.k8s.io", "v1alpha1"),
    ("scheduling.k8s.io", "v1alpha3"),
];

fn table() -> DeprecationTable {
    DeprecationTable::new(Flavor::Kubernetes)
}

fn row_name(row: &Row) -> (String, String, String) {
    (
        row.group.name(Flavor::Kubernetes),
        row.version.to_owned(),
        row.kind.to_owned(),
    )
}

#[test]
fn releases_print_as_kubernetes_prints_them() {
    assert_eq!(Release::CURRENT, Release::new(1, 37));
    assert_eq!(Release::new(1, 40).to_string(), "1.40");
    assert!(Release::new(1, 9) < Release::new(1, 10));
}

// A beta beside its GA, deprecated by its type's override in 1.37: the policy's removal three
// releases later, and the GA kind as replacement, in kube-apiserver's wording.
#[test]
fn a_beta_beside_its_ga_is_deprecated_with_its_replacement() {
    let table = table();
    let ctb = table
        .lookup("certificates.k8s.io", "v1beta1", "ClusterTrustBundle")
        .expect("deprecated");
    assert_eq!(ctb.deprecated_in, Release::new(1, 37));
    assert_eq!(ctb.removed_in, Some(Release::new(1, 40)));
    assert_eq!(
        ctb.replacement.as_deref(),
        Some("certificates.k8s.io/v1 ClusterTrustBundle")
    );
    assert_eq!(
        ctb.warning,
        "certificates.k8s.io/v1beta1 ClusterTrustBundle is deprecated in v1.37+, \
         unavailable in v1.40+; use certificates.k8s.io/v1 ClusterTrustBundle"
    );
    // The policy's default: introduced in 1.34, deprecated three releases later.
    let map = table
        .lookup(
            "admissionregistration.k8s.io",
            "v1beta1",
            "MutatingAdmissionPolicy",
        )
        .expect("deprecated");
    assert_eq!(
        (map.deprecated_in, map.removed_in),
        (Release::new(1, 37), Some(Release::new(1, 40)))
    );
    // The platform flavor spells both groups with its domain.
    let platform = DeprecationTable::new(Flavor::Platform);
    let svm = platform
        .lookup(
            "storagemigration.platform.io",
            "v1beta1",
            "StorageVersionMigration",
        )
        .expect("deprecated");
    assert_eq!(
        svm.warning,
        "storagemigration.platform.io/v1beta1 StorageVersionMigration is deprecated in v1.37+, \
         unavailable in v1.40+; use storagemigration.platform.io/v1 StorageVersionMigration"
    );
    assert!(
        platform
            .lookup(
                "storagemigration.k8s.io",
                "v1beta1",
                "StorageVersionMigration"
            )
            .is_none()
    );
}

#[test]
fn ga_versions_are_not_deprecated_unless_their_type_says_so() {
    let table = table();
    for (group, version, kind) in [
        ("certificates.k8s.io", "v1", "ClusterTrustBundle"),
        ("storagemigration.k8s.io", "v1", "StorageVersionMigration"),
        ("apps", "v1", "Deployment"),
        ("", "v1", "ConfigMap"),
        ("", "v1", "Binding"),
        ("discovery.k8s.io", "v1", "EndpointSlice"),
    ] {
        assert!(table.lookup(group, version, kind).is_none(), "{kind}");
    }
    // Core `v1` declares two deprecations of its own, without removal (core is spelled `v1`).
    let cs = table
        .lookup("", "v1", "ComponentStatus")
        .expect("deprecated");
    assert_eq!(cs.warning, "v1 ComponentStatus is deprecated in v1.19+");
    assert_eq!((cs.removed_in, cs.replacement.as_deref()), (None, None));
    let ep = table.lookup("", "v1", "Endpoints").expect("deprecated");
    assert_eq!(
        ep.warning,
        "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
    );
}

// An alpha follows the same policy as a beta: deprecated three releases after its
// introduction, removed three after that, with no replacement unless its type names one.
#[test]
fn an_alpha_is_deprecated_three_releases_after_its_introduction() {
    let table = table();
    let alpha = table
        .lookup(
            "admissionregistration.k8s.io",
            "v1alpha1",
            "MutatingAdmissionPolicy",
        )
        .expect("deprecated");
    assert_eq!(
        alpha.warning,
        "admissionregistration.k8s.io/v1alpha1 MutatingAdmissionPolicy is deprecated in v1.35+, \
         unavailable in v1.38+"
    );
    // Introduced in 1.37 (deprecated in 1.40) or 1.36 (1.39): not yet.
    for (group, version, kind) in [
        ("lifecycle.k8s.io", "v1alpha1", "EvictionRequest"),
        ("resource.k8s.io", "v1alpha3", "ResourcePoolStatusRequest"),
        ("resource.k8s.io", "v1beta2", "DeviceTaintRule"),
        ("scheduling.k8s.io", "v1beta1", "PodGroup"),
        // Versions without a declared lifecycle.
        ("scheduling.k8s.io", "v1alpha3", "PodGroup"),
        ("internal.apiserver.k8s.io", "v1alpha1", "StorageVersion"),
    ] {
        assert!(table.lookup(group, version, kind).is_none(), "{kind}");
    }
}

#[test]
fn the_table_is_judged_against_the_release() {
    let earlier = DeprecationTable::at(Flavor::Kubernetes, Release::new(1, 36));
    assert!(
        earlier
            .lookup("certificates.k8s.io", "v1beta1", "ClusterTrustBundle")
            .is_none()
    );
    assert!(
        earlier
            .lookup("coordination.k8s.io", "v1beta1", "LeaseCandidate")
            .is_some()
    );
    let later = DeprecationTable::at(Flavor::Kubernetes, Release::new(1, 40));
    let pod_group = later
        .lookup("scheduling.k8s.io", "v1beta1", "PodGroup")
        .expect("deprecated in 1.40");
    assert_eq!(
        pod_group.warning,
        "scheduling.k8s.io/v1beta1 PodGroup is deprecated in v1.40+, unavailable in v1.43+"
    );
}

// Exactly the kinds kube-apiserver 1.37 flags, no more.
#[test]
fn exactly_the_kinds_kubernetes_flags_in_1_37_are_deprecated() {
    let table = table();
    let mut flagged: Vec<String> = rows()
        .iter()
        .map(row_name)
        .filter(|(g, v, k)| table.lookup(g, v, k).is_some())
        .map(|(g, v, k)| format!("{g}/{v}/{k}"))
        .collect();
    flagged.sort();
    let expected = [
        "/v1/ComponentStatus",
        "/v1/Endpoints",
        "admissionregistration.k8s.io/v1alpha1/MutatingAdmissionPolicy",
        "admissionregistration.k8s.io/v1alpha1/MutatingAdmissionPolicyBinding",
        "admissionregistration.k8s.io/v1beta1/MutatingAdmissionPolicy",
        "admissionregistration.k8s.io/v1beta1/MutatingAdmissionPolicyBinding",
        "certificates.k8s.io/v1beta1/ClusterTrustBundle",
        "certificates.k8s.io/v1beta1/PodCertificateRequest",
        "coordination.k8s.io/v1alpha2/LeaseCandidate",
        "coordination.k8s.io/v1beta1/LeaseCandidate",
        "resource.k8s.io/v1alpha3/DeviceTaintRule",
        "resource.k8s.io/v1beta1/DeviceClass",
        "resource.k8s.io/v1beta1/ResourceClaim",
        "resource.k8s.io/v1beta1/ResourceClaimTemplate",
        "resource.k8s.io/v1beta1/ResourceSlice",
        "resource.k8s.io/v1beta2/DeviceClass",
        "resource.k8s.io/v1beta2/ResourceClaim",
        "resource.k8s.io/v1beta2/ResourceClaimTemplate",
        "resource.k8s.io/v1beta2/ResourceSlice",
        "storagemigration.k8s.io/v1beta1/StorageVersionMigration",
    ];
    assert_eq!(flagged, expected);
}

// Every prerelease row has a declared lifecycle (or its version declares none), every
// declaration is a row, and no served row is past its removal release.
#[test]
fn declarations_and_the_built_in_table_agree() {
    let declared = lifecycle::declared_lifecycles();
    let names: Vec<(String, String, String)> = rows().iter().map(row_name).collect();
    for d in &declared {
        let name = (
            d.name.group.name(Flavor::Kubernetes),
            d.name.version.to_owned(),
            d.name.kind.to_owned(),
        );
        assert!(names.contains(&name), "{name:?} is not a built-in row");
        if let (_, Some(removed)) = d.lifecycle() {
            assert!(removed > Release::CURRENT, "{name:?} removed in {removed}");
        }
    }
    for row in rows().iter().filter(|r| r.stage() != Stage::Ga) {
        let (group, version, kind) = row_name(row);
        let undeclared = UNDECLARED_VERSIONS.contains(&(group.as_str(), version.as_str()));
        let is_declared = declared.iter().any(|d| {
            d.name.group.name(Flavor::Kubernetes) == group
                && d.name.version == version
                && d.name.kind == kind
        });
        assert!(undeclared ^ is_declared, "{group}/{version} {kind}");
    }
}

// A subresource answering the parent's kind (`status`) is judged by that kind; one answering
// a kind of its own (`scale`: `autoscaling/v1` Scale) by its own.
#[test]
fn requests_resolve_to_the_kind_their_route_serves() {
    use k8s_openapi::api::storagemigration::v1beta1::StorageVersionMigration;
    let rt = crate::registry::builtin::kind::<StorageVersionMigration>()
        .status()
        .resource_type(Flavor::Platform);
    let table = DeprecationTable::new(Flavor::Platform);
    let (deprecation, api) = table.resolve(&rt, "status").expect("deprecated");
    assert!(
        deprecation
            .warning
            .contains("v1beta1 StorageVersionMigration")
    );
    assert_eq!(
        api,
        DeprecatedApi {
            group: "storagemigration.platform.io".into(),
            version: "v1beta1".into(),
            resource: "storageversionmigrations".into(),
            subresource: "status".into(),
            removed_release: Some(Release::new(1, 40)),
        }
    );
    assert_eq!(api.removed_release_label(), "1.40");
    assert!(table.resolve(&rt, "").is_some());
    assert!(table.resolve(&rt, "scale").is_none());
}

// The deprecated annotation is `true`, under the flavor's domain (the audit log sets them).
#[test]
fn audit_annotations_name_the_removal_release_when_there_is_one() {
    let api = DeprecatedApi {
        group: "coordination.platform.io".into(),
        version: "v1beta1".into(),
        resource: "leasecandidates".into(),
        subresource: String::new(),
        removed_release: Some(Release::new(1, 39)),
    };
    assert_eq!(
        api.audit_annotations(Flavor::Platform),
        [
            ("platform.io/deprecated".to_owned(), "true".to_owned()),
            ("platform.io/removed-release".to_owned(), "1.39".to_owned()),
        ]
    );
    let ga = DeprecatedApi {
        group: String::new(),
        version: "v1".into(),
        resource: "endpoints".into(),
        subresource: String::new(),
        removed_release: None,
    };
    assert_eq!(
        ga.audit_annotations(Flavor::Kubernetes),
        [("k8s.io/deprecated".to_owned(), "true".to_owned())]
    );
    assert_eq!(ga.removed_release_label(), "");
}
