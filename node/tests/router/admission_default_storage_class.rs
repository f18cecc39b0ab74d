//! The `DefaultStorageClass` plugin: claims naming no class get the default StorageClass.

use std::time::Duration;

use axum::Router;
use serde_json::Value;
use serde_json::json;

use super::admin_call;
use super::app;
use super::created;
use http::StatusCode;

const CLAIMS: &str = "/api/v1/namespaces/default/persistentvolumeclaims";
const CLASSES: &str = "/apis/storage.k8s.io/v1/storageclasses";

fn claim(name: &str, class: Option<&str>) -> String {
    let mut claim = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
    if let Some(class) = class {
        claim["spec"]["storageClassName"] = json!(class);
    }
    claim.to_string()
}

fn class(name: &str, default: bool) -> String {
    json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "provisioner": "p",
           "metadata": {"name": name, "annotations": {
               "storageclass.kubernetes.io/is-default-class": default.to_string()}}})
    .to_string()
}

/// Dry-run creates of a claim naming no class until it gets `class` (the replica's copy of
/// the classes follows their writes asynchronously, as Kubernetes' informers do).
async fn until_defaulted_to(app: &Router, class: &str) -> Value {
    let path = format!("{CLAIMS}?dryRun=All");
    let mut last = Value::Null;
    for _ in 0..100 {
        let reply = admin_call(app, "POST", &path, Some(&claim("probe", None))).await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
        last = reply.json();
        if last["spec"]["storageClassName"] == class {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("claims never defaulted to {class}: {last}");
}

#[tokio::test]
async fn claims_naming_no_class_get_the_default_one() {
    let (app, _) = app().await;
    let stored = created(&app, CLAIMS, &claim("before", None)).await;
    assert_eq!(
        stored["spec"].get("storageClassName"),
        None,
        "no default yet"
    );

    created(&app, CLASSES, &class("slow", false)).await;
    created(&app, CLASSES, &class("fast", true)).await;
    until_defaulted_to(&app, "fast").await;
    let stored = created(&app, CLAIMS, &claim("c", None)).await;
    assert_eq!(stored["spec"]["storageClassName"], "fast");

    let stored = created(&app, CLAIMS, &claim("named", Some("slow"))).await;
    assert_eq!(stored["spec"]["storageClassName"], "slow");
    let stored = created(&app, CLAIMS, &claim("none", Some(""))).await;
    assert_eq!(
        stored["spec"]["storageClassName"], "",
        "an empty class asks for none"
    );
}

#[tokio::test]
async fn of_several_defaults_the_newest_wins() {
    let (app, _) = app().await;
    created(&app, CLASSES, &class("old", true)).await;
    until_defaulted_to(&app, "old").await;
    tokio::time::sleep(Duration::from_millis(1100)).await;
    created(&app, CLASSES, &class("new", true)).await;
    until_defaulted_to(&app, "new").await;
}
