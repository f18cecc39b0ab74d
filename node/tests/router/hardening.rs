//! Hostile numbers and sizes through the whole router (issue 11): request-supplied numbers
//! (timeouts, page sizes, resource versions, continue tokens, grace periods) saturate or are a
//! 400 naming the parameter, never a panic; an object larger than `--max-object-bytes` is a
//! 413 for every kind of write and nothing is stored; error answers repeat only an excerpt of
//! what the request sent.

use std::sync::Arc;

use axum::Router;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;

use super::AlwaysReady;
use super::Backend;
use super::CM_PATH;
use super::Inspect;
use super::Reply;
use super::admin_call;
use super::app;
use super::assert_status;
use super::backend_in;
use super::cm;
use super::created;
use super::fetched;
use super::send_as;
use super::snapshot;
use super::watch::PATIENCE;
use super::watch::Watch;
use apiary_api::ApiConfig;
use apiary_api::error::TRUNCATED_MARK;
use apiary_api::flavor::Flavor;
use apiary_api::storage::ReadConsistency;
use apiary_api::storage::Storage;

const DEPLOY_PATH: &str = "/apis/apps/v1/namespaces/default/deployments";
/// `i64::MAX`, the largest `timeoutSeconds` or `limit` Kubernetes decodes.
const I64_MAX: &str = "9223372036854775807";
/// One more than `i64::MAX`: does not decode.
const I64_OVERFLOW: &str = "9223372036854775808";
/// `u64::MAX`, the largest resource version.
const U64_MAX: &str = "18446744073709551615";
/// One more than `u64::MAX`: not a resource version.
const U64_OVERFLOW: &str = "18446744073709551616";
/// The largest answer an error may be here, however large the request.
const SMALL_ANSWER: usize = 8 * 1024;

/// A router whose stores take objects of at most `max_object_bytes` stored bytes.
async fn app_limited(max_object_bytes: usize) -> (Router, Arc<Backend>) {
    let (storage, _) = backend_in(Flavor::Kubernetes).await;
    let mut config = ApiConfig::new(Flavor::Kubernetes, Arc::new(AlwaysReady));
    config.max_object_bytes = max_object_bytes;
    (apiary_api::router(storage.clone(), config), storage)
}

/// Asserts `reply` is a 400 whose message names `parameter` and is small.
fn bad_parameter(reply: &Reply, parameter: &str) {
    let s = assert_status(reply, 400, "BadRequest");
    let message = s["message"].as_str().expect("message");
    assert!(message.contains(parameter), "{message}");
    assert!(
        reply.body.len() < SMALL_ANSWER,
        "{} bytes",
        reply.body.len()
    );
}

/// Asserts `reply` is the 413 of an object larger than `limit` stored bytes.
fn too_large(reply: &Reply, limit: usize) {
    let s = assert_status(reply, 413, "RequestEntityTooLarge");
    let message = s["message"].as_str().expect("message");
    assert!(message.starts_with("request is too large: "), "{message}");
    assert!(
        message.ends_with(&format!(
            "bytes, more than the {limit} bytes a stored object may have"
        )),
        "{message}"
    );
}

/// A ConfigMap `name` whose value `a` is `value`.
fn cm_with(name: &str, value: &str) -> String {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
           "data": {"a": value}})
    .to_string()
}

/// A Deployment `name` with `containers`.
fn deployment(name: &str, containers: Vec<Value>) -> String {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
           "spec": {"selector": {"matchLabels": {"app": "a"}},
                    "template": {"metadata": {"labels": {"app": "a"}},
                                 "spec": {"containers": containers}}}})
    .to_string()
}

#[tokio::test]
async fn watch_timeouts_saturate_end_at_once_or_are_refused() {
    let (app, storage) = app().await;
    created(&app, CM_PATH, &cm("a")).await;
    // The largest timeout (Kubernetes accepts it) and zero (the server's default) both give a
    // watch that keeps running and sends a later change.
    for (timeout, next) in [(I64_MAX, "b"), ("0", "c")] {
        let rv = storage.revision().await;
        let path = format!("{CM_PATH}?watch=1&timeoutSeconds={timeout}&resourceVersion={rv}");
        let mut w = Watch::open(&app, &path).await;
        w.quiet().await;
        created(&app, CM_PATH, &cm(next)).await;
        let event = w.next().await;
        assert_eq!(event["type"], "ADDED", "{timeout}");
        assert_eq!(event["object"]["metadata"]["name"], next, "{timeout}");
    }
    // A negative timeout has passed already (as in Kubernetes, where the watch's timer fires at
    // once): the watch ends, after the initial events when it has some.
    let rv = storage.revision().await;
    for timeout in ["-1", "-9223372036854775808"] {
        let path = format!("{CM_PATH}?watch=1&timeoutSeconds={timeout}&resourceVersion={rv}");
        let events = Watch::open(&app, &path).await.until_end(PATIENCE).await;
        assert_eq!(events, Vec::<Value>::new(), "{timeout}");
    }
    let path = format!("{CM_PATH}?watch=1&timeoutSeconds=-1");
    let events = Watch::open(&app, &path).await.until_end(PATIENCE).await;
    assert!(
        events.iter().all(|e| e["type"] == "ADDED"),
        "only initial events: {events:?}"
    );
    for timeout in [I64_OVERFLOW, "-9223372036854775809", "1e3", "0x10", "1.5"] {
        let path = format!("{CM_PATH}?watch=1&timeoutSeconds={timeout}");
        bad_parameter(
            &admin_call(&app, "GET", &path, None).await,
            "timeoutSeconds",
        );
    }
}

#[tokio::test]
async fn lists_take_any_64_bit_timeout_and_limit() {
    let (app, _) = app().await;
    created(&app, CM_PATH, &cm("a")).await;
    created(&app, CM_PATH, &cm("b")).await;
    for query in [
        format!("timeoutSeconds={I64_MAX}"),
        "timeoutSeconds=-1".to_owned(),
        "timeoutSeconds=0".to_owned(),
        format!("limit={I64_MAX}"),
        "limit=-1".to_owned(),
        "limit=-9223372036854775808".to_owned(),
    ] {
        let list = fetched(&app, &format!("{CM_PATH}?{query}")).await;
        assert_eq!(list["items"].as_array().map(Vec::len), Some(2), "{query}");
        assert!(list["metadata"].get("continue").is_none(), "{query}");
    }
    let page = fetched(&app, &format!("{CM_PATH}?limit=1")).await;
    assert_eq!(page["items"].as_array().map(Vec::len), Some(1));
    for (parameter, value) in [
        ("timeoutSeconds", I64_OVERFLOW),
        ("limit", I64_OVERFLOW),
        ("limit", "-9223372036854775809"),
        ("limit", "ten"),
    ] {
        let path = format!("{CM_PATH}?{parameter}={value}");
        bad_parameter(&admin_call(&app, "GET", &path, None).await, parameter);
    }
}

#[tokio::test]
async fn resource_versions_past_64_bits_are_400() {
    let (app, _) = app().await;
    let a = created(&app, CM_PATH, &cm("a")).await;
    for rv in [U64_OVERFLOW, "-1", "1e3", "0x10"] {
        for path in [
            format!("{CM_PATH}/a?resourceVersion={rv}"),
            format!("{CM_PATH}?resourceVersion={rv}"),
            format!("{CM_PATH}?resourceVersion={rv}&resourceVersionMatch=Exact"),
            format!("{CM_PATH}?watch=1&resourceVersion={rv}"),
        ] {
            let reply = admin_call(&app, "GET", &path, None).await;
            bad_parameter(&reply, "invalid resource version");
        }
        let mut stale = a.clone();
        stale["metadata"]["resourceVersion"] = json!(rv);
        let reply = admin_call(
            &app,
            "PUT",
            &format!("{CM_PATH}/a"),
            Some(&stale.to_string()),
        )
        .await;
        bad_parameter(&reply, "invalid resourceVersion");
    }
    // The largest resource version is one this store has not reached: a read waits for it and
    // times out, a watch from it waits for changes after it.
    for path in [
        format!("{CM_PATH}/a?resourceVersion={U64_MAX}"),
        format!("{CM_PATH}?resourceVersion={U64_MAX}"),
        format!("{CM_PATH}?resourceVersion={U64_MAX}&resourceVersionMatch=Exact"),
    ] {
        assert_status(&admin_call(&app, "GET", &path, None).await, 504, "Timeout");
    }
    let mut w = Watch::open(
        &app,
        &format!("{CM_PATH}?watch=1&resourceVersion={U64_MAX}"),
    )
    .await;
    w.quiet().await;
}

#[tokio::test]
async fn garbage_continue_tokens_are_400() {
    let (app, _) = app().await;
    created(&app, CM_PATH, &cm("a")).await;
    let token = |json: &str| URL_SAFE_NO_PAD.encode(json);
    let long_key = "k".repeat(40_000);
    for garbage in [
        "!!!".to_owned(),
        "%25%25".to_owned(),
        token("{"),
        token(r#"{"v":"meta.k8s.io/v1","rv":1e30,"start":"a\u0000"}"#),
        token(r#"{"v":"meta.k8s.io/v1","rv":18446744073709551616,"start":"a\u0000"}"#),
        token(r#"{"v":"meta.k8s.io/v1","rv":-2,"start":"a\u0000"}"#),
        token(r#"{"v":"meta.k8s.io/v1","rv":"7","start":"a\u0000"}"#),
        token(&format!(r#"{{"v":"{long_key}","rv":1,"start":"a\u0000"}}"#)),
        token(&format!(
            r#"{{"v":"meta.k8s.io/v1","rv":"{long_key}","start":"a"}}"#
        )),
        token(&format!(
            r#"{{"v":"meta.k8s.io/v1","rv":1,"start":"../{long_key}"}}"#
        )),
    ] {
        let path = format!("{CM_PATH}?limit=1&continue={garbage}");
        let reply = admin_call(&app, "GET", &path, None).await;
        bad_parameter(&reply, "invalid continue token");
    }
    // A well-formed token at a revision this store has not reached: a 504, as a read of it.
    let future = token(&format!(
        r#"{{"v":"meta.k8s.io/v1","rv":{I64_MAX},"start":"default/a\u0000"}}"#
    ));
    let reply = admin_call(
        &app,
        "GET",
        &format!("{CM_PATH}?limit=1&continue={future}"),
        None,
    )
    .await;
    assert_status(&reply, 504, "Timeout");
}

#[tokio::test]
async fn grace_periods_are_64_bit_integers() {
    let (app, _) = app().await;
    for (i, (query, body)) in [
        (format!("?gracePeriodSeconds={I64_MAX}"), ""),
        ("?gracePeriodSeconds=-1".to_owned(), ""),
        ("?gracePeriodSeconds=-0".to_owned(), ""),
        (
            String::new(),
            r#"{"gracePeriodSeconds":9223372036854775807}"#,
        ),
        (String::new(), r#"{"gracePeriodSeconds":-0}"#),
        (String::new(), r#"{"gracePeriodSeconds":null}"#),
    ]
    .into_iter()
    .enumerate()
    {
        let name = format!("g{i}");
        created(&app, CM_PATH, &cm(&name)).await;
        let path = format!("{CM_PATH}/{name}{query}");
        let reply = admin_call(&app, "DELETE", &path, Some(body)).await;
        assert_eq!(
            reply.status,
            StatusCode::OK,
            "{query} {body}: {}",
            reply.text()
        );
    }
    created(&app, CM_PATH, &cm("kept")).await;
    for (query, body) in [
        (format!("?gracePeriodSeconds={I64_OVERFLOW}"), String::new()),
        ("?gracePeriodSeconds=soon".to_owned(), String::new()),
        (
            String::new(),
            r#"{"gracePeriodSeconds":9223372036854775808}"#.to_owned(),
        ),
        (String::new(), r#"{"gracePeriodSeconds":1e30}"#.to_owned()),
        (String::new(), r#"{"gracePeriodSeconds":1.5}"#.to_owned()),
        (String::new(), r#"{"gracePeriodSeconds":"5"}"#.to_owned()),
        (
            String::new(),
            format!(r#"{{"gracePeriodSeconds":"{}"}}"#, "5".repeat(40_000)),
        ),
    ] {
        let path = format!("{CM_PATH}/kept{query}");
        let reply = admin_call(&app, "DELETE", &path, Some(&body)).await;
        bad_parameter(&reply, "gracePeriodSeconds");
    }
    fetched(&app, &format!("{CM_PATH}/kept")).await;
}

/// The size of the stored form of the ConfigMap `name` in `storage`.
async fn stored_size(storage: &Backend, name: &str) -> usize {
    let key = format!("/registry/core/configmaps/default/{name}");
    let stored = storage.get(&key, ReadConsistency::Linearizable).await;
    stored.expect("get").expect("stored").value.len()
}

// R-RES-192: a dry run answers the 413 a write would. An object too large to store with its
// managedFields is stored without them, as kube-apiserver retries such a write.
#[tokio::test]
async fn the_object_size_limit_is_the_stored_bytes() {
    let (app, storage) = app().await;
    let body = cm_with("exact", &"x".repeat(3000));
    created(&app, CM_PATH, &body).await;
    let size = stored_size(&storage, "exact").await;
    // The same object again: its stored form has the same size (same-length uid and time).
    let (fits, _) = app_limited(size).await;
    let obj = created(&fits, CM_PATH, &body).await;
    assert!(obj["metadata"]["managedFields"].is_array(), "{obj}");
    let (stripped, stripped_storage) = app_limited(size - 1).await;
    let obj = created(&stripped, CM_PATH, &body).await;
    assert!(obj["metadata"].get("managedFields").is_none(), "{obj}");
    let bare = stored_size(&stripped_storage, "exact").await;
    assert!(bare < size, "{bare} < {size}");
    let (short, short_storage) = app_limited(bare - 1).await;
    for query in ["", "?dryRun=All"] {
        let before = snapshot(&short_storage).await;
        let reply = admin_call(&short, "POST", &format!("{CM_PATH}{query}"), Some(&body)).await;
        too_large(&reply, bare - 1);
        let message = reply.json()["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(
            message.contains(&format!("the object is {bare} bytes")),
            "{message}"
        );
        assert_eq!(snapshot(&short_storage).await, before, "nothing stored");
    }
    let reply = admin_call(&short, "GET", &format!("{CM_PATH}/exact"), None).await;
    assert_status(&reply, 404, "NotFound");
}

// R-RES-192: dry runs answer the 413 the writes would.
#[tokio::test]
async fn oversized_updates_patches_and_status_writes_are_413_and_store_nothing() {
    const LIMIT: usize = 8192;
    let (app, storage) = app_limited(LIMIT).await;
    let big = "x".repeat(LIMIT);
    let small = created(&app, CM_PATH, &cm_with("small", "fits")).await;
    let deploy = created(
        &app,
        DEPLOY_PATH,
        &deployment("d", vec![json!({"name": "c", "image": "nginx"})]),
    )
    .await;
    let mut grown = small.clone();
    grown["data"]["a"] = json!(big);
    let mut status = deploy.clone();
    status["status"] = json!({"conditions": [{"type": "Progressing", "status": "True",
                                             "message": big}]});
    let merge = json!({"data": {"a": big}}).to_string();
    let json_patch = json!([{"op": "add", "path": "/data/b", "value": big}]).to_string();
    let writes = [
        (
            "POST",
            CM_PATH.to_owned(),
            "application/json",
            cm_with("new", &big),
        ),
        (
            "PUT",
            format!("{CM_PATH}/small"),
            "application/json",
            grown.to_string(),
        ),
        (
            "PATCH",
            format!("{CM_PATH}/small"),
            "application/merge-patch+json",
            merge.clone(),
        ),
        (
            "PATCH",
            format!("{CM_PATH}/small"),
            "application/strategic-merge-patch+json",
            merge,
        ),
        (
            "PATCH",
            format!("{CM_PATH}/small"),
            "application/json-patch+json",
            json_patch,
        ),
        (
            "PUT",
            format!("{DEPLOY_PATH}/d/status"),
            "application/json",
            status.to_string(),
        ),
    ];
    for (method, path, content_type, body) in &writes {
        for query in ["", "?dryRun=All"] {
            let before = snapshot(&storage).await;
            let reply = send_as(&app, method, &format!("{path}{query}"), content_type, body).await;
            too_large(&reply, LIMIT);
            assert_eq!(snapshot(&storage).await, before, "{method} {path}{query}");
        }
    }
    assert_eq!(fetched(&app, &format!("{CM_PATH}/small")).await, small);
    assert_eq!(fetched(&app, &format!("{DEPLOY_PATH}/d")).await, deploy);
    // Writes that fit go through.
    let patch = json!({"data": {"a": "still fits"}}).to_string();
    let reply = send_as(
        &app,
        "PATCH",
        &format!("{CM_PATH}/small"),
        "application/merge-patch+json",
        &patch,
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
}

#[tokio::test]
async fn a_deployment_of_ten_thousand_containers_is_413_with_the_default_limit() {
    let (app, storage) = app().await;
    let containers = (0..=10_000)
        .map(|i| {
            json!({"name": format!("container-{i:05}"),
                   "image": "registry.example.com/team/application:v1.2.3"})
        })
        .collect();
    let body = deployment("huge", containers);
    let before = snapshot(&storage).await;
    let reply = admin_call(&app, "POST", DEPLOY_PATH, Some(&body)).await;
    too_large(&reply, apiary_api::DEFAULT_MAX_OBJECT_BYTES);
    assert_eq!(snapshot(&storage).await, before);
    let reply = admin_call(&app, "GET", &format!("{DEPLOY_PATH}/huge"), None).await;
    assert_status(&reply, 404, "NotFound");
}

#[tokio::test]
async fn errors_repeat_only_an_excerpt_of_the_request() {
    let (app, _) = app().await;
    let huge = "A".repeat(1024 * 1024);
    // A 1 MiB invalid name and a 1 MiB invalid data key: 422s that stay small.
    for body in [
        cm(&huge),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "k"},
               "data": {huge.as_str(): "v"}})
        .to_string(),
    ] {
        let reply = admin_call(&app, "POST", CM_PATH, Some(&body)).await;
        assert_status(&reply, 422, "Invalid");
        assert!(
            reply.body.len() < SMALL_ANSWER,
            "{} bytes",
            reply.body.len()
        );
        assert!(reply.text().contains(TRUNCATED_MARK), "{}", reply.text());
    }
    // Values from other bodies: delete preconditions, an update's resourceVersion.
    let kept = created(&app, CM_PATH, &cm("kept")).await;
    let preconditions = json!({"preconditions": {"uid": huge}}).to_string();
    let path = format!("{CM_PATH}/kept");
    let reply = admin_call(&app, "DELETE", &path, Some(&preconditions)).await;
    assert_status(&reply, 409, "Conflict");
    assert!(
        reply.body.len() < SMALL_ANSWER,
        "{} bytes",
        reply.body.len()
    );
    let mut update = kept.clone();
    update["metadata"]["resourceVersion"] = json!(huge);
    let reply = admin_call(&app, "PUT", &path, Some(&update.to_string())).await;
    bad_parameter(&reply, "invalid resourceVersion");
    // Names and query values from the URL.
    let long = "n".repeat(40_000);
    let reply = admin_call(&app, "GET", &format!("{CM_PATH}/{long}"), None).await;
    assert_status(&reply, 404, "NotFound");
    assert!(
        reply.body.len() < SMALL_ANSWER,
        "{} bytes",
        reply.body.len()
    );
    for query in [
        format!("limit={long}"),
        format!("labelSelector={long}%20in%20("),
        format!("fieldSelector={long}"),
        format!("watch=1&sendInitialEvents={long}"),
    ] {
        let reply = admin_call(&app, "GET", &format!("{CM_PATH}?{query}"), None).await;
        assert_status(&reply, 400, "BadRequest");
        assert!(
            reply.body.len() < SMALL_ANSWER,
            "{query:.40}: {} bytes",
            reply.body.len()
        );
    }
    // A patch whose result does not decode: the `patch` cause holds the patched object, cut.
    created(&app, CM_PATH, &cm_with("p", &"y".repeat(900_000))).await;
    let reply = send_as(
        &app,
        "PATCH",
        &format!("{CM_PATH}/p"),
        "application/merge-patch+json",
        r#"{"data":{"b":5}}"#,
    )
    .await;
    let s = assert_status(&reply, 422, "Invalid");
    assert_eq!(s["details"]["causes"][0]["field"], "patch");
    assert!(reply.body.len() < 64 * 1024, "{} bytes", reply.body.len());
    assert!(reply.text().contains(TRUNCATED_MARK));
}
