//! Server-side apply and the managedFields of every write, through the router (spec 000
//! "Server-side apply", "Managed field entry"): create and patch by apply, its media type and
//! options (415, 422, 400), the `create` permission of a create, ownership conflicts, force,
//! sharing and removal, the status subresource, dry run, the Update entries of PUT and
//! non-apply patches with the manager inferred from the User-Agent, the `[{}]` reset, and the
//! resourceVersion precondition.

use serde_json::json;

use super::patch::JSON_PATCH;
use super::patch::MERGE_PATCH;
use super::*;

const APPLY: &str = "application/apply-patch+yaml";

/// `method path` with `body` of media type `content_type` as `who`, with the `User-Agent`
/// `agent` when given.
async fn request(
    app: &Router,
    method: &str,
    path: &str,
    content_type: &str,
    body: &str,
    agent: Option<&str>,
    who: ClientCertificate,
) -> Reply {
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", content_type);
    if let Some(agent) = agent {
        req = req.header("user-agent", agent);
    }
    let mut req = req.body(Body::from(body.to_owned())).expect("request");
    req.extensions_mut().insert(who);
    send(app, req).await
}

/// Applies `body` to `path` as the admin with the query `query`.
async fn apply(app: &Router, path: &str, query: &str, body: &str) -> Reply {
    let uri = format!("{path}?{query}");
    request(app, "PATCH", &uri, APPLY, body, None, admin()).await
}

/// The ConfigMap `x` configuration with `data`.
fn cm_config(data: Value) -> String {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": data})
        .to_string()
}

/// The managedFields entries of `obj` as (manager, operation, subresource) triples, sorted
/// (the entries' own order follows their times, which may tie).
fn managers(obj: &Value) -> Vec<(String, String, String)> {
    let entries = obj["metadata"]["managedFields"].as_array().cloned();
    let mut triples: Vec<_> = entries
        .unwrap_or_default()
        .iter()
        .map(|e| {
            let text = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
            (text("manager"), text("operation"), text("subresource"))
        })
        .collect();
    triples.sort();
    triples
}

/// The entry of `manager` with `operation` in `obj`'s managedFields.
fn entry<'a>(obj: &'a Value, manager: &str, operation: &str) -> &'a Value {
    obj["metadata"]["managedFields"]
        .as_array()
        .and_then(|all| {
            all.iter()
                .find(|e| e["manager"] == manager && e["operation"] == operation)
        })
        .unwrap_or_else(|| panic!("no {manager} {operation} entry: {obj}"))
}

fn triple(manager: &str, operation: &str, subresource: &str) -> (String, String, String) {
    (manager.into(), operation.into(), subresource.into())
}

const X: &str = "/api/v1/namespaces/default/configmaps/x";

// R-RES-111, R-RES-112, R-RES-200, R-RES-203, R-RES-029, R-RES-042..047: an apply of an
// absent object creates it (201), and its Apply entry lists the fields applied, as
// kube-apiserver writes it (no apiVersion-less form: Apply entries carry the apiVersion
// applied).
#[tokio::test]
async fn an_apply_creates_an_absent_object() {
    for flavor in [Flavor::Kubernetes, Flavor::Platform] {
        let (app, _) = app_in(flavor).await;
        let reply = apply(&app, X, "fieldManager=tool", &cm_config(json!({"a": "1"}))).await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
        let obj = reply.json();
        assert_eq!(obj["data"], json!({"a": "1"}));
        assert!(obj["metadata"]["uid"].is_string(), "{obj}");
        assert_eq!(managers(&obj), [triple("tool", "Apply", "")]);
        let e = entry(&obj, "tool", "Apply");
        assert_eq!(e["apiVersion"], "v1");
        assert_eq!(e["fieldsType"], "FieldsV1");
        assert!(e["time"].as_str().is_some_and(|t| t.ends_with('Z')), "{e}");
        assert_eq!(e["fieldsV1"], json!({"f:data": {"f:a": {}}}));
        assert_eq!(fetched(&app, X).await, obj);
    }
}

// R-RES-111, R-RES-113: a YAML configuration patches the existing object (200), and a
// JSON one is YAML too.
#[tokio::test]
async fn an_apply_patches_an_existing_object_in_yaml_or_json() {
    let (app, _) = app().await;
    let created = created(&app, CM_PATH, &cm("x")).await;
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  b: \"2\"\n";
    let reply = apply(&app, X, "fieldManager=tool", yaml).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let obj = reply.json();
    assert_eq!(obj["data"], json!({"a": "1", "b": "2"}));
    assert_eq!(obj["metadata"]["uid"], created["metadata"]["uid"]);
    let reply = apply(&app, X, "fieldManager=tool", &cm_config(json!({"b": "3"}))).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json()["data"], json!({"a": "1", "b": "3"}));
}

// R-RES-111: the 415 of an unknown patch media type lists apply's among those served.
#[tokio::test]
async fn the_415_lists_apply() {
    let (app, _) = app().await;
    created(&app, CM_PATH, &cm("x")).await;
    let reply = request(&app, "PATCH", X, "application/json", "{}", None, admin()).await;
    let s = assert_status(&reply, 415, "UnsupportedMediaType");
    assert!(
        s["message"]
            .as_str()
            .is_some_and(|m| m
                .ends_with("application/strategic-merge-patch+json, application/apply-patch+yaml")),
        "{s}"
    );
}

// R-RES-201, R-RES-202: an apply without `fieldManager` is a 422 on PatchOptions, `force`
// on another patch type too, and a configuration with managedFields is a 400; none writes.
#[tokio::test]
async fn apply_options_and_bodies_are_checked() {
    let (app, storage) = app().await;
    let before = storage.revision().await;
    let reply = apply(&app, X, "", &cm_config(json!({"a": "1"}))).await;
    let s = assert_status(&reply, 422, "Invalid");
    assert_eq!(s["details"]["kind"], "PatchOptions");
    assert_eq!(
        s["details"]["causes"][0],
        json!({"reason": "FieldValueRequired", "message": "Required value: is required for apply patch", "field": "fieldManager"})
    );
    let reply = request(
        &app,
        "PATCH",
        &format!("{X}?force=true"),
        MERGE_PATCH,
        "{}",
        None,
        admin(),
    )
    .await;
    let s = assert_status(&reply, 422, "Invalid");
    assert_eq!(s["details"]["causes"][0]["field"], "force");
    let long = "m".repeat(129);
    let reply = apply(
        &app,
        X,
        &format!("fieldManager={long}"),
        &cm_config(json!({})),
    )
    .await;
    assert_status(&reply, 422, "Invalid");
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "x", "managedFields": [{"manager": "m"}]}});
    let reply = apply(&app, X, "fieldManager=tool", &body.to_string()).await;
    let s = assert_status(&reply, 400, "BadRequest");
    assert_eq!(s["message"], "metadata.managedFields must be nil");
    let other = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "y"}});
    let reply = apply(&app, X, "fieldManager=tool", &other.to_string()).await;
    assert_status(&reply, 400, "BadRequest");
    assert_eq!(storage.revision().await, before);
}

// R-RES-213, R-RES-214: an apply that creates needs `create` besides `patch` (403 worded for
// `create`); with only `patch`, an apply to an existing object succeeds.
#[tokio::test]
async fn an_apply_that_creates_needs_create() {
    use super::rbac::{grant_in, rbac_app, rule, settled, user};
    let (app, storage, rbac) = rbac_app().await;
    grant_in(
        &app,
        "a",
        "patcher",
        "pat",
        vec![rule(&[""], &["configmaps"], &["patch"])],
    )
    .await;
    settled(&storage, &rbac).await;
    let path = "/api/v1/namespaces/a/configmaps/x";
    let body = cm_config(json!({"a": "1"}));
    let uri = format!("{path}?fieldManager=pat");
    let reply = request(&app, "PATCH", &uri, APPLY, &body, None, user("pat", "dev")).await;
    let s = assert_status(&reply, 403, "Forbidden");
    assert_eq!(
        s["message"],
        r#"configmaps "x" is forbidden: User "pat" cannot create resource "configmaps" in API group "" in the namespace "a""#
    );
    created(&app, "/api/v1/namespaces/a/configmaps", &cm("x")).await;
    let reply = request(&app, "PATCH", &uri, APPLY, &body, None, user("pat", "dev")).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    grant_in(
        &app,
        "a",
        "creator",
        "pat",
        vec![rule(&[""], &["configmaps"], &["create"])],
    )
    .await;
    settled(&storage, &rbac).await;
    let uri = "/api/v1/namespaces/a/configmaps/z?fieldManager=pat";
    let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "z"}});
    let reply = request(
        &app,
        "PATCH",
        uri,
        APPLY,
        &body.to_string(),
        None,
        user("pat", "dev"),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
}

// R-RES-204, R-RES-237: a field owned by another manager, applied with another value, is a
// 409 with one FieldManagerConflict cause per field, and nothing changes; R-RES-206: with
// `force=true` the value is set and the other manager loses the field.
#[tokio::test]
async fn conflicts_and_force() {
    let (app, _) = app().await;
    apply(
        &app,
        X,
        "fieldManager=one",
        &cm_config(json!({"a": "1", "b": "1"})),
    )
    .await;
    let before = fetched(&app, X).await;
    let reply = apply(
        &app,
        X,
        "fieldManager=two",
        &cm_config(json!({"a": "2", "b": "2"})),
    )
    .await;
    let s = assert_status(&reply, 409, "Conflict");
    assert_eq!(
        s["message"],
        "Apply failed with 2 conflicts: conflicts with \"one\":\n- .data.a\n- .data.b"
    );
    assert_eq!(
        s["details"]["causes"],
        json!([
            {"reason": "FieldManagerConflict", "message": "conflict with \"one\"", "field": ".data.a"},
            {"reason": "FieldManagerConflict", "message": "conflict with \"one\"", "field": ".data.b"},
        ])
    );
    assert_eq!(fetched(&app, X).await, before);
    let reply = apply(
        &app,
        X,
        "fieldManager=two&force=true",
        &cm_config(json!({"a": "2"})),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let obj = reply.json();
    assert_eq!(obj["data"], json!({"a": "2", "b": "1"}));
    assert_eq!(
        entry(&obj, "one", "Apply")["fieldsV1"],
        json!({"f:data": {"f:b": {}}})
    );
    assert_eq!(
        entry(&obj, "two", "Apply")["fieldsV1"],
        json!({"f:data": {"f:a": {}}})
    );
}

// R-RES-208, R-RES-209: applying the value held shares the field; a later change by one
// sharer conflicts. R-RES-207, R-RES-211: the other sharer then omits it: no conflict, and the
// value stays with its remaining owner. R-RES-210: a field omitted by its only owner is
// removed.
#[tokio::test]
async fn sharing_and_removal() {
    let (app, _) = app().await;
    apply(
        &app,
        X,
        "fieldManager=one",
        &cm_config(json!({"a": "1", "b": "1"})),
    )
    .await;
    let reply = apply(&app, X, "fieldManager=two", &cm_config(json!({"a": "1"}))).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let obj = reply.json();
    assert_eq!(
        entry(&obj, "two", "Apply")["fieldsV1"],
        json!({"f:data": {"f:a": {}}})
    );
    assert_eq!(
        entry(&obj, "one", "Apply")["fieldsV1"],
        json!({"f:data": {"f:a": {}, "f:b": {}}})
    );
    let reply = apply(&app, X, "fieldManager=two", &cm_config(json!({"a": "2"}))).await;
    assert_status(&reply, 409, "Conflict");
    let reply = apply(&app, X, "fieldManager=two", &cm_config(json!({}))).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json()["data"], json!({"a": "1", "b": "1"}));
    let reply = apply(&app, X, "fieldManager=one", &cm_config(json!({"a": "1"}))).await;
    assert_eq!(reply.json()["data"], json!({"a": "1"}));
}

const NS: &str = "/api/v1/namespaces/n";

// R-RES-203: an apply to the status subresource changes only the status and records its
// Apply entry with `subresource: status`; an apply to an absent object's status is a 404.
#[tokio::test]
async fn status_is_applied_through_its_subresource() {
    let (app, _) = app().await;
    let status = format!("{NS}/status");
    let condition = json!({"type": "NamespaceDeletionDiscoveryFailure", "status": "False"});
    let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"},
        "status": {"conditions": [condition]}})
    .to_string();
    let reply = apply(&app, &status, "fieldManager=ctl", &body).await;
    assert_status(&reply, 404, "NotFound");
    let labelled = json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "n", "labels": {"team": "a"}}});
    let reply = apply(&app, NS, "fieldManager=user", &labelled.to_string()).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
    let reply = apply(&app, &status, "fieldManager=ctl", &body).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let obj = reply.json();
    assert_eq!(obj["status"]["conditions"][0]["type"], condition["type"]);
    assert_eq!(obj["metadata"]["labels"]["team"], "a");
    assert_eq!(
        managers(&obj),
        [
            triple("ctl", "Apply", "status"),
            triple("user", "Apply", "")
        ]
    );
    assert_eq!(
        entry(&obj, "ctl", "Apply")["subresource"],
        "status",
        "{obj}"
    );
}

// R-RES-192, R-RES-193: a dry-run apply answers what it would store, and stores nothing,
// whether it creates or patches.
#[tokio::test]
async fn a_dry_run_apply_stores_nothing() {
    let (app, storage) = app().await;
    let before = storage.revision().await;
    let reply = apply(
        &app,
        X,
        "fieldManager=t&dryRun=All",
        &cm_config(json!({"a": "1"})),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
    assert_eq!(reply.json()["data"], json!({"a": "1"}));
    assert_eq!(storage.revision().await, before);
    apply(&app, X, "fieldManager=t", &cm_config(json!({"a": "1"}))).await;
    let stored = fetched(&app, X).await;
    let reply = apply(
        &app,
        X,
        "fieldManager=t&dryRun=All",
        &cm_config(json!({"a": "2"})),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json()["data"], json!({"a": "2"}));
    assert_eq!(fetched(&app, X).await, stored);
}

// R-RES-185..187 on the applied object: unknown fields warn by default and are a 400 under
// Strict, as for any body.
#[tokio::test]
async fn field_validation_judges_the_configuration() {
    let (app, _) = app().await;
    let body =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "bogus": 1});
    let reply = apply(
        &app,
        X,
        "fieldManager=t&fieldValidation=Strict",
        &body.to_string(),
    )
    .await;
    assert_status(&reply, 400, "BadRequest");
    let reply = apply(&app, X, "fieldManager=t", &body.to_string()).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
    assert_eq!(warnings(&reply), [r#"299 - "unknown field \"bogus\"""#]);
}

// R-RES-205, R-RES-212, R-RES-029: POST, PUT, merge patch and JSON patch record Update
// entries for the manager from `fieldManager`, else the User-Agent's leading token; the
// update never conflicts with an Apply owner, and takes the fields it changed.
#[tokio::test]
async fn updates_record_their_managers() {
    let (app, _) = app().await;
    let kubectl = Some("kubectl/v1.31.0 (linux/amd64) kubernetes/abc");
    let reply = request(
        &app,
        "POST",
        CM_PATH,
        "application/json",
        &cm("x"),
        kubectl,
        admin(),
    )
    .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
    assert_eq!(managers(&reply.json()), [triple("kubectl", "Update", "")]);
    apply(&app, X, "fieldManager=ssa", &cm_config(json!({"b": "1"}))).await;
    let body = json!({"data": {"b": "2"}}).to_string();
    let reply = request(
        &app,
        "PATCH",
        X,
        MERGE_PATCH,
        &body,
        Some("Go-http-client/1.1"),
        admin(),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let obj = reply.json();
    assert_eq!(obj["data"]["b"], "2");
    assert_eq!(
        entry(&obj, "Go-http-client", "Update")["fieldsV1"],
        json!({"f:data": {"f:b": {}}})
    );
    let ops = r#"[{"op":"add","path":"/data/c","value":"3"}]"#;
    let uri = format!("{X}?fieldManager=patcher");
    let reply = request(&app, "PATCH", &uri, JSON_PATCH, ops, kubectl, admin()).await;
    assert!(managers(&reply.json()).contains(&triple("patcher", "Update", "")));
    let mut obj = fetched(&app, X).await;
    obj["data"]["d"] = json!("4");
    let reply = request(
        &app,
        "PUT",
        X,
        "application/json",
        &obj.to_string(),
        Some("putter/2"),
        admin(),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert!(managers(&reply.json()).contains(&triple("putter", "Update", "")));
}

// R-RES-224, R-RES-226: `[{}]` through a merge patch or a JSON patch replace strips the
// managed fields first, and the writer owns what it changed in the same request; R-RES-225:
// an empty list resets nothing.
#[tokio::test]
async fn a_single_empty_entry_resets_managed_fields() {
    let (app, _) = app().await;
    apply(&app, X, "fieldManager=one", &cm_config(json!({"a": "1"}))).await;
    let body = json!({"metadata": {"managedFields": []}}).to_string();
    let reply = request(&app, "PATCH", X, MERGE_PATCH, &body, None, admin()).await;
    assert_eq!(managers(&reply.json()), [triple("one", "Apply", "")]);
    let body = json!({"metadata": {"managedFields": [{}]}, "data": {"b": "2"}}).to_string();
    let uri = format!("{X}?fieldManager=resetter");
    let reply = request(&app, "PATCH", &uri, MERGE_PATCH, &body, None, admin()).await;
    let obj = reply.json();
    assert_eq!(managers(&obj), [triple("resetter", "Update", "")], "{obj}");
    assert_eq!(
        entry(&obj, "resetter", "Update")["fieldsV1"],
        json!({"f:data": {"f:b": {}}})
    );
    apply(&app, X, "fieldManager=one", &cm_config(json!({"a": "1"}))).await;
    let ops = r#"[{"op":"replace","path":"/metadata/managedFields","value":[{}]}]"#;
    let reply = request(&app, "PATCH", X, JSON_PATCH, ops, None, admin()).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert!(
        reply.json()["metadata"].get("managedFields").is_none(),
        "{}",
        reply.text()
    );
}

// R-RES-204 (concurrency): a resourceVersion in the configuration is a precondition: a stale
// one is a 409, the current one applies.
#[tokio::test]
async fn a_resource_version_in_the_configuration_is_a_precondition() {
    let (app, _) = app().await;
    let first = apply(&app, X, "fieldManager=t", &cm_config(json!({"a": "1"})))
        .await
        .json();
    let rv = first["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_owned();
    apply(&app, X, "fieldManager=t", &cm_config(json!({"a": "2"}))).await;
    let stale = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "x", "resourceVersion": rv}, "data": {"a": "3"}});
    let reply = apply(&app, X, "fieldManager=t", &stale.to_string()).await;
    assert_status(&reply, 409, "Conflict");
    let now = fetched(&app, X).await["metadata"]["resourceVersion"].clone();
    let fresh = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "x", "resourceVersion": now}, "data": {"a": "3"}});
    let reply = apply(&app, X, "fieldManager=t", &fresh.to_string()).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json()["data"]["a"], "3");
}

const RC: &str = "/api/v1/namespaces/default/replicationcontrollers/r";

/// A ReplicationController configuration named `r`, with `replicas` when given.
fn rc_config(replicas: Option<u32>) -> String {
    let mut body = json!({"apiVersion": "v1", "kind": "ReplicationController",
        "metadata": {"name": "r"}, "spec": {"selector": {"app": "a"},
          "template": {"metadata": {"labels": {"app": "a"}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1"}]}}}});
    if let Some(replicas) = replicas {
        body["spec"]["replicas"] = json!(replicas);
    }
    body.to_string()
}

// R-RES-111, R-RES-204 on the scale subresource: an apply of a Scale applies its replicas to
// the parent, owned with `subresource: scale`; the parent's applier then conflicts on them.
#[tokio::test]
async fn scale_is_applied_through_its_subresource() {
    let (app, _) = app().await;
    let reply = apply(&app, RC, "fieldManager=user", &rc_config(None)).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
    let body = json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "r"},
        "spec": {"replicas": 4}});
    let reply = apply(
        &app,
        &format!("{RC}/scale"),
        "fieldManager=hpa",
        &body.to_string(),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let scale = reply.json();
    assert_eq!(
        (&scale["kind"], &scale["spec"]["replicas"]),
        (&json!("Scale"), &json!(4))
    );
    let rc = fetched(&app, RC).await;
    assert_eq!(rc["spec"]["replicas"], 4);
    assert_eq!(entry(&rc, "hpa", "Apply")["subresource"], "scale", "{rc}");
    let reply = apply(&app, RC, "fieldManager=user", &rc_config(Some(2))).await;
    let s = assert_status(&reply, 409, "Conflict");
    assert_eq!(s["details"]["causes"][0]["field"], ".spec.replicas");
}

// An apply without a resourceVersion that loses a race (a create finding the name taken, an
// update finding the object moved on) reads again and applies again: no lost update.
#[tokio::test]
async fn an_apply_that_loses_a_race_is_applied_again() {
    use std::sync::atomic::Ordering;

    use apiary_api::registry::WriteManager;
    use apiary_api::registry::WriteOptions;
    use apiary_api::request::RequestInfo;
    use apiary_api::request::Verb;

    use super::store::Racing;

    let storage = Racing {
        inner: empty_backend(),
        lost_creates: 1.into(),
        lost_updates: 0.into(),
    };
    let registry = apiary_api::registry::Registry::builtin(Flavor::Kubernetes);
    let store = registry.namespaces().expect("namespaces");
    let write = |manager: &str| WriteOptions {
        manager: Some(WriteManager {
            name: manager.to_owned(),
            now: chrono::Utc::now(),
        }),
        ..WriteOptions::default()
    };
    let request = RequestInfo::non_resource("/api/v1/namespaces/n", Verb::Patch);
    let config = |labels: Value| {
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n", "labels": labels}})
            .to_string()
    };
    let target = ("", "n", "");
    let first = config(json!({"a": "1"}));
    let created = store
        .apply(&storage, target, first.as_bytes(), write("one"), &request)
        .await
        .expect("created on the second attempt");
    assert!(created.created);
    storage.lost_updates.store(2, Ordering::SeqCst);
    let second = config(json!({"b": "2"}));
    let applied = store
        .apply(&storage, target, second.as_bytes(), write("two"), &request)
        .await
        .expect("applied on the third attempt");
    let obj: Value = serde_json::from_slice(&applied.written.body).expect("json");
    assert_eq!(obj["metadata"]["labels"]["a"], "1");
    assert_eq!(obj["metadata"]["labels"]["b"], "2");
    assert_eq!(
        managers(&obj),
        [triple("one", "Apply", ""), triple("two", "Apply", "")]
    );
}
