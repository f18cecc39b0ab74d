//! Versions that share storage (issue 5 design §3.1): `events.k8s.io/v1` events are core `v1`
//! events, `autoscaling/v1` HPAs are `autoscaling/v2` HPAs. One object set through both:
//! what one version writes the other reads, updates and deletes, with one resourceVersion
//! sequence, shared continue tokens and watches, each answering in its own version.

use serde_json::Value;
use serde_json::json;

use super::watch::Watch;
use super::*;
use apiary_api::discovery::storage_version_hash;
use apiary_api::storage::ReadConsistency;
use apiary_api::storage::Storage;

const CORE: &str = "/api/v1/namespaces/default/events";
const EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/default/events";
const HPA_V1: &str = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers";
const HPA_V2: &str = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers";

fn events_api_event(name: &str, note: &str) -> String {
    json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": name},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
        "note": note, "reason": "Started", "type": "Normal", "action": "Start",
        "reportingController": "example.com/ctl", "reportingInstance": "ctl-1",
    })
    .to_string()
}

async fn ok(app: &Router, method: &str, path: &str, body: Option<&str>, code: u16) -> Value {
    let r = admin_call(app, method, path, body).await;
    assert_eq!(r.status.as_u16(), code, "{method} {path}: {}", r.text());
    r.json()
}

fn rv(obj: &Value) -> &str {
    obj["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
}

// R-VER-070, R-RES-087, R-RES-069, R-RES-062
#[tokio::test]
async fn events_round_trip_between_the_core_and_events_apis() {
    let (app, storage) = app().await;
    let created = ok(
        &app,
        "POST",
        EVENTS,
        Some(&events_api_event("e1", "hello")),
        201,
    )
    .await;
    assert_eq!(created["apiVersion"], "events.k8s.io/v1");
    assert_eq!(created["kind"], "Event");
    assert_eq!(created["note"], "hello");
    assert_eq!(created["reportingController"], "example.com/ctl");
    assert!(created.get("message").is_none());

    // Stored once, as a core v1 Event under the core key.
    let stored = storage
        .get(
            "/registry/core/events/default/e1",
            ReadConsistency::Linearizable,
        )
        .await
        .expect("reads")
        .expect("stored under the core key");
    assert_eq!(stored.mod_revision.to_string(), rv(&created));

    let core = ok(&app, "GET", &format!("{CORE}/e1"), None, 200).await;
    assert_eq!(core["apiVersion"], "v1");
    assert_eq!(core["message"], "hello");
    assert_eq!(core["involvedObject"]["name"], "p");
    assert_eq!(core["reportingComponent"], "example.com/ctl");
    assert_eq!(core["metadata"]["uid"], created["metadata"]["uid"]);
    assert_eq!(rv(&core), rv(&created));
    // A second read of the converted version is the same bytes (cached per version).
    let again = ok(&app, "GET", &format!("{EVENTS}/e1"), None, 200).await;
    assert_eq!(again, created);

    // Update through core, read through events.k8s.io.
    let mut changed = core.clone();
    changed["message"] = "changed".into();
    let updated = ok(
        &app,
        "PUT",
        &format!("{CORE}/e1"),
        Some(&changed.to_string()),
        200,
    )
    .await;
    let seen = ok(&app, "GET", &format!("{EVENTS}/e1"), None, 200).await;
    assert_eq!(seen["note"], "changed");
    assert_eq!(rv(&seen), rv(&updated));

    // Update through events.k8s.io with the stale version: 409 naming the served resource.
    let stale = created.to_string();
    let r = admin_call(&app, "PUT", &format!("{EVENTS}/e1"), Some(&stale)).await;
    let s = assert_status(&r, 409, "Conflict");
    assert_eq!(s["details"]["group"], "events.k8s.io", "{s}");
    let mut fresh = seen.clone();
    fresh["note"] = "third".into();
    let third = ok(
        &app,
        "PUT",
        &format!("{EVENTS}/e1"),
        Some(&fresh.to_string()),
        200,
    )
    .await;
    assert_eq!(third["apiVersion"], "events.k8s.io/v1");
    assert_eq!(third["note"], "third");

    // Lists: one object set; each list in its own version; continue tokens are shared.
    ok(
        &app,
        "POST",
        CORE,
        Some(
            &json!({"metadata": {"name": "e2"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "message": "core"})
            .to_string(),
        ),
        201,
    )
    .await;
    let list = ok(&app, "GET", &format!("{EVENTS}?limit=1"), None, 200).await;
    assert_eq!(list["kind"], "EventList");
    assert_eq!(list["apiVersion"], "events.k8s.io/v1");
    assert_eq!(list["items"][0]["note"], "third");
    assert_eq!(list["items"][0]["apiVersion"], "events.k8s.io/v1");
    let token = list["metadata"]["continue"].as_str().expect("more");
    let rest = ok(
        &app,
        "GET",
        &format!("{CORE}?limit=1&continue={token}"),
        None,
        200,
    )
    .await;
    assert_eq!(rest["apiVersion"], "v1");
    assert_eq!(rest["items"][0]["metadata"]["name"], "e2");
    assert_eq!(rest["items"][0]["message"], "core");
    let all = ok(&app, "GET", EVENTS, None, 200).await;
    assert_eq!(all["items"][1]["note"], "core");

    // Delete through events.k8s.io: the Status names it; the core object is gone.
    let gone = ok(&app, "DELETE", &format!("{EVENTS}/e1"), None, 200).await;
    assert_eq!(gone["kind"], "Status");
    assert_eq!(gone["details"]["group"], "events.k8s.io");
    assert_eq!(gone["details"]["kind"], "events");
    assert_eq!(gone["details"]["uid"], created["metadata"]["uid"]);
    let r = admin_call(&app, "GET", &format!("{CORE}/e1"), None).await;
    assert_status(&r, 404, "NotFound");
    let r = admin_call(&app, "DELETE", &format!("{EVENTS}/e1"), None).await;
    let s = assert_status(&r, 404, "NotFound");
    assert_eq!(s["message"], "events.events.k8s.io \"e1\" not found");
}

// R-VER-070: the core strategy's validation runs on writes through events.k8s.io.
#[tokio::test]
async fn events_api_writes_are_validated_as_core_events() {
    let (app, _) = app().await;
    let mut body: Value = serde_json::from_str(&events_api_event("e", "x")).expect("json");
    // A new-style event must name its reporting controller.
    body["reportingController"] = "".into();
    let r = admin_call(&app, "POST", EVENTS, Some(&body.to_string())).await;
    let s = assert_status(&r, 422, "Invalid");
    assert_eq!(s["details"]["group"], "events.k8s.io", "{s}");
    // The body is decoded as the served version: a core-only field is not taken.
    let wrong = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}});
    let r = admin_call(&app, "POST", EVENTS, Some(&wrong.to_string())).await;
    assert_status(&r, 400, "BadRequest");
}

fn hpa_v2(name: &str) -> String {
    json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
            "minReplicas": 1, "maxReplicas": 4,
            "metrics": [
                {"type": "Pods", "pods": {"metric": {"name": "qps"},
                    "target": {"type": "AverageValue", "averageValue": "10"}}},
                {"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 70}}},
            ],
        },
    })
    .to_string()
}

// R-VER-070
#[tokio::test]
async fn hpas_round_trip_between_autoscaling_v1_and_v2() {
    let (app, _) = app().await;
    let v1_body = json!({
        "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "a"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "d"},
            "maxReplicas": 3, "targetCPUUtilizationPercentage": 50},
    });
    let created = ok(&app, "POST", HPA_V1, Some(&v1_body.to_string()), 201).await;
    assert_eq!(created["apiVersion"], "autoscaling/v1");
    assert_eq!(created["spec"]["targetCPUUtilizationPercentage"], 50);
    let v2 = ok(&app, "GET", &format!("{HPA_V2}/a"), None, 200).await;
    assert_eq!(
        v2["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 50}}}])
    );
    assert_eq!(rv(&v2), rv(&created));

    // Created as v2 with a metric v1 cannot express: v1 carries it in the annotation, and
    // an update through v1 keeps it.
    ok(&app, "POST", HPA_V2, Some(&hpa_v2("b")), 201).await;
    let mut v1 = ok(&app, "GET", &format!("{HPA_V1}/b"), None, 200).await;
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 70);
    assert!(
        v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/metrics"]
            .as_str()
            .is_some_and(|m| m.contains("qps"))
    );
    v1["spec"]["maxReplicas"] = 9.into();
    ok(
        &app,
        "PUT",
        &format!("{HPA_V1}/b"),
        Some(&v1.to_string()),
        200,
    )
    .await;
    let v2 = ok(&app, "GET", &format!("{HPA_V2}/b"), None, 200).await;
    assert_eq!(v2["spec"]["maxReplicas"], 9);
    assert_eq!(v2["spec"]["metrics"][0]["pods"]["metric"]["name"], "qps");
    assert_eq!(
        v2["spec"]["metrics"][1]["resource"]["target"]["averageUtilization"],
        70
    );
    assert!(v2["metadata"].get("annotations").is_none(), "{v2}");
    assert_eq!(v2["metadata"]["generation"], 2, "the spec changed");

    let list = ok(&app, "GET", HPA_V1, None, 200).await;
    assert_eq!(list["kind"], "HorizontalPodAutoscalerList");
    assert_eq!(list["items"].as_array().map(Vec::len), Some(2));
    assert_eq!(list["items"][1]["apiVersion"], "autoscaling/v1");

    ok(&app, "DELETE", &format!("{HPA_V2}/b"), None, 200).await;
    let r = admin_call(&app, "GET", &format!("{HPA_V1}/b"), None).await;
    assert_status(&r, 404, "NotFound");
}

// R-VER-070, R-RES-090: a patch through a version that shares another's storage is applied
// to that version's form of the object, and what it changed reads back through both versions.
#[tokio::test]
async fn patches_through_a_shared_version_apply_to_its_own_form() {
    let (app, _) = app().await;
    ok(
        &app,
        "POST",
        EVENTS,
        Some(&events_api_event("e1", "hello")),
        201,
    )
    .await;
    let merge = "application/merge-patch+json";
    let r = send_as(
        &app,
        "PATCH",
        &format!("{EVENTS}/e1"),
        merge,
        r#"{"note":"patched"}"#,
    )
    .await;
    assert_eq!(r.status.as_u16(), 200, "{}", r.text());
    let patched = r.json();
    assert_eq!(patched["apiVersion"], "events.k8s.io/v1");
    assert_eq!(patched["note"], "patched");
    let core = ok(&app, "GET", &format!("{CORE}/e1"), None, 200).await;
    assert_eq!(core["message"], "patched");
    assert_eq!(rv(&core), rv(&patched));

    ok(&app, "POST", HPA_V2, Some(&hpa_v2("a")), 201).await;
    let json_patch =
        r#"[{"op":"replace","path":"/spec/targetCPUUtilizationPercentage","value":60}]"#;
    let r = send_as(
        &app,
        "PATCH",
        &format!("{HPA_V1}/a"),
        "application/json-patch+json",
        json_patch,
    )
    .await;
    assert_eq!(r.status.as_u16(), 200, "{}", r.text());
    assert_eq!(r.json()["spec"]["targetCPUUtilizationPercentage"], 60);
    let v2 = ok(&app, "GET", &format!("{HPA_V2}/a"), None, 200).await;
    assert_eq!(
        v2["spec"]["metrics"][1]["resource"]["target"]["averageUtilization"],
        60
    );
    let status = r#"{"status":{"currentReplicas":2}}"#;
    let r = send_as(&app, "PATCH", &format!("{HPA_V1}/a/status"), merge, status).await;
    assert_eq!(r.status.as_u16(), 200, "{}", r.text());
    let v2 = ok(&app, "GET", &format!("{HPA_V2}/a"), None, 200).await;
    assert_eq!(v2["status"]["currentReplicas"], 2);
}

fn typed(event: &Value) -> (String, String, String, String) {
    let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let o = &event["object"];
    (
        s(&event["type"]),
        s(&o["apiVersion"]),
        s(&o["metadata"]["name"]),
        s(&o["metadata"]["resourceVersion"]),
    )
}

// R-VER-070, R-RES-085, R-RES-227, R-RES-228, R-RES-230
#[tokio::test]
async fn watches_through_both_versions_see_the_same_changes() {
    let (app, _) = app().await;
    let start = ok(&app, "GET", CORE, None, 200).await;
    let from = rv(&start).to_owned();
    let mut core = Watch::open(&app, &format!("{CORE}?watch=1&resourceVersion={from}")).await;
    let mut events = Watch::open(&app, &format!("{EVENTS}?watch=1&resourceVersion={from}")).await;

    let created = ok(
        &app,
        "POST",
        EVENTS,
        Some(&events_api_event("w", "one")),
        201,
    )
    .await;
    let mut changed = ok(&app, "GET", &format!("{CORE}/w"), None, 200).await;
    changed["message"] = "two".into();
    let updated = ok(
        &app,
        "PUT",
        &format!("{CORE}/w"),
        Some(&changed.to_string()),
        200,
    )
    .await;
    ok(&app, "DELETE", &format!("{EVENTS}/w"), None, 200).await;

    let (c, u) = (rv(&created).to_owned(), rv(&updated).to_owned());
    let t =
        |a: &str, b: &str, rv: &str| (a.to_owned(), b.to_owned(), "w".to_owned(), rv.to_owned());
    let added = core.next().await;
    assert_eq!(typed(&added), t("ADDED", "v1", &c));
    assert_eq!(added["object"]["message"], "one");
    let added = events.next().await;
    assert_eq!(typed(&added), t("ADDED", "events.k8s.io/v1", &c));
    assert_eq!(added["object"]["note"], "one");
    let modified = core.next().await;
    assert_eq!(typed(&modified), t("MODIFIED", "v1", &u));
    let modified = events.next().await;
    assert_eq!(typed(&modified), t("MODIFIED", "events.k8s.io/v1", &u));
    assert_eq!(modified["object"]["note"], "two");
    let deleted = core.next().await;
    assert_eq!(deleted["type"], "DELETED");
    assert_eq!(deleted["object"]["apiVersion"], "v1");
    let deleted = events.next().await;
    assert_eq!(deleted["type"], "DELETED");
    assert_eq!(deleted["object"]["apiVersion"], "events.k8s.io/v1");
    assert_eq!(deleted["object"]["note"], "two");
    core.quiet().await;
    events.quiet().await;
}

// The storageVersionHash of a shared row is its storage home's, as upstream.
#[tokio::test]
async fn shared_rows_have_their_storage_versions_hash() {
    let (app, _) = app().await;
    let entry = |list: &Value, name: &str| {
        list["resources"]
            .as_array()
            .and_then(|r| r.iter().find(|e| e["name"] == name).cloned())
            .unwrap_or_else(|| panic!("{name} in {list}"))
    };
    let events = ok(&app, "GET", "/apis/events.k8s.io/v1", None, 200).await;
    let core = ok(&app, "GET", "/api/v1", None, 200).await;
    let core_hash = storage_version_hash("", "v1", "Event");
    assert_eq!(
        entry(&events, "events")["storageVersionHash"],
        core_hash.as_str()
    );
    assert_eq!(
        entry(&core, "events")["storageVersionHash"],
        core_hash.as_str()
    );
    let v1 = ok(&app, "GET", "/apis/autoscaling/v1", None, 200).await;
    let v2_hash = storage_version_hash("autoscaling", "v2", "HorizontalPodAutoscaler");
    assert_eq!(
        entry(&v1, "horizontalpodautoscalers")["storageVersionHash"],
        v2_hash.as_str()
    );
}

// R-VER-064, R-VER-070: an off version whose schema equals its storage version's is served
// through Identity once enabled, in the flavor's spelling: one object set, each version
// answering with its own apiVersion.
#[tokio::test]
async fn identity_versions_share_objects_once_enabled() {
    let flavor = Flavor::Platform;
    let (storage, _) = backend_in(flavor).await;
    let mut config = ApiConfig::new(flavor, Arc::new(AlwaysReady));
    config.runtime_config = apiary_api::registry::RuntimeConfig::parse(
        ["coordination.platform.io/v1alpha2,coordination.platform.io/v1beta1"],
        flavor,
    )
    .expect("valid");
    let app = apiary_api::router(storage.clone(), config);
    let alpha = "/apis/coordination.platform.io/v1alpha2/namespaces/default/leasecandidates";
    let beta = "/apis/coordination.platform.io/v1beta1/namespaces/default/leasecandidates";
    let body = json!({
        "apiVersion": "coordination.platform.io/v1alpha2", "kind": "LeaseCandidate",
        "metadata": {"name": "c"},
        "spec": {"leaseName": "l", "binaryVersion": "1.37.0", "strategy": "OldestEmulationVersion"},
    });
    let created = ok(&app, "POST", alpha, Some(&body.to_string()), 201).await;
    assert_eq!(created["apiVersion"], "coordination.platform.io/v1alpha2");
    let got = ok(&app, "GET", &format!("{beta}/c"), None, 200).await;
    assert_eq!(got["apiVersion"], "coordination.platform.io/v1beta1");
    assert_eq!(got["spec"], created["spec"]);
    assert_eq!(rv(&got), rv(&created));
    // Stored once, under the flavor-independent key of the storage version.
    let key = "/registry/coordination.k8s.io/leasecandidates/default/c";
    let stored = storage
        .get(key, ReadConsistency::Linearizable)
        .await
        .expect("reads");
    assert!(stored.is_some(), "stored at {key}");
    ok(&app, "DELETE", &format!("{alpha}/c"), None, 200).await;
    let r = admin_call(&app, "GET", &format!("{beta}/c"), None).await;
    assert_status(&r, 404, "NotFound");
}
