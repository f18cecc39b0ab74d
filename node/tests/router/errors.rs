//! Every error the pipeline answers, each as a `Status`, and nothing stored on a rejected
//! write.

use serde_json::json;

use super::*;
use apiary_api::limits::MAX_BODY_BYTES;
use apiary_raft::replica::ReadError;
use apiary_raft::replica::WriteError;

// R-RES-012, R-RES-236
#[tokio::test]
async fn second_create_with_the_same_name_is_already_exists() {
    let (app, _) = app().await;
    let first = admin_call(&app, "POST", CM_PATH, Some(&cm("x")))
        .await
        .json();
    let second = admin_call(
        &app,
        "POST",
        CM_PATH,
        Some(r#"{"metadata":{"name":"x"},"data":{"b":"2"}}"#),
    )
    .await;
    let s = assert_status(&second, 409, "AlreadyExists");
    assert_eq!(s["message"], "configmaps \"x\" already exists");
    assert_eq!(s["details"], json!({"name":"x","kind":"configmaps"}));
    assert_eq!(s["metadata"], json!({}));
    let still = admin_call(&app, "GET", &format!("{CM_PATH}/x"), None)
        .await
        .json();
    assert_eq!(still, first, "the first object is unchanged");
}

// R-RES-236 (invalid name -> 422 with causes)
#[tokio::test]
async fn invalid_name_is_422_with_kubernetes_wording_and_nothing_is_stored() {
    let (app, storage) = app().await;
    let before = storage.keys().await;
    let r = admin_call(&app, "POST", CM_PATH, Some(&cm("Bad_Name"))).await;
    let s = assert_status(&r, 422, "Invalid");
    assert_eq!(
        s["message"],
        "ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    );
    assert_eq!(s["details"]["name"], "Bad_Name");
    assert_eq!(s["details"]["kind"], "ConfigMap");
    let cause = &s["details"]["causes"][0];
    assert_eq!(cause["reason"], "FieldValueInvalid");
    assert_eq!(cause["field"], "metadata.name");
    assert!(cause["message"].as_str().is_some_and(|m| {
        m.starts_with("Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain")
    }));
    let bad_key = admin_call(
        &app,
        "POST",
        CM_PATH,
        Some(r#"{"metadata":{"name":"k"},"data":{"bad key":"v"}}"#),
    )
    .await;
    assert_eq!(
        assert_status(&bad_key, 422, "Invalid")["details"]["causes"][0]["field"],
        "data[bad key]"
    );
    let big = json!({"metadata":{"name":"big"},"data":{"a":"x".repeat(1024 * 1024 + 1)}});
    let too_big = admin_call(&app, "POST", CM_PATH, Some(&big.to_string())).await;
    assert_eq!(
        assert_status(&too_big, 422, "Invalid")["details"]["causes"][0]["reason"],
        "FieldValueTooLong"
    );
    assert_eq!(
        storage.keys().await,
        before,
        "nothing stored on a rejected write"
    );
}

// R-RES-235, R-RES-031
#[tokio::test]
async fn malformed_or_mistyped_bodies_are_400() {
    let (app, storage) = app().await;
    let before = storage.keys().await;
    let r = admin_call(
        &app,
        "POST",
        CM_PATH,
        Some("{\"metadata\": {\n  \"name\": }"),
    )
    .await;
    let s = assert_status(&r, 400, "BadRequest");
    let msg = s["message"].as_str().expect("message");
    assert!(msg.contains("line 2 column"), "{msg}");
    let typed = admin_call(
        &app,
        "POST",
        CM_PATH,
        Some(r#"{"metadata":{"name":"t"},"data":{"a":1}}"#),
    )
    .await;
    let s = assert_status(&typed, 400, "BadRequest");
    assert!(
        s["message"].as_str().is_some_and(
            |m| m.starts_with("ConfigMap in version \"v1\" cannot be handled as a ConfigMap")
        ),
        "{s}"
    );
    let array = admin_call(&app, "POST", CM_PATH, Some("[]")).await;
    assert_status(&array, 400, "BadRequest");
    let wrong_kind = admin_call(
        &app,
        "POST",
        CM_PATH,
        Some(r#"{"kind":"Secret","metadata":{"name":"w"}}"#),
    )
    .await;
    assert_status(&wrong_kind, 400, "BadRequest");
    let wrong_ns = admin_call(
        &app,
        "POST",
        CM_PATH,
        Some(r#"{"metadata":{"name":"w","namespace":"other"}}"#),
    )
    .await;
    let s = assert_status(&wrong_ns, 400, "BadRequest");
    assert_eq!(
        s["message"],
        "the namespace of the provided object does not match the namespace sent on the request"
    );
    admin_call(&app, "POST", CM_PATH, Some(&cm("n"))).await;
    let renamed = admin_call(&app, "PUT", &format!("{CM_PATH}/n"), Some(&cm("m"))).await;
    assert_status(&renamed, 400, "BadRequest");
    let bad_rv = admin_call(
        &app,
        "GET",
        &format!("{CM_PATH}/n?resourceVersion=abc"),
        None,
    )
    .await;
    assert_status(&bad_rv, 400, "BadRequest");
    assert_eq!(
        storage.keys().await.len(),
        before.len() + 1,
        "only the valid create was stored"
    );
}

// R-RES-241
#[tokio::test]
async fn bodies_over_3_mib_are_413() {
    let (app, storage) = app().await;
    let before = storage.keys().await;
    let big = format!(
        r#"{{"metadata":{{"name":"x"}},"data":{{"a":"{}"}}}}"#,
        "x".repeat(MAX_BODY_BYTES)
    );
    let r = admin_call(&app, "POST", CM_PATH, Some(&big)).await;
    let s = assert_status(&r, 413, "RequestEntityTooLarge");
    assert_eq!(s["message"], "Request entity too large: limit is 3145728");
    // Without a Content-Length the limit still holds while streaming.
    let chunks = vec![Ok::<_, std::io::Error>(bytes::Bytes::from(big.clone()))];
    let req = Request::builder()
        .method("POST")
        .uri(CM_PATH)
        .body(Body::from_stream(futures::stream::iter(chunks)))
        .expect("request");
    let mut req = req;
    req.extensions_mut().insert(admin());
    let streamed = send(&app, req).await;
    assert_status(&streamed, 413, "RequestEntityTooLarge");
    assert_eq!(storage.keys().await, before);
}

// R-RES-010, R-RES-236
#[tokio::test]
async fn unknown_resources_and_wrong_scopes_are_404() {
    let (app, _) = app().await;
    for path in [
        "/api/v1/namespaces/default/widgets",
        "/api/v2/namespaces/default/configmaps",
        "/apis/apps/v2/deployments",
        // Registered but not served: off by default (R-VER-060), and sharing storage
        // without a conversion.
        "/apis/coordination.k8s.io/v1beta1/leasecandidates",
        "/apis/resource.k8s.io/v1beta1/resourceclaims",
        "/api/v1/namespaces/default/namespaces/x",
        "/api/v1/configmaps/x",
        "/api/v1/namespaces/default/configmaps/x/bogus",
        "/not/an/api",
    ] {
        let r = admin_call(&app, "GET", path, None).await;
        let s = assert_status(&r, 404, "NotFound");
        assert_eq!(
            s["message"], "the server could not find the requested resource",
            "{path}"
        );
    }
    let missing_ns = admin_call(
        &app,
        "POST",
        "/api/v1/namespaces/nowhere/configmaps",
        Some(&cm("x")),
    )
    .await;
    let s = assert_status(&missing_ns, 404, "NotFound");
    assert_eq!(s["message"], "namespaces \"nowhere\" not found");
    assert_eq!(s["details"], json!({"name":"nowhere","kind":"namespaces"}));
}

// R-RES-236 (405)
#[tokio::test]
async fn unsupported_verbs_are_405() {
    let (app, storage) = app().await;
    let before = storage.keys().await;
    for (method, path) in [
        ("POST", "/api/v1/configmaps"),
        ("POST", "/api/v1/namespaces/default/configmaps/x"),
        ("OPTIONS", "/api/v1/namespaces/default/configmaps/x"),
        ("DELETE", "/api/v1/namespaces"),
        ("POST", "/version"),
        ("POST", "/api"),
    ] {
        let r = admin_call(&app, method, path, Some(&cm("x"))).await;
        assert_status(&r, 405, "MethodNotAllowed");
    }
    assert_eq!(storage.keys().await, before);
}

// R-RES-236 (503 on an unavailable store)
#[tokio::test]
async fn unavailable_storage_is_503_with_retry_after() {
    let (app, _, replica) = app_on_replica(Flavor::Kubernetes).await;
    replica.fail_reads(Some(ReadError::Unavailable {
        reason: "no leader".into(),
    }));
    let r = admin_call(&app, "GET", &format!("{CM_PATH}/x"), None).await;
    assert_status(&r, 503, "ServiceUnavailable");
    assert_eq!(
        r.headers.get("retry-after").map(|v| v.as_bytes()),
        Some(&b"1"[..])
    );
}

/// Every kind of write, each against objects that exist before the replica starts failing:
/// create, update, patch, delete, deletecollection and a subresource write.
fn every_write() -> Vec<(&'static str, String, &'static str, String)> {
    let json = "application/json";
    let merge = "application/merge-patch+json";
    vec![
        ("POST", CM_PATH.to_owned(), json, cm("new")),
        (
            "PUT",
            format!("{CM_PATH}/x"),
            json,
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"},"data":{"a":"2"}}"#
                .to_owned(),
        ),
        (
            "PATCH",
            format!("{CM_PATH}/x"),
            merge,
            r#"{"data":{"k":"v"}}"#.to_owned(),
        ),
        ("DELETE", format!("{CM_PATH}/x"), json, String::new()),
        ("DELETE", CM_PATH.to_owned(), json, String::new()),
        (
            "PATCH",
            format!("{DEPLOYMENTS_PATH}/d/scale"),
            merge,
            r#"{"spec":{"replicas":3}}"#.to_owned(),
        ),
    ]
}

const DEPLOYMENTS_PATH: &str = "/apis/apps/v1/namespaces/default/deployments";

/// A router over a replica holding ConfigMap `x` and Deployment `d`.
async fn app_with_objects() -> (Router, Arc<Backend>, Arc<LocalReplica>) {
    let (app, storage, replica) = app_on_replica(Flavor::Kubernetes).await;
    created(&app, CM_PATH, &cm("x")).await;
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        },
    });
    created(&app, DEPLOYMENTS_PATH, &deployment.to_string()).await;
    (app, storage, replica)
}

// R-RES-236: a write the replica proposed without seeing its outcome is answered 504 Timeout
// in kube-apiserver's words, without Retry-After (a client must not re-send it blindly), on
// every write path; so is one committed but not yet applied on this replica.
#[tokio::test]
async fn an_unknown_write_outcome_is_504_without_retry_after() {
    let unknown = [
        WriteError::OutcomeUnknown {
            reason: "leader changed".into(),
        },
        WriteError::NotApplied { revision: 99 },
    ];
    for failure in unknown {
        let (app, _, replica) = app_with_objects().await;
        replica.fail_writes(Some(failure.clone()));
        for (method, path, content_type, body) in every_write() {
            let r = send_as(&app, method, &path, content_type, &body).await;
            assert_eq!(
                r.status,
                504,
                "{method} {path} after {failure}: {}",
                r.text()
            );
            let s = assert_status(&r, 504, "Timeout");
            assert_eq!(
                s["message"],
                "Timeout: request did not complete within requested timeout - context deadline exceeded",
                "{method} {path} after {failure}"
            );
            assert_eq!(r.headers.get("retry-after"), None, "{method} {path}");
            assert_eq!(
                s["details"].get("retryAfterSeconds"),
                None,
                "{method} {path}"
            );
        }
    }
}

// R-RES-236: a write refused before anything was proposed (no leader, the leader moving) is
// 503 with Retry-After on every write path, and nothing was stored.
#[tokio::test]
async fn a_write_never_proposed_is_503_with_retry_after() {
    let refused = [
        WriteError::Unavailable {
            reason: "no leader".into(),
        },
        WriteError::ForwardToLeader {
            leader_id: None,
            leader_url: None,
        },
    ];
    for failure in refused {
        let (app, storage, replica) = app_with_objects().await;
        let before = storage.keys().await;
        replica.fail_writes(Some(failure.clone()));
        for (method, path, content_type, body) in every_write() {
            let r = send_as(&app, method, &path, content_type, &body).await;
            assert_eq!(
                r.status,
                503,
                "{method} {path} after {failure}: {}",
                r.text()
            );
            assert_status(&r, 503, "ServiceUnavailable");
            assert_eq!(
                r.headers.get("retry-after").map(|v| v.as_bytes()),
                Some(&b"1"[..]),
                "{method} {path} after {failure}"
            );
        }
        assert_eq!(storage.keys().await, before);
    }
}

// R-RES-172
#[tokio::test]
async fn a_future_resource_version_is_504_too_large() {
    let (app, _) = app().await;
    let r = admin_call(
        &app,
        "GET",
        &format!("{CM_PATH}?resourceVersion=999999"),
        None,
    )
    .await;
    let s = assert_status(&r, 504, "Timeout");
    assert!(
        s["message"]
            .as_str()
            .is_some_and(|m| m.contains("Too large resource version"))
    );
}

// R-RES-121: a body in a media type the server does not decode is 415, not a misleading 400.
#[tokio::test]
async fn non_json_bodies_are_415() {
    let (app, storage) = app().await;
    let before = storage.keys().await;
    let mut req = Request::builder()
        .method("POST")
        .uri(CM_PATH)
        .header("content-type", "application/xml")
        .body(Body::from(&b"<configmap/>"[..]))
        .expect("request");
    req.extensions_mut().insert(admin());
    let r = send(&app, req).await;
    assert_status(&r, 415, "UnsupportedMediaType");
    assert_eq!(storage.keys().await, before);
}

// R-RES-024: the server owns resourceVersion; Kubernetes refuses a create that carries one.
#[tokio::test]
async fn create_with_a_resource_version_is_refused() {
    let (app, storage) = app().await;
    let before = storage.keys().await;
    let body = r#"{"metadata":{"name":"x","resourceVersion":"5"}}"#;
    let r = admin_call(&app, "POST", CM_PATH, Some(body)).await;
    let s = assert_status(&r, 500, "InternalError");
    assert_eq!(
        s["message"],
        "Internal error occurred: resourceVersion should not be set on objects to be created"
    );
    assert_eq!(storage.keys().await, before);
}

// R-RES-051, R-RES-054, R-RES-192: invalid delete options are 422; a dry-run delete, from
// the body or the query, answers as a delete would and deletes nothing.
#[tokio::test]
async fn delete_options_are_validated_and_dry_runs_delete_nothing() {
    let (app, _) = app().await;
    admin_call(&app, "POST", CM_PATH, Some(&cm("x"))).await;
    let path = format!("{CM_PATH}/x");
    let bad = admin_call(
        &app,
        "DELETE",
        &path,
        Some(r#"{"propagationPolicy":"Sideways"}"#),
    )
    .await;
    let s = assert_status(&bad, 422, "Invalid");
    assert_eq!(s["details"]["kind"], "DeleteOptions");
    assert_eq!(s["details"]["group"], "meta.k8s.io");
    assert_eq!(
        s["details"]["causes"][0]["reason"],
        "FieldValueNotSupported"
    );
    let dry = admin_call(&app, "DELETE", &path, Some(r#"{"dryRun":["All"]}"#)).await;
    assert_eq!(dry.status, StatusCode::OK, "{}", dry.text());
    assert_eq!(dry.json()["status"], "Success");
    let dry_query = admin_call(&app, "DELETE", &format!("{path}?dryRun=All"), None).await;
    assert_eq!(dry_query.status, StatusCode::OK, "{}", dry_query.text());
    assert_eq!(
        admin_call(&app, "GET", &path, None).await.status,
        StatusCode::OK
    );
}

// No input may panic: hostile bodies on every write verb get a 4xx Status.
#[tokio::test]
async fn hostile_bodies_get_client_errors() {
    let (app, _) = app().await;
    admin_call(&app, "POST", CM_PATH, Some(&cm("x"))).await;
    let bodies: [&[u8]; 14] = [
        b"",
        b"null",
        b"1",
        b"\"s\"",
        b"{}",
        br#"{"metadata":null}"#,
        br#"{"metadata":[]}"#,
        br#"{"metadata":{"name":5}}"#,
        b"\xff\xfe",
        br#"{"metadata":{"name":"x"},"data":null}"#,
        br#"{"metadata":{"name":"x","uid":7}}"#,
        br#"{"apiVersion":7}"#,
        br#"{"metadata":{"name":"x","creationTimestamp":"yesterday"}}"#,
        b"{\"a\":",
    ];
    for body in bodies {
        for (method, path) in [
            ("POST", CM_PATH.to_owned()),
            ("PUT", format!("{CM_PATH}/x")),
            ("DELETE", format!("{CM_PATH}/x")),
        ] {
            let mut req = Request::builder()
                .method(method)
                .uri(&path)
                .body(Body::from(body.to_vec()))
                .expect("request");
            req.extensions_mut().insert(admin());
            let r = send(&app, req).await;
            let code = r.status.as_u16();
            let tolerable = r.status.is_success() || (400..500).contains(&code);
            assert!(
                tolerable,
                "{method} {:?}: {} {}",
                String::from_utf8_lossy(body),
                code,
                r.text()
            );
            if !r.status.is_success() {
                assert_eq!(r.json()["kind"], "Status");
            }
            if method == "DELETE" && r.status.is_success() {
                admin_call(&app, "POST", CM_PATH, Some(&cm("x"))).await;
            }
        }
    }
}
