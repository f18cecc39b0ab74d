//! The `StorageObjectInUseProtection` plugin: new volumes and claims carry the protection
//! finalizers, which the `pvc-protection` and `pv-protection` controllers remove once a
//! deleted object is no longer in use.

use std::sync::Arc;

use apiary_api::Flavor;
use apiary_api::SystemClock;
use apiary_node::controllers::Controller;
use apiary_node::controllers::ControllerContext;
use apiary_node::controllers::changes::Changes;
use apiary_node::controllers::client::InProcessClient;
use apiary_node::controllers::rbac_bootstrap::reconcile_defaults;
use apiary_node::controllers::volume_protection::VolumeProtection;
use http::StatusCode;
use serde_json::json;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::admin_call;
use super::app;
use super::created;
use super::poll_until;
use super::send_as;

#[tokio::test]
async fn new_volumes_and_claims_get_their_protection_finalizer() {
    let (app, _) = app().await;
    let claim = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c", "finalizers": ["example.com/keep"]},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
    let path = "/api/v1/namespaces/default/persistentvolumeclaims";
    let stored = created(&app, path, &claim.to_string()).await;
    assert_eq!(
        stored["metadata"]["finalizers"],
        json!(["example.com/keep", "kubernetes.io/pvc-protection"])
    );

    let volume = json!({"apiVersion": "v1", "kind": "PersistentVolume",
        "metadata": {"name": "v", "finalizers": ["kubernetes.io/pv-protection"]},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "hostPath": {"path": "/data"}}});
    let stored = created(&app, "/api/v1/persistentvolumes", &volume.to_string()).await;
    assert_eq!(
        stored["metadata"]["finalizers"],
        json!(["kubernetes.io/pv-protection"]),
        "not added twice"
    );
}

// The protection controllers, as their own ServiceAccounts under the default RBAC policy,
// release deleted claims no running pod mounts and deleted volumes that are not bound.
#[tokio::test]
async fn the_protection_controllers_release_objects_no_longer_in_use() {
    let (app, storage, rbac) = super::rbac::rbac_app().await;
    let loopback = InProcessClient::loopback(app.clone());
    reconcile_defaults(&loopback, Flavor::Kubernetes)
        .await
        .expect("default policy");
    super::rbac::settled(&storage, &rbac).await;
    let claims = "/api/v1/namespaces/default/persistentvolumeclaims";
    for name in ["free", "used"] {
        let claim = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}}});
        created(&app, claims, &claim.to_string()).await;
    }
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}],
                 "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "used"}}]}});
    created(&app, "/api/v1/namespaces/default/pods", &pod.to_string()).await;
    let volume = json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "v"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "hostPath": {"path": "/data"}}});
    created(&app, "/api/v1/persistentvolumes", &volume.to_string()).await;
    for path in [
        format!("{claims}/free"),
        format!("{claims}/used"),
        "/api/v1/persistentvolumes/v".to_owned(),
    ] {
        let reply = admin_call(&app, "DELETE", &path, None).await;
        assert_eq!(
            reply.status,
            StatusCode::OK,
            "held by its finalizer: {}",
            reply.text()
        );
    }

    let (changes, receiver) = watch::channel(0);
    let stop = CancellationToken::new();
    let mut running = Vec::new();
    for controller in [VolumeProtection::Claims, VolumeProtection::Volumes] {
        let context = ControllerContext {
            api: app.clone(),
            flavor: Flavor::Kubernetes,
            clock: Arc::new(SystemClock),
            changes: Changes::of_revisions(receiver.clone()),
        };
        let stop = stop.clone();
        running.push(tokio::spawn(
            async move { controller.run(context, stop).await },
        ));
    }
    let gone = |r: &super::Reply| r.status == StatusCode::NOT_FOUND;
    poll_until(
        &app,
        &changes,
        &format!("{claims}/free"),
        "free claim released",
        gone,
    )
    .await;
    poll_until(
        &app,
        &changes,
        "/api/v1/persistentvolumes/v",
        "volume released",
        gone,
    )
    .await;
    let used = admin_call(&app, "GET", &format!("{claims}/used"), None).await;
    assert_eq!(
        used.json()["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection"]),
        "a running pod mounts it"
    );

    let finished = r#"{"status":{"phase":"Succeeded"}}"#;
    let path = "/api/v1/namespaces/default/pods/p/status";
    let reply = send_as(
        &app,
        "PATCH",
        path,
        "application/merge-patch+json",
        finished,
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    poll_until(
        &app,
        &changes,
        &format!("{claims}/used"),
        "used claim released",
        gone,
    )
    .await;
    stop.cancel();
    for task in running {
        task.await.expect("controller ends");
    }
}
