//! The lifecycle of CustomResourceDefinitions through the router with the CRD controllers
//! running in-process: names accepted or refused for a conflict, the CRD established, the
//! first delete marking it for its cleanup finalizer, the finalizer releasing it, and the
//! rules of its `status` subresource.

use std::sync::Arc;

use apiary_api::Flavor;
use apiary_api::SystemClock;
use apiary_node::controllers::Controller;
use apiary_node::controllers::ControllerContext;
use apiary_node::controllers::changes::Changes;
use apiary_node::controllers::custom_resource_definitions::CrdEstablishing;
use apiary_node::controllers::custom_resource_definitions::CrdFinalizer;
use apiary_node::controllers::custom_resource_definitions::CrdNaming;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::*;

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// A namespaced CRD `<plural>.example.com` of `kind`, with one served storage version.
fn crd(plural: &str, kind: &str) -> String {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.example.com")},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": plural, "kind": kind, "shortNames": [format!("{plural}-s")]},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "x-kubernetes-preserve-unknown-fields": true}}}]
        }
    })
    .to_string()
}

/// The CRD controllers running against `app` until the returned token is cancelled; the
/// sender moves their change signal.
fn run_controllers(app: &axum::Router) -> (watch::Sender<u64>, CancellationToken) {
    let (changes, receiver) = watch::channel(0);
    let context = ControllerContext {
        api: app.clone(),
        flavor: Flavor::Kubernetes,
        clock: Arc::new(SystemClock),
        changes: Changes::of_revisions(receiver),
    };
    let stop = CancellationToken::new();
    let controllers: [Arc<dyn Controller>; 3] = [
        Arc::new(CrdNaming),
        Arc::new(CrdEstablishing),
        Arc::new(CrdFinalizer),
    ];
    for controller in controllers {
        let (context, stop) = (context.clone(), stop.clone());
        tokio::spawn(async move { controller.run(context, stop).await });
    }
    (changes, stop)
}

// No CHECKLIST ID (apiextensions-apiserver's naming and establishing controllers): a CRD's
// names are accepted and it is established; a second CRD of the group asking for a kind
// already accepted is refused (`ListKindConflict`, the last conflict found) and not established; deleting it (never
// established) answers it marked with the cleanup finalizer and `InstanceDeletionPending`,
// and the finalizer controller releases it (`NeverEstablished`), freeing its names.
#[tokio::test]
async fn names_are_accepted_established_and_released() {
    let (app, _) = app().await;
    let (changes, stop) = run_controllers(&app);
    created(&app, CRDS, &crd("widgets", "Widget")).await;
    let widgets = format!("{CRDS}/widgets.example.com");
    let established = poll_until(&app, &changes, &widgets, "established", |r| {
        condition(&r.json(), "Established")["status"] == "True"
    })
    .await
    .json();
    assert_eq!(
        established["status"]["acceptedNames"],
        json!({"plural": "widgets", "singular": "widget", "shortNames": ["widgets-s"],
            "kind": "Widget", "listKind": "WidgetList"})
    );
    let accepted = condition(&established, "NamesAccepted");
    assert_eq!(
        (
            &accepted["status"],
            &accepted["reason"],
            &accepted["message"]
        ),
        (
            &json!("True"),
            &json!("NoConflicts"),
            &json!("no conflicts found")
        )
    );
    let done = condition(&established, "Established");
    assert_eq!(done["reason"], "InitialNamesAccepted");
    assert_eq!(done["message"], "the initial names have been accepted");

    created(&app, CRDS, &crd("gizmos", "Widget")).await;
    let gizmos = format!("{CRDS}/gizmos.example.com");
    let refused = poll_until(&app, &changes, &gizmos, "conflict", |r| {
        condition(&r.json(), "NamesAccepted")["status"] == "False"
    })
    .await
    .json();
    let conflict = condition(&refused, "NamesAccepted");
    // Its list kind (defaulted from the kind) conflicts too, and is the last one reported.
    assert_eq!(conflict["reason"], "ListKindConflict");
    assert_eq!(conflict["message"], "\"WidgetList\" is already in use");
    assert_eq!(refused["status"]["acceptedNames"]["plural"], "gizmos");
    assert_eq!(refused["status"]["acceptedNames"]["kind"], "");
    assert_eq!(condition(&refused, "Established")["reason"], "NotAccepted");

    let deleting = admin_call(&app, "DELETE", &gizmos, None).await;
    assert_eq!(deleting.status, StatusCode::OK, "{}", deleting.text());
    let marked = deleting.json();
    assert!(marked["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(
        marked["metadata"]["finalizers"],
        json!(["customresourcecleanup.apiextensions.k8s.io"])
    );
    let pending = condition(&marked, "Terminating");
    assert_eq!(pending["status"], "True");
    assert_eq!(pending["reason"], "InstanceDeletionPending");
    poll_until(&app, &changes, &gizmos, "released", |r| {
        r.status == StatusCode::NOT_FOUND
    })
    .await;
    stop.cancel();
}

// No CHECKLIST ID (Kubernetes' CRD delete and status strategy): a dry-run delete marks
// nothing; a `status` write keeps the stored spec, takes the labels sent, keeps the observed
// generations sent and is validated (accepted names, stored versions keeping the storage
// version).
#[tokio::test]
async fn the_status_subresource_and_a_dry_run_delete() {
    let (app, _) = app().await;
    created(&app, CRDS, &crd("widgets", "Widget")).await;
    let widgets = format!("{CRDS}/widgets.example.com");
    let dry = admin_call(&app, "DELETE", &format!("{widgets}?dryRun=All"), None).await;
    assert_eq!(dry.status, StatusCode::OK, "{}", dry.text());
    assert!(dry.json()["metadata"]["deletionTimestamp"].is_string());
    let stored = fetched(&app, &widgets).await;
    assert!(stored["metadata"].get("deletionTimestamp").is_none());
    assert!(stored["metadata"].get("finalizers").is_none());

    let status = format!("{widgets}/status");
    let mut body = stored.clone();
    body["spec"]["scope"] = json!("Cluster");
    body["metadata"]["labels"] = json!({"a": "b"});
    body["status"]["acceptedNames"] = json!({"plural": "widgets", "kind": "Widget"});
    body["status"]["observedGeneration"] = json!(1);
    body["status"]["conditions"] = json!([{"type": "NamesAccepted", "status": "True",
        "reason": "NoConflicts", "message": "no conflicts found", "observedGeneration": 1,
        "lastTransitionTime": "2026-01-01T00:00:00Z"}]);
    let written = admin_call(&app, "PUT", &status, Some(&body.to_string())).await;
    assert_eq!(written.status, StatusCode::OK, "{}", written.text());
    let written = written.json();
    assert_eq!(written["spec"]["scope"], "Namespaced");
    assert_eq!(written["metadata"]["labels"], json!({"a": "b"}));
    assert_eq!(written["status"]["acceptedNames"]["kind"], "Widget");
    assert_eq!(written["metadata"]["generation"], 1);
    // CRDObservedGenerationTracking (beta, on since 1.36): the generations are kept.
    assert_eq!(written["status"]["observedGeneration"], 1);
    assert_eq!(written["status"]["conditions"][0]["observedGeneration"], 1);

    let mut bad = written.clone();
    bad["status"]["acceptedNames"]["plural"] = json!("Not_A_Name");
    bad["status"]["storedVersions"] = json!(["v2"]);
    let refused = admin_call(&app, "PUT", &status, Some(&bad.to_string())).await;
    let answer = assert_status(&refused, 422, "Invalid");
    let fields: Vec<&str> = answer["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["field"].as_str())
        .collect();
    assert!(
        fields.contains(&"status.acceptedNames.plural"),
        "{fields:?}"
    );
    assert!(fields.contains(&"status.storedVersions"), "{fields:?}");
}

/// The items of the list at `path` (none when it is not served).
async fn items(app: &axum::Router, path: &str) -> Vec<Value> {
    let reply = admin_call(app, "GET", path, None).await;
    match reply.status {
        StatusCode::OK => reply.json()["items"]
            .as_array()
            .cloned()
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

// No CHECKLIST ID (apiextensions-apiserver's CRD finalizer): deleting an established CRD with
// instances in two namespaces deletes them all through the API; one held by its own finalizer
// keeps the CRD `Terminating` / `InstanceDeletionInProgress` until it is released, and then
// the CRD goes, its endpoints with it.
#[tokio::test]
async fn deleting_a_crd_deletes_its_instances_first() {
    let (app, _) = app().await;
    let (changes, stop) = run_controllers(&app);
    created(&app, CRDS, &crd("widgets", "Widget")).await;
    let widgets = format!("{CRDS}/widgets.example.com");
    poll_until(&app, &changes, &widgets, "established", |r| {
        condition(&r.json(), "Established")["status"] == "True"
    })
    .await;
    created(
        &app,
        "/api/v1/namespaces",
        r#"{"metadata":{"name":"other"}}"#,
    )
    .await;
    let collection = |ns: &str| format!("/apis/example.com/v1/namespaces/{ns}/widgets");
    let served = poll_until(&app, &changes, &collection("default"), "served", |r| {
        r.status == StatusCode::OK
    })
    .await;
    assert_eq!(served.json()["items"], json!([]));
    for (ns, name) in [("default", "a"), ("default", "b"), ("other", "c")] {
        let body = json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": name}});
        created(&app, &collection(ns), &body.to_string()).await;
    }
    let held = json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": "held", "finalizers": ["example.com/hold"]}});
    created(&app, &collection("other"), &held.to_string()).await;
    assert_eq!(items(&app, "/apis/example.com/v1/widgets").await.len(), 4);

    let deleting = admin_call(&app, "DELETE", &widgets, None).await;
    assert_eq!(deleting.status, StatusCode::OK, "{}", deleting.text());
    let waiting = poll_until(&app, &changes, &widgets, "instances deleted", |r| {
        condition(&r.json(), "Terminating")["reason"] == "InstanceDeletionInProgress"
    })
    .await
    .json();
    assert_eq!(
        condition(&waiting, "Terminating")["message"],
        "CustomResource deletion is in progress"
    );
    let left = poll_until(
        &app,
        &changes,
        "/apis/example.com/v1/widgets",
        "others gone",
        |r| r.json()["items"].as_array().map(Vec::len) == Some(1),
    )
    .await
    .json();
    let mut last = left["items"][0].clone();
    assert_eq!(last["metadata"]["name"], "held");
    assert!(last["metadata"]["deletionTimestamp"].is_string());
    let still = fetched(&app, &widgets).await;
    assert_eq!(
        still["metadata"]["finalizers"],
        json!(["customresourcecleanup.apiextensions.k8s.io"])
    );

    last["metadata"]["finalizers"] = json!([]);
    let released = admin_call(
        &app,
        "PUT",
        &format!("{}/held", collection("other")),
        Some(&last.to_string()),
    )
    .await;
    assert_eq!(released.status, StatusCode::OK, "{}", released.text());
    poll_until(&app, &changes, &widgets, "CRD removed", |r| {
        r.status == StatusCode::NOT_FOUND
    })
    .await;
    poll_until(&app, &changes, &collection("default"), "not served", |r| {
        r.status == StatusCode::NOT_FOUND
    })
    .await;
    stop.cancel();
}

/// The wall clock moved ahead by the seconds its handle holds.
struct AheadClock(Arc<std::sync::atomic::AtomicI64>);

impl apiary_api::Clock for AheadClock {
    fn now(&self) -> chrono::DateTime<chrono::Utc> {
        let ahead = self.0.load(std::sync::atomic::Ordering::SeqCst);
        chrono::Utc::now() + chrono::TimeDelta::seconds(ahead)
    }
}

// No CHECKLIST ID (apiextensions-apiserver's CRD finalizer, crd_finalizer.go): an instance
// still held a minute after its CRD's delete is reported as `Terminating` /
// `InstanceDeletionCheck` with Kubernetes' timeout message, which stays while it is held;
// once it is released the CRD goes.
#[tokio::test]
async fn instances_held_past_a_minute_are_reported() {
    let (app, _) = app().await;
    let ahead = Arc::new(std::sync::atomic::AtomicI64::new(0));
    let (changes, receiver) = watch::channel(0);
    let context = ControllerContext {
        api: app.clone(),
        flavor: Flavor::Kubernetes,
        clock: Arc::new(AheadClock(ahead.clone())),
        changes: Changes::of_revisions(receiver),
    };
    let stop = CancellationToken::new();
    let controllers: [Arc<dyn Controller>; 3] = [
        Arc::new(CrdNaming),
        Arc::new(CrdEstablishing),
        Arc::new(CrdFinalizer),
    ];
    for controller in controllers {
        let (context, stop) = (context.clone(), stop.clone());
        tokio::spawn(async move { controller.run(context, stop).await });
    }
    created(&app, CRDS, &crd("gadgets", "Gadget")).await;
    let gadgets = format!("{CRDS}/gadgets.example.com");
    poll_until(&app, &changes, &gadgets, "established", |r| {
        condition(&r.json(), "Established")["status"] == "True"
    })
    .await;
    let collection = "/apis/example.com/v1/namespaces/default/gadgets";
    poll_until(&app, &changes, collection, "served", |r| {
        r.status == StatusCode::OK
    })
    .await;
    let held = json!({"apiVersion": "example.com/v1", "kind": "Gadget",
        "metadata": {"name": "held", "finalizers": ["example.com/hold"]}});
    created(&app, collection, &held.to_string()).await;

    let deleting = admin_call(&app, "DELETE", &gadgets, None).await;
    assert_eq!(deleting.status, StatusCode::OK, "{}", deleting.text());
    poll_until(&app, &changes, &gadgets, "in progress", |r| {
        condition(&r.json(), "Terminating")["reason"] == "InstanceDeletionInProgress"
    })
    .await;
    ahead.store(120, std::sync::atomic::Ordering::SeqCst);
    let checked = poll_until(&app, &changes, &gadgets, "check reported", |r| {
        condition(&r.json(), "Terminating")["reason"] == "InstanceDeletionCheck"
    })
    .await
    .json();
    let terminating = condition(&checked, "Terminating");
    assert_eq!(terminating["status"], "True");
    assert_eq!(
        terminating["message"],
        "could not confirm zero CustomResources remaining: timed out waiting for the condition"
    );
    // Further passes leave it as it is.
    for round in 0..5 {
        changes.send_replace(1000 + round);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let still = fetched(&app, &gadgets).await;
    assert_eq!(
        condition(&still, "Terminating")["reason"],
        "InstanceDeletionCheck"
    );

    let mut last = fetched(&app, &format!("{collection}/held")).await;
    last["metadata"]["finalizers"] = json!([]);
    let released = admin_call(
        &app,
        "PUT",
        &format!("{collection}/held"),
        Some(&last.to_string()),
    )
    .await;
    assert_eq!(released.status, StatusCode::OK, "{}", released.text());
    poll_until(&app, &changes, &gadgets, "CRD removed", |r| {
        r.status == StatusCode::NOT_FOUND
    })
    .await;
    stop.cancel();
}
