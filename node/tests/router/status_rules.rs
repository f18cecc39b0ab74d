//! The status subresource rules, walked over every served row with `status` in both
//! flavors: an update of the main resource keeps the status, an update of `/status` keeps
//! everything else (but a CRD's metadata, as in Kubernetes), and `metadata.generation` counts spec changes only (not label or status
//! changes). A row with status but no spec change below fails the walk.

use serde_json::Value;
use serde_json::json;

use super::conformance::collection_path;
use super::conformance::failures_over_served_rows;
use super::conformance::status_stub;
use super::conformance::stub;
use super::conformance::stub_key;
use super::conformance::stub_name;
use super::*;
use apiary_api::registry::ResourceType;

/// A change of the spec the kind accepts on update: a JSON pointer and its new value.
fn spec_change(gvr: &str) -> Option<(&'static str, Value)> {
    let template_annotation = || {
        Some((
            "/spec/template/metadata/annotations",
            json!({"rules": "changed"}),
        ))
    };
    Some(match gvr {
        "v1/namespaces" => ("/spec/finalizers", json!([])),
        "v1/nodes" => ("/spec/unschedulable", json!(false)),
        // Growing the request needs a class that allows expansion (PersistentVolumeClaimResize).
        "v1/persistentvolumeclaims" => ("/spec/volumeAttributesClassName", json!("gold")),
        "v1/persistentvolumes" => ("/spec/capacity/storage", json!("2Gi")),
        "v1/pods" => ("/spec/containers/0/image", json!("busybox:2")),
        "v1/replicationcontrollers" => ("/spec/replicas", json!(2)),
        "v1/resourcequotas" => ("/spec/hard/pods", json!("20")),
        "v1/services" => ("/spec/ports/0/port", json!(81)),
        "apiregistration.k8s.io/v1/apiservices" => ("/spec/versionPriority", json!(20)),
        "apps/v1/daemonsets" | "apps/v1/statefulsets" => return template_annotation(),
        "apps/v1/deployments" | "apps/v1/replicasets" => ("/spec/replicas", json!(2)),
        "autoscaling/v2/horizontalpodautoscalers" | "autoscaling/v1/horizontalpodautoscalers" => {
            ("/spec/maxReplicas", json!(4))
        }
        "batch/v1/cronjobs" => ("/spec/schedule", json!("*/10 * * * *")),
        "batch/v1/jobs" => ("/spec/activeDeadlineSeconds", json!(100)),
        "certificates.k8s.io/v1/certificatesigningrequests" => {
            ("/spec/expirationSeconds", json!(7200))
        }
        "certificates.k8s.io/v1/podcertificaterequests" => {
            ("/spec/maxExpirationSeconds", json!(7200))
        }
        "networking.k8s.io/v1/ingresses" => ("/spec/defaultBackend/service/port/number", json!(81)),
        "networking.k8s.io/v1/servicecidrs" => {
            ("/spec/cidrs", json!(["10.96.0.0/12", "fd00:10:96::/108"]))
        }
        "policy/v1/poddisruptionbudgets" => ("/spec/minAvailable", json!(2)),
        "apiextensions.k8s.io/v1/customresourcedefinitions" => {
            ("/spec/names/shortNames", json!(["wk"]))
        }
        "flowcontrol.apiserver.k8s.io/v1/flowschemas" => ("/spec/matchingPrecedence", json!(500)),
        "flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations" => {
            ("/spec/exempt/nominalConcurrencyShares", json!(5))
        }
        "admissionregistration.k8s.io/v1/validatingadmissionpolicies"
        | "admissionregistration.k8s.io/v1/mutatingadmissionpolicies" => {
            ("/spec/failurePolicy", json!("Ignore"))
        }
        "resource.k8s.io/v1/resourceclaims" => ("/spec/devices", json!({"requests": []})),
        "resource.k8s.io/v1/devicetaintrules" => ("/spec/taint/value", json!("v")),
        "storage.k8s.io/v1/volumeattachments" => ("/spec/nodeName", json!("n2")),
        "storagemigration.k8s.io/v1/storageversionmigrations" => {
            ("/spec/resource/resource", json!("replicasets"))
        }
        _ => return None,
    })
}

/// A status the `/status` update must store (the conformance status where the kind's status
/// has conditions; otherwise a field of its own).
fn status_change(gvr: &str) -> Value {
    match gvr {
        // Only a bound claim's requests may change (a volume expansion).
        "v1/persistentvolumeclaims" => json!({"phase": "Bound"}),
        "v1/persistentvolumes" => json!({"phase": "Pending"}),
        "v1/namespaces" => json!({"phase": "Active", "conditions": status_stub(gvr)["conditions"]}),
        "v1/replicationcontrollers" => json!({"replicas": 0, "observedGeneration": 1}),
        // autoscaling/v1 has no conditions (they ride in an annotation of the v2 object).
        "autoscaling/v1/horizontalpodautoscalers" => {
            json!({"currentReplicas": 2, "desiredReplicas": 2})
        }
        "v1/resourcequotas" => json!({"hard": {"pods": "10"}, "used": {"pods": "1"}}),
        "apps/v1/replicasets" => json!({"replicas": 0, "observedGeneration": 1}),
        "batch/v1/cronjobs" => json!({"lastScheduleTime": "2026-01-01T00:00:00Z"}),
        "v1/services" | "networking.k8s.io/v1/ingresses" => {
            json!({"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}})
        }
        "storage.k8s.io/v1/volumeattachments" => json!({"attached": true}),
        "resource.k8s.io/v1/resourceclaims" => {
            json!({"reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}]})
        }
        other => status_stub(other),
    }
}

/// Sets `obj[pointer] = value`, creating objects on the way (array indices must exist).
fn set_at(obj: &mut Value, pointer: &str, value: Value) {
    let mut cur = obj;
    let parts: Vec<&str> = pointer.split('/').skip(1).collect();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        cur = match cur {
            Value::Array(a) => match part.parse::<usize>().ok().and_then(|n| a.get_mut(n)) {
                Some(next) => next,
                None => return,
            },
            Value::Object(m) => m.entry((*part).to_owned()).or_insert_with(|| json!({})),
            _ => return,
        };
        if last {
            *cur = value;
            return;
        }
    }
}

fn generation(obj: &Value) -> Option<i64> {
    obj.pointer("/metadata/generation").and_then(Value::as_i64)
}

async fn put(app: &Router, path: &str, body: &Value) -> Result<Value, String> {
    let reply = admin_call(app, "PUT", path, Some(&body.to_string())).await;
    if reply.status != StatusCode::OK {
        return Err(format!("PUT {path} {}: {}", reply.status, reply.text()));
    }
    Ok(reply.json())
}

async fn check(app: &Router, t: &ResourceType) -> Result<(), String> {
    let key = stub_key(t);
    let (pointer, new_value) = spec_change(&key).ok_or("no spec change")?;
    let mut obj = stub(&key).ok_or("no stub")?;
    obj["apiVersion"] = t.api_version().into();
    obj["kind"] = t.kind.as_str().into();
    // Named per version: two versions of one resource share their objects.
    let name = stub_name(&key, &format!("rules-{}", t.version));
    obj["metadata"] = json!({"name": name});
    let path = collection_path(t);
    let item = format!("{path}/{name}");
    let created = admin_call(app, "POST", &path, Some(&obj.to_string())).await;
    if created.status != StatusCode::CREATED {
        return Err(format!("create {}: {}", created.status, created.text()));
    }
    let created = created.json();
    let first = generation(&created);
    if first.is_some_and(|g| g != 1) {
        return Err(format!("created with generation {first:?}"));
    }

    let mut body = created.clone();
    body["metadata"]["labels"] = json!({"rules": "main"});
    body["status"] = status_change(&key);
    let main = put(app, &item, &body).await?;
    if main.get("status") != created.get("status") {
        return Err(format!("a main update changed status: {main}"));
    }
    if main["metadata"]["labels"]["rules"] != "main" || generation(&main) != first {
        return Err(format!("a label change: {main}"));
    }

    let mut body = main.clone();
    body["metadata"]["labels"] = json!({"rules": "status"});
    body["status"] = status_change(&key);
    if let Value::Object(m) = &mut body {
        m.remove("spec");
    }
    let status = put(app, &format!("{item}/status"), &body).await?;
    // A CRD's status write takes the metadata sent (Kubernetes' CRD status strategy; its
    // finalizer controller releases a deleted CRD that way); every other kind keeps it.
    let labels = match key.as_str() {
        "apiextensions.k8s.io/v1/customresourcedefinitions" => &body["metadata"]["labels"],
        _ => &main["metadata"]["labels"],
    };
    if status["metadata"]["labels"] != *labels || status.get("spec") != main.get("spec") {
        return Err(format!(
            "a status update changed more than status: {status}"
        ));
    }
    let sent = status_change(&key);
    let stored = sent
        .as_object()
        .into_iter()
        .flatten()
        .all(|(k, v)| status["status"].get(k) == Some(v));
    if !stored || generation(&status) != first {
        return Err(format!("a status update: sent {sent}, answered {status}"));
    }

    let mut body = status.clone();
    set_at(&mut body, pointer, new_value);
    let changed = put(app, &item, &body).await?;
    let expected = first.map(|g| g + 1);
    if generation(&changed) != expected || changed.get("status") != status.get("status") {
        return Err(format!(
            "a spec change: generation {:?} (want {expected:?}): {changed}",
            generation(&changed)
        ));
    }
    Ok(())
}

// R-RES-078, R-RES-082: every served row with a status subresource, both flavors (the
// generation rule has no CHECKLIST ID of its own).
#[tokio::test]
async fn status_subresource_rules_hold_for_every_row() {
    let failures =
        failures_over_served_rows(|t| t.subresources.iter().any(|s| s == "status"), check).await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// R-VER-151, R-VER-157, R-RES-082: the workload rules answer 422 with upstream's causes through the router.
#[tokio::test]
async fn workload_rules_answer_invalid() {
    let (app, _) = app_in(Flavor::Kubernetes).await;
    let path = "/apis/apps/v1/namespaces/default/deployments";
    let body = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"selector": {"matchLabels": {"app": "x"}},
                 "template": {"metadata": {"labels": {"app": "y"}},
                              "spec": {"containers": [{"name": "c", "image": "i"}]}}}
    });
    let reply = admin_call(&app, "POST", path, Some(&body.to_string())).await;
    let s = assert_status(&reply, 422, "Invalid");
    assert_eq!(
        s["details"]["causes"][0]["message"],
        r#"Invalid value: {"app":"y"}: `selector` does not match template `labels`"#
    );
    assert_eq!(
        s["details"]["causes"][0]["field"],
        "spec.template.metadata.labels"
    );

    let mut good = body.clone();
    good["spec"]["template"]["metadata"]["labels"] = json!({"app": "x"});
    let created = admin_call(&app, "POST", path, Some(&good.to_string())).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let created = created.json();
    assert_eq!(
        created["spec"]["strategy"]["rollingUpdate"]["maxSurge"],
        "25%"
    );
    assert_eq!(created["status"], json!({}));
    let mut moved = created.clone();
    moved["spec"]["selector"] = json!({"matchLabels": {"app": "z"}});
    moved["spec"]["template"]["metadata"]["labels"] = json!({"app": "z"});
    let reply = admin_call(&app, "PUT", &format!("{path}/d"), Some(&moved.to_string())).await;
    let s = assert_status(&reply, 422, "Invalid");
    assert_eq!(s["details"]["causes"][0]["field"], "spec.selector");

    let mut status = created.clone();
    status["status"] = json!({"replicas": 1, "readyReplicas": 2});
    let reply = admin_call(
        &app,
        "PUT",
        &format!("{path}/d/status"),
        Some(&status.to_string()),
    )
    .await;
    let s = assert_status(&reply, 422, "Invalid");
    assert_eq!(
        s["details"]["causes"][0]["message"],
        "Invalid value: 2: cannot be greater than status.replicas"
    );
}

// R-RES-082: a Pod starts Pending with its QoS class, whatever status the client sent.
#[tokio::test]
async fn a_new_pod_is_pending() {
    let (app, _) = app_in(Flavor::Kubernetes).await;
    let body = json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
        "status": {"phase": "Running"}
    });
    let reply = admin_call(
        &app,
        "POST",
        "/api/v1/namespaces/default/pods",
        Some(&body.to_string()),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
    let pod = reply.json();
    assert_eq!(
        pod["status"],
        json!({"phase": "Pending", "qosClass": "BestEffort"})
    );
    assert_eq!(pod["spec"]["containers"][0]["imagePullPolicy"], "Always");
    assert_eq!(pod["spec"]["dnsPolicy"], "ClusterFirst");
}
