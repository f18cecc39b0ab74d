//! PATCH of items and of the status subresource (spec 000 "Patch", R-RES-090, R-RES-114..117,
//! R-RES-198, R-RES-199): each patch type served, the media types refused, the patch step's
//! errors, and the options PATCH shares with the other writes (dryRun, fieldValidation).

use std::sync::atomic::Ordering;

use serde_json::json;

use super::store::Racing;
use super::*;
use apiary_api::patch::PatchType;
use apiary_api::registry::WriteOptions;
use apiary_api::storage::Storage;

pub(super) const JSON_PATCH: &str = "application/json-patch+json";
pub(super) const MERGE_PATCH: &str = "application/merge-patch+json";
const STRATEGIC: &str = "application/strategic-merge-patch+json";
const DEPLOY_PATH: &str = "/apis/apps/v1/namespaces/default/deployments";

/// PATCH `path` with `body` of media type `content_type`, as the admin.
pub(super) async fn patch(app: &Router, path: &str, content_type: &str, body: &str) -> Reply {
    send_as(app, "PATCH", path, content_type, body).await
}

fn rv(obj: &Value) -> &str {
    obj["metadata"]["resourceVersion"].as_str().expect("rv")
}

fn deployment(name: &str) -> String {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "a"}},
          "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [
            {"name": "web", "image": "nginx:1", "env": [{"name": "A", "value": "1"}]},
            {"name": "side", "image": "busybox"},
            {"name": "log", "image": "fluentd"}]}}}})
    .to_string()
}

// R-RES-001, R-RES-090, R-RES-114: a JSON Patch answers the patched object, stored at a new
// resourceVersion.
#[tokio::test]
async fn json_patch_answers_the_patched_object() {
    let (app, _) = app().await;
    let created = created(&app, CM_PATH, &cm("x")).await;
    let ops = r#"[{"op":"add","path":"/data/b","value":"2"},
                  {"op":"add","path":"/metadata/labels","value":{"l":"v"}}]"#;
    let reply = patch(&app, &format!("{CM_PATH}/x"), JSON_PATCH, ops).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let patched = reply.json();
    assert_eq!(patched["data"], json!({"a": "1", "b": "2"}));
    assert_eq!(patched["metadata"]["labels"], json!({"l": "v"}));
    assert_eq!(patched["metadata"]["uid"], created["metadata"]["uid"]);
    assert_ne!(rv(&patched), rv(&created));
    assert_eq!(fetched(&app, &format!("{CM_PATH}/x")).await, patched);
}

// R-RES-115: a failing `test` fails the request with a 422 naming the path that failed, and
// the object is unchanged.
#[tokio::test]
async fn a_failing_json_patch_test_changes_nothing() {
    let (app, _) = app().await;
    let created = created(&app, CM_PATH, &cm("x")).await;
    let ops = r#"[{"op":"replace","path":"/data/a","value":"2"},
                  {"op":"test","path":"/data/a","value":"1"}]"#;
    let reply = patch(&app, &format!("{CM_PATH}/x"), JSON_PATCH, ops).await;
    let s = assert_status(&reply, 422, "Invalid");
    assert_eq!(s["message"], "testing value /data/a failed: test failed");
    assert_eq!(fetched(&app, &format!("{CM_PATH}/x")).await, created);
}

/// The issue's nesting bomb: a 100-deep chain, then seven copies of it into its own leaf.
fn nest_bomb() -> String {
    let chain = (0..100).fold(json!("leaf"), |inner, _| json!({ "a": inner }));
    let mut ops = vec![json!({"op": "add", "path": "/zz", "value": chain})];
    let mut depth = 100;
    for _ in 0..7 {
        ops.push(
            json!({"op": "copy", "from": "/zz", "path": format!("/zz{}", "/a".repeat(depth))}),
        );
        depth *= 2;
    }
    Value::Array(ops).to_string()
}

// A JSON Patch of more than 10,000 operations is 413 in Kubernetes' words before any
// applies; 10,000 are served.
#[tokio::test]
async fn json_patch_operations_are_capped() {
    let (app, _) = app().await;
    let created = created(&app, CM_PATH, &cm("x")).await;
    let path = format!("{CM_PATH}/x");
    let op = json!({"op": "add", "path": "/data/b", "value": "2"});
    let past = Value::Array(vec![op.clone(); 10_001]).to_string();
    let s = assert_status(
        &patch(&app, &path, JSON_PATCH, &past).await,
        413,
        "RequestEntityTooLarge",
    );
    assert_eq!(
        s["message"],
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
    );
    assert_eq!(fetched(&app, &path).await, created);
    let at_limit = Value::Array(vec![op; 10_000]).to_string();
    let reply = patch(&app, &path, JSON_PATCH, &at_limit).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json()["data"]["b"], "2");
}

// The issue's reproducer (a 1 KiB annotation map, then 30 copies of it into itself) is a
// short 422 naming the copy budget; nothing is stored.
#[tokio::test]
async fn json_patch_self_copies_stop_at_the_copy_budget() {
    let (app, _) = app().await;
    let created = created(&app, CM_PATH, &cm("x")).await;
    let path = format!("{CM_PATH}/x");
    let mut ops = vec![json!({"op": "add", "path": "/metadata/annotations",
        "value": {"a": "x".repeat(1000)}})];
    for i in 0..30 {
        ops.push(json!({"op": "copy", "from": "/metadata/annotations",
            "path": format!("/metadata/annotations/c{i}")}));
    }
    let reply = patch(&app, &path, JSON_PATCH, &Value::Array(ops).to_string()).await;
    assert!(reply.body.len() < 64 * 1024, "{} bytes", reply.body.len());
    let s = assert_status(&reply, 422, "Invalid");
    let message = s["message"].as_str().expect("message");
    assert!(
        message.starts_with("Unable to complete the copy")
            && message.ends_with("exceeding the limit 3145728"),
        "{message}"
    );
    assert_eq!(fetched(&app, &path).await, created);
}

// The issue's nesting bomb is a 422 about the nesting depth, dry run or not, and so is a
// merge or strategic merge patch nested past the limit; nothing is stored.
#[tokio::test]
async fn patches_that_nest_too_deep_are_422() {
    let (app, _) = app().await;
    let created = created(&app, CM_PATH, &cm("x")).await;
    let path = format!("{CM_PATH}/x");
    let deep = (0..200).fold(json!("v"), |inner, _| json!({ "a": inner }));
    let too_deep = format!(r#"{{"metadata":{{"annotations":{deep}}}}}"#);
    for (query, ct, body) in [
        ("", JSON_PATCH, nest_bomb()),
        ("?dryRun=All", JSON_PATCH, nest_bomb()),
        ("", MERGE_PATCH, too_deep.clone()),
        ("?dryRun=All", STRATEGIC, too_deep),
    ] {
        let reply = patch(&app, &format!("{path}{query}"), ct, &body).await;
        let s = assert_status(&reply, 422, "Invalid");
        let message = s["message"].as_str().expect("message");
        assert!(message.contains("nesting depth"), "{ct}{query}: {message}");
        assert!(reply.body.len() < 4096, "{} bytes", reply.body.len());
    }
    assert_eq!(fetched(&app, &path).await, created);
}

// R-RES-116: a JSON merge patch merges objects, removes keys set to null, replaces lists.
#[tokio::test]
async fn merge_patch_merges_and_removes() {
    let (app, _) = app().await;
    created(
        &app,
        CM_PATH,
        r#"{"metadata":{"name":"x","labels":{"a":"1","b":"2"}},"data":{"k":"v"}}"#,
    )
    .await;
    let body = r#"{"metadata":{"labels":{"a":null,"c":"3"}},"data":{"k2":"v2"}}"#;
    let reply = patch(&app, &format!("{CM_PATH}/x"), MERGE_PATCH, body).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let patched = reply.json();
    assert_eq!(patched["metadata"]["labels"], json!({"b": "2", "c": "3"}));
    assert_eq!(patched["data"], json!({"k": "v", "k2": "v2"}));
}

// R-RES-117: a strategic merge patch merges containers by name: the patched one changes, the
// others stay; `$patch: delete` removes one and `$setElementOrder` orders the rest; env
// (merge key name) is merged inside the container.
#[tokio::test]
async fn strategic_merge_merges_containers_by_name() {
    let (app, _) = app().await;
    created(&app, DEPLOY_PATH, &deployment("d")).await;
    let body = json!({"spec": {"template": {"spec": {
    "$setElementOrder/containers": [{"name": "side"}, {"name": "web"}],
    "containers": [
        {"name": "web", "image": "nginx:2", "env": [{"name": "B", "value": "2"}],
         "$setElementOrder/env": [{"name": "A"}, {"name": "B"}]},
        {"name": "log", "$patch": "delete"}
    ]}}}})
    .to_string();
    let reply = patch(&app, &format!("{DEPLOY_PATH}/d"), STRATEGIC, &body).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let containers = reply.json()["spec"]["template"]["spec"]["containers"].clone();
    let names: Vec<&str> = containers
        .as_array()
        .expect("list")
        .iter()
        .map(|c| c["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["side", "web"]);
    assert_eq!(containers[0]["image"], "busybox");
    assert_eq!(containers[1]["image"], "nginx:2");
    assert_eq!(
        containers[1]["env"],
        json!([{"name": "A", "value": "1"}, {"name": "B", "value": "2"}])
    );
    assert_eq!(reply.json()["metadata"]["generation"], 2);
}

// R-RES-117: lists without a merge strategy are replaced by a strategic merge patch, as by a
// merge patch (container args are atomic).
#[tokio::test]
async fn strategic_merge_replaces_unmarked_lists() {
    let (app, _) = app().await;
    created(&app, DEPLOY_PATH, &deployment("d")).await;
    let set_args = |args: Value| {
        json!({"spec": {"template": {"spec": {"containers": [{"name": "web", "args": args}]}}}})
            .to_string()
    };
    let path = format!("{DEPLOY_PATH}/d");
    patch(&app, &path, STRATEGIC, &set_args(json!(["a", "b"]))).await;
    let reply = patch(&app, &path, STRATEGIC, &set_args(json!(["c"]))).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let web = reply.json()["spec"]["template"]["spec"]["containers"][0].clone();
    assert_eq!(web["args"], json!(["c"]));
    assert_eq!(web["image"], "nginx:1");
}

// R-RES-198: a patch without resourceVersion applies to the current object; R-RES-199: one
// that sets a stale resourceVersion is a 409 Conflict and changes nothing.
#[tokio::test]
async fn a_stale_resource_version_in_a_patch_is_a_conflict() {
    let (app, _) = app().await;
    let created = created(&app, CM_PATH, &cm("x")).await;
    let path = format!("{CM_PATH}/x");
    let first = patch(&app, &path, MERGE_PATCH, r#"{"data":{"a":"2"}}"#).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.text());
    let stale = json!({"metadata": {"resourceVersion": rv(&created)}, "data": {"a": "3"}});
    let reply = patch(&app, &path, MERGE_PATCH, &stale.to_string()).await;
    let s = assert_status(&reply, 409, "Conflict");
    assert_eq!(
        s["message"],
        "Operation cannot be fulfilled on configmaps \"x\": the object has been modified; please apply your changes to the latest version and try again"
    );
    let current = json!({"metadata": {"resourceVersion": rv(&first.json())}, "data": {"a": "4"}});
    let reply = patch(&app, &path, MERGE_PATCH, &current.to_string()).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json()["data"]["a"], "4");
}

// R-RES-090: patching an object that does not exist is 404 (PATCH does not create).
#[tokio::test]
async fn patching_a_missing_object_is_404() {
    let (app, _) = app().await;
    for ct in [JSON_PATCH, MERGE_PATCH, STRATEGIC] {
        let body = if ct == JSON_PATCH { "[]" } else { "{}" };
        let reply = patch(&app, &format!("{CM_PATH}/nope"), ct, body).await;
        let s = assert_status(&reply, 404, "NotFound");
        assert_eq!(s["message"], "configmaps \"nope\" not found");
    }
}

// R-RES-111 (apply is among the types served), R-RES-130 (no CBOR patches):
// other media types are 415 listing the patch types served, before the options are read.
#[tokio::test]
async fn other_patch_media_types_are_415() {
    let (app, _) = app().await;
    created(&app, CM_PATH, &cm("x")).await;
    for ct in [
        "application/apply-patch+cbor",
        "application/json",
        "application/cbor",
    ] {
        let path = format!("{CM_PATH}/x?dryRun=Bogus");
        let reply = patch(&app, &path, ct, "{}").await;
        let s = assert_status(&reply, 415, "UnsupportedMediaType");
        assert_eq!(
            s["message"],
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml",
            "{ct}"
        );
    }
}

// Bodies that are not a patch of their type are 400 in upstream's words.
#[tokio::test]
async fn malformed_patches_are_400() {
    let (app, _) = app().await;
    created(&app, CM_PATH, &cm("x")).await;
    let path = format!("{CM_PATH}/x");
    for (ct, body, message) in [
        (MERGE_PATCH, "{", Some("Invalid JSON Patch")),
        (MERGE_PATCH, "3", Some("Invalid JSON Patch")),
        (
            STRATEGIC,
            "[1]",
            Some("json: cannot unmarshal array into Go value of type map[string]interface {}"),
        ),
        (JSON_PATCH, r#"{"op":"add"}"#, None),
    ] {
        let s = assert_status(&patch(&app, &path, ct, body).await, 400, "BadRequest");
        if let Some(message) = message {
            assert_eq!(s["message"], message, "{ct} {body}");
        }
    }
}

// R-RES-105, R-RES-192..194: a dry-run patch answers the patched object with the current
// resourceVersion, stores nothing and a watch sees no event.
#[tokio::test]
async fn dry_run_patch_changes_nothing() {
    let (app, storage) = app().await;
    let created = created(&app, CM_PATH, &cm("x")).await;
    let before = snapshot(&storage).await;
    let mut watch = storage
        .watch("/registry/", storage.revision().await)
        .await
        .expect("watch");
    let path = format!("{CM_PATH}/x?dryRun=All");
    for (ct, body) in [
        (MERGE_PATCH, r#"{"data":{"a":"2"}}"#),
        (
            JSON_PATCH,
            r#"[{"op":"replace","path":"/data/a","value":"2"}]"#,
        ),
        (STRATEGIC, r#"{"data":{"a":"2"}}"#),
    ] {
        let reply = patch(&app, &path, ct, body).await;
        assert_eq!(reply.status, StatusCode::OK, "{ct}: {}", reply.text());
        assert_eq!(reply.json()["data"]["a"], "2");
        assert_eq!(rv(&reply.json()), rv(&created));
    }
    assert_eq!(snapshot(&storage).await, before);
    real_create_is_next_event(&app, watch.as_mut()).await;
}

// R-RES-051, R-RES-105: a bad dryRun is 422 on PatchOptions.
#[tokio::test]
async fn bad_patch_options_are_422_on_patch_options() {
    let (app, _) = app().await;
    created(&app, CM_PATH, &cm("x")).await;
    let reply = patch(
        &app,
        &format!("{CM_PATH}/x?dryRun=Bogus"),
        MERGE_PATCH,
        "{}",
    )
    .await;
    let s = assert_status(&reply, 422, "Invalid");
    assert_eq!(s["details"]["kind"], "PatchOptions");
}

// R-RES-106: fieldValidation applies to the patched object: Warn (the default) answers one
// Warning per unknown field, Ignore none, Strict a 422 on `patch` and nothing is stored.
#[tokio::test]
async fn field_validation_judges_the_patched_object() {
    let (app, _) = app().await;
    let created = created(&app, CM_PATH, &cm("x")).await;
    let body = r#"{"data":{"a":"2"},"bogus":1}"#;
    let warn = patch(&app, &format!("{CM_PATH}/x"), MERGE_PATCH, body).await;
    assert_eq!(warn.status, StatusCode::OK, "{}", warn.text());
    let warnings: Vec<&[u8]> = warn
        .headers
        .get_all(http::header::WARNING)
        .iter()
        .map(|v| v.as_bytes())
        .collect();
    assert_eq!(warnings, [&br#"299 - "unknown field \"bogus\"""#[..]]);
    assert!(warn.json().get("bogus").is_none());

    let ignore = patch(
        &app,
        &format!("{CM_PATH}/x?fieldValidation=Ignore"),
        MERGE_PATCH,
        body,
    )
    .await;
    assert_eq!(ignore.status, StatusCode::OK);
    assert!(ignore.headers.get(http::header::WARNING).is_none());

    let before = fetched(&app, &format!("{CM_PATH}/x")).await;
    let strict = patch(
        &app,
        &format!("{CM_PATH}/x?fieldValidation=Strict"),
        MERGE_PATCH,
        r#"{"data":{"a":"9"},"bogus":1}"#,
    )
    .await;
    let s = assert_status(&strict, 422, "Invalid");
    let cause = &s["details"]["causes"][0];
    assert_eq!(cause["field"], "patch");
    let message = cause["message"].as_str().expect("message");
    assert!(
        message.ends_with(r#"strict decoding error: unknown field "bogus""#),
        "{message}"
    );
    assert_eq!(fetched(&app, &format!("{CM_PATH}/x")).await, before);
    assert_ne!(rv(&before), rv(&created));
}

// R-RES-090 on the status subresource: a patch of /status changes only status; a patch of
// the object leaves status as it was.
#[tokio::test]
async fn status_patches_change_only_status() {
    let (app, _) = app().await;
    let created = created(&app, DEPLOY_PATH, &deployment("d")).await;
    let both = r#"{"spec":{"replicas":5},"status":{"replicas":3}}"#;
    let status = patch(&app, &format!("{DEPLOY_PATH}/d/status"), MERGE_PATCH, both).await;
    assert_eq!(status.status, StatusCode::OK, "{}", status.text());
    let s = status.json();
    assert_eq!(s["status"]["replicas"], 3);
    assert_eq!(s["spec"]["replicas"], 1);
    assert_eq!(
        s["metadata"]["generation"],
        created["metadata"]["generation"]
    );

    let main = patch(&app, &format!("{DEPLOY_PATH}/d"), MERGE_PATCH, both).await;
    assert_eq!(main.status, StatusCode::OK, "{}", main.text());
    let m = main.json();
    assert_eq!(m["spec"]["replicas"], 5);
    assert_eq!(m["status"]["replicas"], 3);
}

// R-RES-198: a patch without resourceVersion that loses the compare-and-swap is applied
// again to the current object (as upstream's guaranteed update retries).
#[tokio::test]
async fn a_patch_that_loses_a_race_is_applied_again() {
    let storage = Racing {
        inner: empty_backend(),
        lost_creates: 0.into(),
        lost_updates: 0.into(),
    };
    let registry = apiary_api::registry::Registry::builtin(Flavor::Kubernetes);
    let store = registry.namespaces().expect("namespaces");
    let body = json!({"metadata": {"name": "n"}}).to_string();
    let now = chrono::Utc::now();
    let created = store
        .create(&storage, "", body.as_bytes(), now, WriteOptions::default())
        .await
        .expect("create");
    let created: Value = serde_json::from_slice(&created.body).expect("json");
    let merge = |body: Value| body.to_string().into_bytes();
    storage.lost_updates.store(2, Ordering::SeqCst);
    let blind = merge(json!({"metadata": {"labels": {"a": "1"}}}));
    let target = ("", "n", "");
    let patched = store
        .patch(
            &storage,
            target,
            PatchType::Merge,
            &blind,
            WriteOptions::default(),
        )
        .await
        .expect("applied again");
    let patched: Value = serde_json::from_slice(&patched.body).expect("json");
    assert_eq!(patched["metadata"]["labels"]["a"], "1");
    assert_ne!(rv(&created), rv(&patched));
}
