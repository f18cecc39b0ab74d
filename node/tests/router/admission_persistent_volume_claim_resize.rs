//! The `PersistentVolumeClaimResize` plugin: a bound claim grows only when its StorageClass
//! allows expansion.

use axum::Router;
use serde_json::json;

use super::Reply;
use super::admin_call;
use super::app;
use super::assert_status;
use super::created;
use super::send_as;
use http::StatusCode;

const CLAIMS: &str = "/api/v1/namespaces/default/persistentvolumeclaims";
const CLASSES: &str = "/apis/storage.k8s.io/v1/storageclasses";
const MERGE: &str = "application/merge-patch+json";

/// A bound claim `name` of class `class`, of 1Gi.
async fn bound_claim(app: &Router, name: &str, class: &str) {
    let claim = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": class,
                 "resources": {"requests": {"storage": "1Gi"}}}});
    created(app, CLAIMS, &claim.to_string()).await;
    let status = r#"{"status":{"phase":"Bound","capacity":{"storage":"1Gi"}}}"#;
    let path = format!("{CLAIMS}/{name}/status");
    let reply = send_as(app, "PATCH", &path, MERGE, status).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
}

async fn grow(app: &Router, name: &str) -> Reply {
    let body = r#"{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}"#;
    send_as(app, "PATCH", &format!("{CLAIMS}/{name}"), MERGE, body).await
}

#[tokio::test]
async fn a_claim_grows_only_when_its_class_allows_expansion() {
    let (app, _) = app().await;
    for (name, expands) in [("expandable", json!(true)), ("fixed", json!(null))] {
        let class = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                           "metadata": {"name": name}, "provisioner": "p",
                           "allowVolumeExpansion": expands});
        created(&app, CLASSES, &class.to_string()).await;
    }
    bound_claim(&app, "a", "expandable").await;
    bound_claim(&app, "b", "fixed").await;
    bound_claim(&app, "c", "missing").await;

    let reply = grow(&app, "a").await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(
        reply.json()["spec"]["resources"]["requests"]["storage"],
        "2Gi"
    );

    for name in ["b", "c"] {
        let status = assert_status(&grow(&app, name).await, 403, "Forbidden");
        assert_eq!(
            status["message"],
            format!(
                "persistentvolumeclaims \"{name}\" is forbidden: only dynamically provisioned \
                 pvc can be resized and the storageclass that provisions the pvc must support \
                 resize"
            )
        );
    }
    let label = r#"{"metadata":{"labels":{"a":"b"}}}"#;
    let reply = send_as(&app, "PATCH", &format!("{CLAIMS}/b"), MERGE, label).await;
    assert_eq!(
        reply.status,
        StatusCode::OK,
        "other updates pass: {}",
        reply.text()
    );
    let read = admin_call(&app, "GET", &format!("{CLAIMS}/b"), None).await;
    assert_eq!(
        read.json()["spec"]["resources"]["requests"]["storage"],
        "1Gi"
    );
}
