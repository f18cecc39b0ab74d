//! The admission stage: the plugin chain that `--enable-admission-plugins` and
//! `--disable-admission-plugins` select runs on every write after authorization, and on
//! nothing else.

use std::sync::Arc;

use axum::Router;
use http::StatusCode;

use super::AlwaysReady;
use super::Backend;
use super::CM_PATH;
use super::admin_call;
use super::assert_status;
use super::backend_in;
use super::bob;
use super::call;
use super::cm;
use super::created;
use super::send_as;
use super::snapshot;
use apiary_api::ApiConfig;
use apiary_api::admission::PluginSelection;
use apiary_api::flavor::Flavor;

/// A router over `storage` whose admission chain is the default set plus `enable`.
fn admitting(storage: &Arc<Backend>, enable: &[&str]) -> Router {
    let mut config = ApiConfig::new(Flavor::Kubernetes, Arc::new(AlwaysReady));
    let enable: Vec<String> = enable.iter().map(|s| (*s).to_owned()).collect();
    config.admission = PluginSelection::new(&enable, &[]).expect("known plugins");
    apiary_api::router(storage.clone(), config)
}

const DENIED: &str = "admission control is denying all modifications";

// A plugin that refuses everything refuses creates, updates and deletes with its 403, and the
// store is left as it was; reads pass.
#[tokio::test]
async fn a_denying_plugin_refuses_every_write_and_stores_nothing() {
    let (storage, _) = backend_in(Flavor::Kubernetes).await;
    created(&admitting(&storage, &[]), CM_PATH, &cm("kept")).await;
    let app = admitting(&storage, &["AlwaysDeny"]);
    let before = snapshot(&storage).await;

    let create = admin_call(&app, "POST", CM_PATH, Some(&cm("new"))).await;
    let status = assert_status(&create, 403, "Forbidden");
    assert_eq!(
        status["message"],
        format!("configmaps \"new\" is forbidden: {DENIED}")
    );
    let path = format!("{CM_PATH}/kept");
    let update = admin_call(&app, "PUT", &path, Some(&cm("kept"))).await;
    assert_status(&update, 403, "Forbidden");
    let merge = "application/merge-patch+json";
    let patch = send_as(&app, "PATCH", &path, merge, r#"{"data":{"k":"v"}}"#).await;
    assert_status(&patch, 403, "Forbidden");
    let delete = admin_call(&app, "DELETE", &path, None).await;
    assert_status(&delete, 403, "Forbidden");
    assert_eq!(snapshot(&storage).await, before, "nothing is stored");

    let read = admin_call(&app, "GET", &path, None).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.text());
}

// R-ACC-003: a request authorization denies never reaches admission: its 403 is
// authorization's, not the denying plugin's.
#[tokio::test]
async fn admission_runs_only_after_authorization_allows() {
    let (storage, _) = backend_in(Flavor::Kubernetes).await;
    let app = admitting(&storage, &["AlwaysDeny"]);
    let reply = call(&app, "POST", CM_PATH, Some(&cm("new")), Some(bob())).await;
    let status = assert_status(&reply, 403, "Forbidden");
    let message = status["message"].as_str().expect("message");
    assert!(message.contains("User \"bob\" cannot create"), "{message}");
    assert!(!message.contains(DENIED), "{message}");
}

// Subresources with objects of their own are admitted as those objects (a Scale, a Binding,
// an Eviction): a plugin that lets everything pass leaves them working through the admitted
// copy, one that refuses everything refuses them and changes nothing.
#[tokio::test]
async fn subresource_objects_are_admitted_in_place_of_their_parents() {
    use super::subresources::DEPLOYMENTS;
    use super::subresources::PODS;
    use super::subresources::assert_success;
    use super::subresources::binding;
    use super::subresources::deployment;
    use super::subresources::eviction;
    use super::subresources::pod;
    use super::subresources::scale;

    let (storage, _) = backend_in(Flavor::Kubernetes).await;
    let admitting_all = admitting(&storage, &["AlwaysAdmit"]);
    created(&admitting_all, DEPLOYMENTS, &deployment("web", 1)).await;
    for name in ["a", "b"] {
        created(&admitting_all, PODS, &pod(name, serde_json::json!({}))).await;
    }
    let denying = admitting(&storage, &["AlwaysDeny"]);
    let before = snapshot(&storage).await;
    let scale_path = format!("{DEPLOYMENTS}/web/scale");
    let reply = admin_call(&denying, "PUT", &scale_path, Some(&scale("web", 3, None))).await;
    let status = assert_status(&reply, 403, "Forbidden");
    assert_eq!(
        status["message"],
        format!("deployments.apps \"web\" is forbidden: {DENIED}")
    );
    let bind = admin_call(
        &denying,
        "POST",
        &format!("{PODS}/a/binding"),
        Some(&binding("a", "n1")),
    )
    .await;
    assert_status(&bind, 403, "Forbidden");
    let evict = admin_call(
        &denying,
        "POST",
        &format!("{PODS}/b/eviction"),
        Some(&eviction("b")),
    )
    .await;
    assert_status(&evict, 403, "Forbidden");
    assert_eq!(snapshot(&storage).await, before, "nothing is stored");

    let reply = admin_call(
        &admitting_all,
        "PUT",
        &scale_path,
        Some(&scale("web", 3, None)),
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    assert_eq!(reply.json()["spec"]["replicas"], 3);
    let bind = admin_call(
        &admitting_all,
        "POST",
        &format!("{PODS}/a/binding"),
        Some(&binding("a", "n1")),
    )
    .await;
    assert_success(&bind);
    let evict = admin_call(
        &admitting_all,
        "POST",
        &format!("{PODS}/b/eviction"),
        Some(&eviction("b")),
    )
    .await;
    assert_success(&evict);
    let gone = admin_call(&admitting_all, "GET", &format!("{PODS}/b"), None).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND);
}
