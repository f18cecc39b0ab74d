//! The conformance walk: every served built-in resource, in both flavors, goes through
//! discovery, create, get, list, update and delete with a minimal valid object, and an update
//! of a resource with a `status` subresource leaves its status alone. A served row without a
//! stub fails the walk, so a new table row cannot go unexercised.

use serde_json::Value;
use serde_json::json;

use super::*;
use apiary_api::registry::Registry;
use apiary_api::registry::ResourceType;
use apiary_api::registry::Store;

/// The part of a minimal valid object beyond apiVersion, kind and metadata, per served
/// resource (`<group in the kubernetes flavor>/<version>/<plural>`; core: `v1/<plural>`).
pub(super) fn stub(gvr: &str) -> Option<Value> {
    let template = json!({
        "metadata": {"labels": {"app": "walk"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}
    });
    let selector = json!({"matchLabels": {"app": "walk"}});
    // Jobs may not restart their pods `Always` (the pod default).
    let mut job_template = template.clone();
    job_template["spec"]["restartPolicy"] = "Never".into();
    // The RBAC group is the flavor's, which the server defaults `roleRef.apiGroup` to.
    let role_ref = json!({"kind": "ClusterRole", "name": "r"});
    Some(match gvr {
        "v1/configmaps" => json!({"data": {"k": "v"}}),
        "v1/endpoints" => json!({}),
        "v1/events" => json!({
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
            "reason": "Walk"
        }),
        "v1/limitranges" => json!({"spec": {"limits": [{"type": "Container"}]}}),
        "v1/namespaces" => json!({}),
        "v1/nodes" => json!({"spec": {"unschedulable": true}}),
        "v1/persistentvolumeclaims" => json!({"spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}
        }}),
        "v1/persistentvolumes" => json!({"spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/tmp"}
        }}),
        "v1/pods" => json!({"spec": template["spec"]}),
        "v1/podtemplates" => json!({"template": template}),
        "v1/replicationcontrollers" => {
            json!({"spec": {"selector": {"app": "walk"}, "template": template}})
        }
        "v1/resourcequotas" => json!({"spec": {"hard": {"pods": "10"}}}),
        "v1/secrets" => json!({"stringData": {"k": "v"}}),
        "v1/serviceaccounts" => json!({}),
        "v1/services" => json!({"spec": {"ports": [{"port": 80}]}}),
        "apiregistration.k8s.io/v1/apiservices" => json!({"spec": {
            "group": "walk.example.com", "version": "v1",
            "groupPriorityMinimum": 100, "versionPriority": 10
        }}),
        "apps/v1/controllerrevisions" => json!({"revision": 1, "data": {"any": "thing"}}),
        "apps/v1/daemonsets" | "apps/v1/deployments" | "apps/v1/replicasets" => {
            json!({"spec": {"selector": selector, "template": template}})
        }
        "apps/v1/statefulsets" => json!({"spec": {
            "selector": selector, "template": template, "serviceName": "walk"
        }}),
        "events.k8s.io/v1/events" => json!({
            "eventTime": "2026-01-01T00:00:00.000000Z",
            "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
            "reason": "Walk", "action": "Walk", "type": "Normal",
            "reportingController": "example.com/walk", "reportingInstance": "walk-1"
        }),
        "autoscaling/v1/horizontalpodautoscalers" => json!({"spec": {
            "maxReplicas": 3, "targetCPUUtilizationPercentage": 50,
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}
        }}),
        "autoscaling/v2/horizontalpodautoscalers" => json!({"spec": {
            "maxReplicas": 3,
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}
        }}),
        "batch/v1/cronjobs" => json!({"spec": {
            "schedule": "*/5 * * * *",
            "jobTemplate": {"spec": {"template": job_template}}
        }}),
        "batch/v1/jobs" => json!({"spec": {"template": job_template}}),
        "certificates.k8s.io/v1/certificatesigningrequests" => json!({"spec": {
            "request": "aGVsbG8=", "signerName": "example.com/walk", "usages": ["digital signature"]
        }}),
        "certificates.k8s.io/v1/clustertrustbundles" => {
            let key = rcgen::KeyPair::generate().expect("key");
            let mut ca = rcgen::CertificateParams::new(vec!["walk".to_owned()]).expect("ca");
            ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
            json!({"spec": {"trustBundle": ca.self_signed(&key).expect("signed").pem()}})
        }
        "certificates.k8s.io/v1/podcertificaterequests" => json!({"spec": {
            "nodeName": "n", "nodeUID": "u1", "podName": "p", "podUID": "u2",
            "serviceAccountName": "sa", "serviceAccountUID": "u3",
            "signerName": "example.com/walk", "stubPKCS10Request": "aGVsbG8="
        }}),
        "networking.k8s.io/v1/ingressclasses" => {
            json!({"spec": {"controller": "example.com/walk"}})
        }
        "networking.k8s.io/v1/ingresses" => json!({"spec": {
            "defaultBackend": {"service": {"name": "s", "port": {"number": 80}}}
        }}),
        "networking.k8s.io/v1/ipaddresses" => json!({"spec": {
            "parentRef": {"resource": "services", "namespace": "default", "name": "s"}
        }}),
        "networking.k8s.io/v1/networkpolicies" => json!({"spec": {"podSelector": {}}}),
        "networking.k8s.io/v1/servicecidrs" => json!({"spec": {"cidrs": ["10.96.0.0/12"]}}),
        "policy/v1/poddisruptionbudgets" => {
            json!({"spec": {"minAvailable": 1, "selector": selector}})
        }
        "rbac.authorization.k8s.io/v1/clusterrolebindings"
        | "rbac.authorization.k8s.io/v1/rolebindings" => json!({"roleRef": role_ref}),
        "rbac.authorization.k8s.io/v1/clusterroles" | "rbac.authorization.k8s.io/v1/roles" => {
            json!({"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]})
        }
        "storage.k8s.io/v1/csidrivers" => json!({"spec": {"attachRequired": true}}),
        "storage.k8s.io/v1/csinodes" => json!({"spec": {"drivers": []}}),
        "storage.k8s.io/v1/csistoragecapacities" => json!({"storageClassName": "sc"}),
        "storage.k8s.io/v1/storageclasses" => json!({"provisioner": "example.com/walk"}),
        "storage.k8s.io/v1/volumeattachments" => json!({"spec": {
            "attacher": "example.com/walk", "nodeName": "n",
            "source": {"persistentVolumeName": "pv"}
        }}),
        "storage.k8s.io/v1/volumeattributesclasses" => json!({"driverName": "example.com/walk"}),
        "admissionregistration.k8s.io/v1/mutatingadmissionpolicies" => json!({"spec": {
            "matchConstraints": {"resourceRules": [{
                "apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE"], "resources": ["pods"]
            }]},
            "mutations": [{"patchType": "ApplyConfiguration",
                "applyConfiguration": {"expression": "Object{}"}}],
            "reinvocationPolicy": "Never"
        }}),
        "admissionregistration.k8s.io/v1/validatingadmissionpolicies" => json!({"spec": {
            "matchConstraints": {"resourceRules": [{
                "apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE"], "resources": ["pods"]
            }]},
            "validations": [{"expression": "true"}]
        }}),
        "admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings" => {
            json!({"spec": {"policyName": "p"}})
        }
        "admissionregistration.k8s.io/v1/validatingadmissionpolicybindings" => {
            json!({"spec": {"policyName": "p", "validationActions": ["Deny"]}})
        }
        "admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
        | "admissionregistration.k8s.io/v1/validatingwebhookconfigurations" => json!({}),
        "apiextensions.k8s.io/v1/customresourcedefinitions" => json!({"spec": {
            "group": "walk.example.com",
            "names": {"kind": "Walk", "plural": "walks"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {
                "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
            }}]
        }}),
        "scheduling.k8s.io/v1/priorityclasses" => json!({"value": 1000}),
        "coordination.k8s.io/v1/leases" => json!({"spec": {"holderIdentity": "walk"}}),
        "node.k8s.io/v1/runtimeclasses" => json!({"handler": "runc"}),
        "discovery.k8s.io/v1/endpointslices" => {
            json!({"addressType": "IPv4", "endpoints": [{"addresses": ["10.0.0.1"]}]})
        }
        "flowcontrol.apiserver.k8s.io/v1/flowschemas" => {
            json!({"spec": {"priorityLevelConfiguration": {"name": "global-default"}}})
        }
        "flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations" => {
            json!({"spec": {"type": "Exempt"}})
        }
        "resource.k8s.io/v1/deviceclasses" => json!({"spec": {}}),
        "resource.k8s.io/v1/devicetaintrules" => {
            json!({"spec": {"taint": {"key": "k", "effect": "NoSchedule"}}})
        }
        "resource.k8s.io/v1/resourceclaims" => json!({"spec": {}}),
        "resource.k8s.io/v1/resourceclaimtemplates" => json!({"spec": {"spec": {}}}),
        "resource.k8s.io/v1/resourceslices" => json!({"spec": {
            "driver": "example.com",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "allNodes": true
        }}),
        "storagemigration.k8s.io/v1/storageversionmigrations" => {
            json!({"spec": {"resource": {"group": "apps", "resource": "deployments"}}})
        }
        _ => return None,
    })
}

/// A status to send in an update of the main resource (the update must ignore it).
pub(super) fn status_stub(gvr: &str) -> Value {
    match gvr {
        "policy/v1/poddisruptionbudgets" => json!({
            "currentHealthy": 1, "desiredHealthy": 1, "disruptionsAllowed": 1, "expectedPods": 1
        }),
        // A CRD's status keeps its storage version among the stored ones.
        "apiextensions.k8s.io/v1/customresourcedefinitions" => json!({
            "conditions": status_stub("")["conditions"],
            "acceptedNames": {"kind": "Walk", "plural": "walks"},
            "storedVersions": ["v1"]
        }),
        _ => json!({"conditions": [{
            "type": "Walked", "status": "True", "reason": "Walk", "message": "walked",
            "lastTransitionTime": "2026-01-01T00:00:00Z"
        }]}),
    }
}

/// The name the walks give an object of `gvr`: `default`, or what the kind's name rule
/// requires (a CRD is named `<plural>.<group>`).
pub(super) fn stub_name(gvr: &str, default: &str) -> String {
    match gvr {
        "apiextensions.k8s.io/v1/customresourcedefinitions" => "walks.walk.example.com".to_owned(),
        _ => default.to_owned(),
    }
}

/// The resource's key in the stub map: its group spelled as in the kubernetes flavor.
pub(super) fn stub_key(t: &ResourceType) -> String {
    format!("{}/{}", t.api_version(), t.plural).replace(".platform.io/", ".k8s.io/")
}

pub(super) fn collection_path(t: &ResourceType) -> String {
    let root = if t.group.is_empty() {
        "/api/v1".to_owned()
    } else {
        format!("/apis/{}/{}", t.group, t.version)
    };
    if t.is_namespaced() {
        format!("{root}/namespaces/default/{}", t.plural)
    } else {
        format!("{root}/{}", t.plural)
    }
}

/// Runs `check` on every served row `keep` selects, in both flavors (a fresh router per
/// flavor), and answers what went wrong, one line per row.
pub(super) async fn failures_over_served_rows(
    keep: fn(&ResourceType) -> bool,
    check: impl AsyncFn(&Router, &ResourceType) -> Result<(), String>,
) -> Vec<String> {
    let mut failures = Vec::new();
    for flavor in [Flavor::Kubernetes, Flavor::Platform] {
        let (app, _) = app_in(flavor).await;
        let registry = Registry::builtin(flavor);
        for t in registry.stores().map(Store::resource).filter(|t| keep(t)) {
            if let Err(e) = check(&app, t).await {
                failures.push(format!("{flavor:?} {}: {e}", stub_key(t)));
            }
        }
    }
    failures
}

/// Walks one resource; returns what went wrong.
async fn walk(app: &Router, t: &ResourceType, status: bool) -> Result<(), String> {
    let key = stub_key(t);
    let mut obj = stub(&key).ok_or("no stub")?;
    let name = stub_name(&key, "walk");
    let name = name.as_str();
    obj["apiVersion"] = t.api_version().into();
    obj["kind"] = t.kind.as_str().into();
    obj["metadata"] = json!({"name": name});

    let discovery_path = collection_path(t)
        .split("/namespaces/")
        .next()
        .unwrap_or_default()
        .trim_end_matches(&format!("/{}", t.plural))
        .to_owned();
    let doc = admin_call(app, "GET", &discovery_path, None).await.json();
    let listed = doc["resources"].as_array().is_some_and(|rs| {
        rs.iter().any(|r| {
            r["name"] == t.plural.as_str()
                && r["kind"] == t.kind.as_str()
                && r["namespaced"] == t.is_namespaced()
        })
    });
    if !listed {
        return Err(format!("not in discovery {discovery_path}"));
    }

    let path = collection_path(t);
    let item = format!("{path}/{name}");
    let created = admin_call(app, "POST", &path, Some(&obj.to_string())).await;
    if created.status != StatusCode::CREATED {
        return Err(format!("create {}: {}", created.status, created.text()));
    }
    let created = created.json();
    if created["apiVersion"] != t.api_version().as_str() || created["kind"] != t.kind.as_str() {
        return Err(format!("create answered {created}"));
    }
    let got = admin_call(app, "GET", &item, None).await;
    if got.status != StatusCode::OK || got.json() != created {
        return Err(format!("get {}: {}", got.status, got.text()));
    }
    let list = admin_call(app, "GET", &path, None).await.json();
    let in_list = list["items"]
        .as_array()
        .is_some_and(|items| items.iter().any(|i| i["metadata"]["name"] == name));
    if list["kind"] != t.list_kind.as_str() || !in_list {
        return Err(format!("list: {list}"));
    }

    let mut changed = created.clone();
    changed["metadata"]["labels"] = json!({"walk": "updated"});
    if status {
        changed["status"] = status_stub(&key);
    }
    let updated = admin_call(app, "PUT", &item, Some(&changed.to_string())).await;
    if updated.status != StatusCode::OK {
        return Err(format!("update {}: {}", updated.status, updated.text()));
    }
    let updated = updated.json();
    if updated["metadata"]["labels"]["walk"] != "updated"
        || updated["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    {
        return Err(format!("update answered {updated}"));
    }
    if status && updated.get("status") != created.get("status") {
        return Err(format!("an update changed status: {updated}"));
    }

    let deleted = admin_call(app, "DELETE", &item, None).await;
    if deleted.status != StatusCode::OK {
        return Err(format!("delete {}: {}", deleted.status, deleted.text()));
    }
    let after = admin_call(app, "GET", &item, None).await;
    // Namespaces go through Terminating while their finalizer holds them.
    let terminating = after.status == StatusCode::OK
        && after.json()["metadata"].get("deletionTimestamp").is_some();
    if after.status != StatusCode::NOT_FOUND && !terminating {
        return Err(format!(
            "get after delete {}: {}",
            after.status,
            after.text()
        ));
    }
    Ok(())
}

// R-RES-001, R-RES-006, R-RES-010, R-RES-019, R-VER-061, R-VER-066: every served row, both
// flavors, and an update of the main resource keeps status (no CHECKLIST ID of its own).
#[tokio::test]
async fn every_served_resource_round_trips() {
    // Computed kinds store nothing to walk (create-only reviews, get/list
    // componentstatuses): `reviews` proves them.
    let failures = failures_over_served_rows(
        |t| t.supports("update"),
        async |app, t| walk(app, t, t.subresources.iter().any(|s| s == "status")).await,
    )
    .await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// A stub for a row that is not served is stale: the table and the walk move together.
#[test]
fn every_stub_belongs_to_a_served_row() {
    let registry = Registry::builtin(Flavor::Kubernetes);
    for t in registry.unserved() {
        assert!(
            stub(&stub_key(t)).is_none(),
            "{} is not served",
            stub_key(t)
        );
    }
}
