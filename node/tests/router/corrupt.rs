//! The forced deletion of corrupt objects (KEP-3926): objects whose stored bytes no longer
//! decode, written here straight into the storage the test owns, are reported by get, list
//! and watch naming their key, and removed by a delete with
//! `ignoreStoreReadErrorWithClusterBreakingPotential` under the gate, the options and the
//! permissions Kubernetes requires.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;
use serde_json::json;

use super::rbac::grant_in;
use super::rbac::rule;
use super::rbac::settled;
use super::rbac::user;
use super::watch::Watch;
use super::*;
use apiary_api::auth::rbac::RbacAuthorizer;
use apiary_api::features::FeatureGates;

const NS_CM: &str = "/api/v1/namespaces/a/configmaps";
const OPTION: &str = "ignoreStoreReadErrorWithClusterBreakingPotential";

/// A router with RBAC over a fresh store, the namespace `a`, and
/// `AllowUnsafeMalformedObjectDeletion` set to `gate`.
async fn corrupt_app(gate: bool) -> (Router, Arc<Backend>, Arc<RbacAuthorizer>) {
    let (storage, _) = backend_in(Flavor::Kubernetes).await;
    let rbac = RbacAuthorizer::new(Flavor::Kubernetes, storage.clone());
    let mut config = ApiConfig::new(Flavor::Kubernetes, Arc::new(AlwaysReady));
    config.authorizers.push(rbac.clone());
    let setting = format!("AllowUnsafeMalformedObjectDeletion={gate}");
    config.feature_gates = FeatureGates::parse([setting.as_str()]).expect("gates").0;
    let app = apiary_api::router(storage.clone(), config);
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}});
    created(&app, "/api/v1/namespaces", &ns.to_string()).await;
    (app, storage, rbac)
}

fn key(name: &str) -> String {
    format!("/registry/core/configmaps/a/{name}")
}

/// Creates the ConfigMap `name` in `a` (held by a finalizer when `held`) and then, the test
/// hook, overwrites its stored bytes with bytes that do not decode. Answers the revision of
/// the corrupting write.
async fn corrupt_configmap(app: &Router, storage: &Backend, name: &str, held: bool) -> u64 {
    let finalizers: Vec<&str> = if held {
        vec!["example.com/hold"]
    } else {
        vec![]
    };
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "finalizers": finalizers}, "data": {"a": "1"}});
    created(app, NS_CM, &body.to_string()).await;
    let current = storage
        .get(&key(name), ReadConsistency::Linearizable)
        .await
        .expect("get")
        .expect("created");
    let garbage = Bytes::from_static(b"\xff\xfe\x00 not an object");
    storage
        .update(&key(name), garbage, current.mod_revision)
        .await
        .expect("the hook writes under the key")
        .mod_revision
}

async fn stored(storage: &Backend, name: &str) -> Option<Vec<u8>> {
    storage
        .get(&key(name), ReadConsistency::Linearizable)
        .await
        .expect("get")
        .map(|o| o.value.to_vec())
}

async fn forced_delete(app: &Router, name: &str, query: &str, body: Option<&str>) -> Reply {
    let path = format!("{NS_CM}/{name}?{query}");
    admin_call(app, "DELETE", &path, body).await
}

// R-RES-063, R-RES-064: the normal delete fails on the unreadable object; the forced one
// removes it although a finalizer holds it. Get names the key; list names it among all
// the corrupt keys it met; a watch that meets the removal gets an ERROR event (kube-
// apiserver's watch of a deleted corrupt object) and ends; afterwards the list is whole.
#[tokio::test]
async fn forced_delete_removes_a_corrupt_object_despite_its_finalizer() {
    let (app, storage, _) = corrupt_app(true).await;
    created(
        &app,
        NS_CM,
        &json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "fine"}})
        .to_string(),
    )
    .await;
    corrupt_configmap(&app, &storage, "other", false).await;
    let rev = corrupt_configmap(&app, &storage, "x", true).await;

    let got = admin_call(&app, "GET", &format!("{NS_CM}/x"), None).await;
    let s = assert_status(&got, 500, "InternalError");
    assert!(
        s["message"]
            .as_str()
            .unwrap_or_default()
            .contains(&key("x")),
        "{s}"
    );
    let listed = admin_call(&app, "GET", NS_CM, None).await;
    let s = assert_status(&listed, 500, "StorageReadError");
    assert_eq!(
        s["message"],
        "failed to read one or more configmaps from the storage"
    );
    assert_eq!(s["details"]["name"], "list");
    assert_eq!(s["details"]["kind"], "configmaps");
    let fields: Vec<&str> = s["details"]["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .map(|c| {
            assert_eq!(c["reason"], "UnexpectedServerResponse");
            c["field"].as_str().unwrap_or_default()
        })
        .collect();
    assert_eq!(fields, [key("other"), key("x")]);

    let normal = forced_delete(&app, "x", "", None).await;
    assert_status(&normal, 500, "InternalError");
    let unset = forced_delete(&app, "x", &format!("{OPTION}=false"), None).await;
    assert_status(&unset, 500, "InternalError");
    assert!(stored(&storage, "x").await.is_some());

    let mut watch = Watch::open(&app, &format!("{NS_CM}?watch=1&resourceVersion={rev}")).await;
    let forced = forced_delete(&app, "x", "", Some(&json!({OPTION: true}).to_string())).await;
    assert_eq!(forced.status, StatusCode::OK, "{}", forced.text());
    assert_eq!(
        forced.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": {"name": "x", "kind": "ConfigMap"}, "code": 200})
    );
    assert_eq!(stored(&storage, "x").await, None);
    let events = watch.until_end(Duration::from_secs(5)).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "ERROR");
    assert_eq!(events[0]["object"]["code"], 500);
    let message = events[0]["object"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(&key("x")), "{message}");

    let by_query = forced_delete(&app, "other", &format!("{OPTION}=true"), None).await;
    assert_eq!(by_query.status, StatusCode::OK, "{}", by_query.text());
    let listed = fetched(&app, NS_CM).await;
    let names: Vec<&Value> = listed["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| &i["metadata"]["name"])
        .collect();
    assert_eq!(names, ["fine"]);
}

// R-RES-067: the option with any of dryRun, gracePeriodSeconds, orphanDependents,
// preconditions or propagationPolicy is a 400 and deletes nothing.
#[tokio::test]
async fn forced_delete_with_another_option_is_a_400() {
    let (app, storage, _) = corrupt_app(true).await;
    corrupt_configmap(&app, &storage, "x", false).await;
    let before = stored(&storage, "x").await;
    for (other, field) in [
        (json!({"dryRun": ["All"]}), "dryRun"),
        (json!({"gracePeriodSeconds": 0}), "gracePeriodSeconds"),
        (json!({"orphanDependents": false}), "orphanDependents"),
        (json!({"preconditions": {"uid": "u"}}), "preconditions"),
        (
            json!({"propagationPolicy": "Background"}),
            "propagationPolicy",
        ),
    ] {
        let mut body = other;
        body[OPTION] = true.into();
        let reply = forced_delete(&app, "x", "", Some(&body.to_string())).await;
        let s = assert_status(&reply, 400, "BadRequest");
        let message = s["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(field) && message.contains(OPTION),
            "{message}"
        );
        assert_eq!(stored(&storage, "x").await, before, "{body}");
    }
    let query = format!("{OPTION}=true&dryRun=All");
    assert_status(
        &forced_delete(&app, "x", &query, None).await,
        400,
        "BadRequest",
    );
    // kube-apiserver refuses the option on a deletecollection.
    let collection = admin_call(&app, "DELETE", &format!("{NS_CM}?{OPTION}=true"), None).await;
    let s = assert_status(&collection, 422, "Invalid");
    assert_eq!(s["details"]["causes"][0]["field"], OPTION);
    assert_eq!(stored(&storage, "x").await, before);
}

// R-RES-065: a forced delete needs `delete` and `unsafe-delete-ignore-read-errors`; lacking
// either is a 403 (naming the missing verb) that deletes nothing.
#[tokio::test]
async fn forced_delete_needs_both_permissions() {
    let (app, storage, rbac) = corrupt_app(true).await;
    corrupt_configmap(&app, &storage, "x", false).await;
    let cm = |verbs: &[&str]| vec![rule(&[""], &["configmaps"], verbs)];
    grant_in(&app, "a", "deleter", "carol", cm(&["delete"])).await;
    grant_in(
        &app,
        "a",
        "unsafe",
        "dave",
        cm(&["unsafe-delete-ignore-read-errors"]),
    )
    .await;
    let both = cm(&["delete", "unsafe-delete-ignore-read-errors"]);
    grant_in(&app, "a", "both", "erin", both).await;
    settled(&storage, &rbac).await;
    let path = format!("{NS_CM}/x?{OPTION}=true");
    let as_user = |name: &'static str| call(&app, "DELETE", &path, None, Some(user(name, "dev")));

    let carol = as_user("carol").await;
    let s = assert_status(&carol, 403, "Forbidden");
    let message = s["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(
            r#"configmaps "x" is forbidden: not permitted to do "unsafe-delete-ignore-read-errors""#
        ),
        "{message}"
    );
    let dave = as_user("dave").await;
    let s = assert_status(&dave, 403, "Forbidden");
    let message = s["message"].as_str().unwrap_or_default();
    assert!(message.contains("cannot delete resource"), "{message}");
    assert!(stored(&storage, "x").await.is_some());

    let erin = as_user("erin").await;
    assert_eq!(erin.status, StatusCode::OK, "{}", erin.text());
    assert_eq!(stored(&storage, "x").await, None);
}

// R-RES-066, R-RES-048: with the gate off the option is ignored: the delete is a normal one,
// which fails on the corrupt object and removes a readable one; a list stops at the first
// corrupt object and names it in an internal error.
#[tokio::test]
async fn with_the_gate_off_the_option_is_ignored() {
    let (app, storage, _) = corrupt_app(false).await;
    corrupt_configmap(&app, &storage, "x", false).await;
    let forced = forced_delete(&app, "x", &format!("{OPTION}=true"), None).await;
    assert_status(&forced, 500, "InternalError");
    assert!(stored(&storage, "x").await.is_some());
    let listed = admin_call(&app, "GET", NS_CM, None).await;
    let s = assert_status(&listed, 500, "InternalError");
    assert!(
        s["message"]
            .as_str()
            .unwrap_or_default()
            .contains(&key("x")),
        "{s}"
    );

    created(
        &app,
        NS_CM,
        &json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "fine"}})
        .to_string(),
    )
    .await;
    let body = json!({OPTION: true, "dryRun": ["All"]}).to_string();
    let normal = forced_delete(&app, "fine", "", Some(&body)).await;
    assert_eq!(normal.status, StatusCode::OK, "{}", normal.text());
    assert!(stored(&storage, "fine").await.is_some(), "a dry run");
    let normal = forced_delete(&app, "fine", &format!("{OPTION}=true"), None).await;
    assert_eq!(normal.status, StatusCode::OK, "{}", normal.text());
    assert_eq!(normal.json()["details"]["name"], "fine");
    assert_eq!(stored(&storage, "fine").await, None);
}

// R-RES-068: a forced delete of an object that reads normally (or of none) is refused with
// 422 Invalid on the option, and the object is unchanged.
#[tokio::test]
async fn forced_delete_of_a_readable_object_is_a_422() {
    let (app, storage, _) = corrupt_app(true).await;
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "fine", "finalizers": ["example.com/hold"]}});
    let made = created(&app, NS_CM, &body.to_string()).await;
    let before = stored(&storage, "fine").await;
    let reply = forced_delete(&app, "fine", &format!("{OPTION}=true"), None).await;
    let s = assert_status(&reply, 422, "Invalid");
    assert_eq!(s["details"]["name"], "fine");
    assert_eq!(s["details"]["kind"], "configmaps");
    assert_eq!(s["details"]["causes"][0]["field"], OPTION);
    assert_eq!(
        s["message"],
        format!(
            r#"configmaps "fine" is invalid: {OPTION}: Invalid value: true: is exclusively used to delete corrupt object(s), try again by removing this option"#
        )
    );
    assert_eq!(stored(&storage, "fine").await, before);
    let now = fetched(&app, &format!("{NS_CM}/fine")).await;
    assert_eq!(
        now["metadata"]["resourceVersion"],
        made["metadata"]["resourceVersion"]
    );
    assert!(now["metadata"].get("deletionTimestamp").is_none());

    let absent = forced_delete(&app, "absent", &format!("{OPTION}=true"), None).await;
    assert_status(&absent, 422, "Invalid");
}

// R-RES-063: a watch whose initial state holds a corrupt object reports it as an ERROR event
// naming the key, then ends, rather than leaving the object out.
#[tokio::test]
async fn a_watch_meeting_a_corrupt_object_in_its_initial_state_reports_it() {
    let (app, storage, _) = corrupt_app(true).await;
    corrupt_configmap(&app, &storage, "x", false).await;
    let mut watch = Watch::open(&app, &format!("{NS_CM}?watch=1")).await;
    let events = watch.until_end(Duration::from_secs(5)).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "ERROR");
    assert_eq!(events[0]["object"]["code"], 500);
    let message = events[0]["object"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(&key("x")), "{message}");
}
