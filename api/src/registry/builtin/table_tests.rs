//! Invariants of the built-in table and of its enablement by `--runtime-config`.

use std::collections::HashSet;

use super::*;
use crate::registry::Registry;
use crate::registry::RuntimeConfig;

/// Upstream's default-on resources that Apiary serves now, as `<group>/<version>/<plural>`
/// (core: `v1/<plural>`), transcribed from Kubernetes 1.37 discovery, minus the computed ones
/// (the reviews, componentstatuses, bindings).
const SERVED_BY_DEFAULT: &[&str] = &[
    "v1/bindings",
    "v1/componentstatuses",
    "v1/configmaps",
    "v1/endpoints",
    "v1/events",
    "v1/limitranges",
    "v1/namespaces",
    "v1/nodes",
    "v1/persistentvolumeclaims",
    "v1/persistentvolumes",
    "v1/pods",
    "v1/podtemplates",
    "v1/replicationcontrollers",
    "v1/resourcequotas",
    "v1/secrets",
    "v1/serviceaccounts",
    "v1/services",
    "apiregistration.k8s.io/v1/apiservices",
    "apps/v1/controllerrevisions",
    "apps/v1/daemonsets",
    "apps/v1/deployments",
    "apps/v1/replicasets",
    "apps/v1/statefulsets",
    "events.k8s.io/v1/events",
    "authentication.k8s.io/v1/selfsubjectreviews",
    "authentication.k8s.io/v1/tokenreviews",
    "authorization.k8s.io/v1/localsubjectaccessreviews",
    "authorization.k8s.io/v1/selfsubjectaccessreviews",
    "authorization.k8s.io/v1/selfsubjectrulesreviews",
    "authorization.k8s.io/v1/subjectaccessreviews",
    "autoscaling/v2/horizontalpodautoscalers",
    "autoscaling/v1/horizontalpodautoscalers",
    "batch/v1/cronjobs",
    "batch/v1/jobs",
    "certificates.k8s.io/v1/certificatesigningrequests",
    "certificates.k8s.io/v1/clustertrustbundles",
    "certificates.k8s.io/v1/podcertificaterequests",
    "networking.k8s.io/v1/ingressclasses",
    "networking.k8s.io/v1/ingresses",
    "networking.k8s.io/v1/ipaddresses",
    "networking.k8s.io/v1/networkpolicies",
    "networking.k8s.io/v1/servicecidrs",
    "policy/v1/poddisruptionbudgets",
    "rbac.authorization.k8s.io/v1/clusterrolebindings",
    "rbac.authorization.k8s.io/v1/clusterroles",
    "rbac.authorization.k8s.io/v1/rolebindings",
    "rbac.authorization.k8s.io/v1/roles",
    "storage.k8s.io/v1/csidrivers",
    "storage.k8s.io/v1/csinodes",
    "storage.k8s.io/v1/csistoragecapacities",
    "storage.k8s.io/v1/storageclasses",
    "storage.k8s.io/v1/volumeattachments",
    "storage.k8s.io/v1/volumeattributesclasses",
    "admissionregistration.k8s.io/v1/mutatingadmissionpolicies",
    "admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings",
    "admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
    "admissionregistration.k8s.io/v1/validatingadmissionpolicies",
    "admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
    "admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
    "apiextensions.k8s.io/v1/customresourcedefinitions",
    "scheduling.k8s.io/v1/priorityclasses",
    "coordination.k8s.io/v1/leases",
    "node.k8s.io/v1/runtimeclasses",
    "discovery.k8s.io/v1/endpointslices",
    "flowcontrol.apiserver.k8s.io/v1/flowschemas",
    "flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
    "resource.k8s.io/v1/deviceclasses",
    "resource.k8s.io/v1/devicetaintrules",
    "resource.k8s.io/v1/resourceclaims",
    "resource.k8s.io/v1/resourceclaimtemplates",
    "resource.k8s.io/v1/resourceslices",
    "storagemigration.k8s.io/v1/storageversionmigrations",
];

fn gvr(t: &crate::registry::ResourceType) -> String {
    format!("{}/{}", t.api_version(), t.plural)
}

fn served(registry: &Registry) -> Vec<String> {
    registry.stores().map(|s| gvr(s.resource())).collect()
}

fn config(values: &[&str]) -> RuntimeConfig {
    RuntimeConfig::parse(values.iter().copied(), Flavor::Kubernetes).expect("valid")
}

// R-VER-059, R-VER-060, R-VER-061, R-VER-066
#[test]
fn the_default_on_set_is_upstreams() {
    let registry = Registry::builtin(Flavor::Kubernetes);
    assert_eq!(served(&registry), SERVED_BY_DEFAULT);
    for t in registry.unserved() {
        assert!(
            registry.lookup(&t.group, &t.version, &t.plural).is_none(),
            "{} is not served",
            gvr(t)
        );
    }
    let off: Vec<String> = registry.unserved().map(gvr).collect();
    for expected in [
        "coordination.k8s.io/v1beta1/leasecandidates",
        "internal.apiserver.k8s.io/v1alpha1/storageversions",
    ] {
        assert!(off.contains(&expected.to_owned()), "{expected} registered");
    }
}

#[test]
fn group_version_resources_are_unique_and_stages_match_defaults() {
    let mut seen = HashSet::new();
    for row in rows() {
        let t = row.resource_type(Flavor::Kubernetes);
        assert!(seen.insert(gvr(&t)), "{} twice", gvr(&t));
        if row.stage() != Stage::Ga {
            assert!(!row.default_on, "{} is not GA but on", gvr(&t));
        }
        if let StorageHome::Shared(shared) = row.storage {
            let home = rows().into_iter().find(|h| shared.is(h));
            assert!(
                home.is_some_and(|h| matches!(h.storage, StorageHome::Own)),
                "{} shares a row that owns its storage",
                gvr(&t)
            );
        }
    }
}

#[test]
fn short_names_are_unique_among_served_rows() {
    for flavor in [Flavor::Platform, Flavor::Kubernetes] {
        let all = config(&["api/all=true"]);
        for registry in [Registry::builtin(flavor), Registry::new(flavor, &all)] {
            // Versions of one stored resource share their short names, as upstream's (`ev`
            // for core and events.k8s.io events, `hpa` for both autoscaling versions).
            let mut seen = std::collections::HashMap::new();
            for s in registry.stores() {
                let home = s.resource().key_prefix();
                for short in &s.resource().short_names {
                    let first = seen.entry(short.clone()).or_insert_with(|| home.clone());
                    assert_eq!(*first, home, "short name {short} on two resources");
                }
            }
        }
    }
}

// Both flavors serve the same rows; only the domain of the groups differs (DESIGN.md §5).
#[test]
fn flavors_differ_only_in_the_group_domain() {
    let platform = Registry::builtin(Flavor::Platform);
    let kubernetes = Registry::builtin(Flavor::Kubernetes);
    let renamed: Vec<String> = served(&platform)
        .iter()
        .map(|g| g.replace(".platform.io/", ".k8s.io/"))
        .collect();
    assert_eq!(renamed, served(&kubernetes));
    assert!(
        platform
            .lookup("rbac.authorization.platform.io", "v1", "roles")
            .is_some()
    );
    assert!(platform.lookup("apps", "v1", "deployments").is_some());
}

// R-VER-063, R-VER-064, R-VER-065, R-VER-066
#[test]
fn runtime_config_most_specific_key_wins() {
    let on = |rc: &RuntimeConfig, key: &str| {
        served(&Registry::new(Flavor::Kubernetes, rc)).contains(&key.to_owned())
    };
    let lc = "coordination.k8s.io/v1beta1/leasecandidates";
    let sv = "internal.apiserver.k8s.io/v1alpha1/storageversions";
    let deploy = "apps/v1/deployments";
    assert!(!on(&RuntimeConfig::default(), lc));
    assert!(on(&config(&["coordination.k8s.io/v1beta1"]), lc));
    assert!(on(&config(&["coordination.k8s.io/v1beta1=true"]), lc));
    assert!(on(&config(&["api/beta=true"]), lc));
    assert!(!on(&config(&["api/beta=true"]), sv));
    assert!(on(&config(&["api/alpha=true"]), sv));
    assert!(on(&config(&["api/all=true"]), sv));
    // Resource beats group/version beats stage beats all.
    let rc = config(&["api/all=false,apps/v1=true", "apps/v1/deployments=false"]);
    assert!(!on(&rc, deploy));
    assert!(on(&rc, "apps/v1/statefulsets"));
    assert!(!on(&rc, "v1/pods"));
    let rc = config(&["api/ga=false", "api/all=true"]);
    assert!(!on(&rc, deploy), "the stage is more specific than all");
    // Core spelled both ways; the last of two equal keys wins.
    assert!(!on(&config(&["api/v1=false"]), "v1/pods"));
    assert!(!on(&config(&["v1=true", "v1=false"]), "v1/pods"));
    assert!(on(&config(&["api/v1=false", "api/v1/pods"]), "v1/pods"));
    // Rows that share another's storage through a conversion are switched like any other.
    let ev = "events.k8s.io/v1/events";
    assert!(on(&RuntimeConfig::default(), ev));
    assert!(!on(&config(&["events.k8s.io/v1=false"]), ev));
}

// R-VER-063: an unknown key or value stops start-up, naming it (as upstream).
#[test]
fn runtime_config_refuses_unknown_keys_and_values() {
    let err = |values: &[&str], flavor| {
        RuntimeConfig::parse(values.iter().copied(), flavor)
            .expect_err("refused")
            .to_string()
    };
    assert!(err(&["apps/v2"], Flavor::Kubernetes).contains("\"apps/v2\""));
    assert!(err(&["foo.example.com/v1=false"], Flavor::Kubernetes).contains("foo.example.com/v1"));
    assert!(err(&["apps/v1/widgets"], Flavor::Kubernetes).contains("unknown api resource"));
    assert!(err(&["apps/v1=maybe"], Flavor::Kubernetes).contains("\"maybe\""));
    assert!(err(&["a/b/c/d"], Flavor::Kubernetes).contains("a/b/c/d"));
    // Groups are spelled in the flavor's domain.
    assert!(err(&["rbac.authorization.k8s.io/v1"], Flavor::Platform).contains("k8s.io"));
    assert!(
        RuntimeConfig::parse(
            ["rbac.authorization.platform.io/v1=false"],
            Flavor::Platform
        )
        .is_ok()
    );
}
