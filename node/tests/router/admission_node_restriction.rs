//! NodeRestriction after the Node authorizer: a node agent may write its own Node (not the
//! labels kept from nodes) and only mirror pods, worded as Kubernetes' plugin; other users
//! are not limited.

use std::sync::Arc;

use apiary_api::ApiConfig;
use apiary_api::admission::PluginSelection;
use apiary_api::auth::ClientCertificate;
use apiary_api::auth::node::NodeAuthorizer;
use apiary_api::flavor::Flavor;
use apiary_api::storage::Storage;
use axum::Router;
use http::StatusCode;
use serde_json::json;

use super::AlwaysReady;
use super::admin_call;
use super::assert_status;
use super::backend_in;
use super::call;
use super::cert;
use super::created;
use super::fetched;

fn n1() -> Option<ClientCertificate> {
    Some(ClientCertificate::new(cert(
        "system:node:n1",
        Some("system:nodes"),
    )))
}

/// A router with the Node authorizer and NodeRestriction enabled, with nodes `n1` and `n2`.
async fn restricted_app() -> Router {
    let flavor = Flavor::Kubernetes;
    let (storage, _) = backend_in(flavor).await;
    let mut config = ApiConfig::new(flavor, Arc::new(AlwaysReady));
    let as_storage: Arc<dyn Storage> = storage.clone();
    config
        .authorizers
        .push(NodeAuthorizer::new(flavor, as_storage, true));
    let enable = ["NodeRestriction".to_owned()];
    config.admission = PluginSelection::new(&enable, &[]).expect("known plugins");
    let app = apiary_api::router(storage, config);
    for name in ["n1", "n2"] {
        let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}});
        created(&app, "/api/v1/nodes", &node.to_string()).await;
    }
    app
}

async fn label_node(app: &Router, node: &str, label: &str, as_node: bool) -> super::Reply {
    let path = format!("/api/v1/nodes/{node}");
    let mut current = fetched(app, &path).await;
    current["metadata"]["labels"][label] = json!("x");
    let user = match as_node {
        true => n1(),
        false => Some(super::admin()),
    };
    call(app, "PUT", &path, Some(&current.to_string()), user).await
}

// R-ACC-174, R-ACC-176: a node changes only its own Node, and not the restricted labels; an
// administrator is not limited.
#[tokio::test]
async fn a_node_modifies_only_its_own_node_and_labels() {
    let app = restricted_app().await;
    let other = label_node(&app, "n2", "team", true).await;
    let status = assert_status(&other, 403, "Forbidden");
    assert_eq!(
        status["message"],
        "nodes \"n2\" is forbidden: node \"n1\" is not allowed to modify node \"n2\""
    );
    let own = label_node(&app, "n1", "kubernetes.io/hostname", true).await;
    assert_eq!(own.status, StatusCode::OK, "{}", own.text());
    let restricted = "node-restriction.kubernetes.io/pool";
    let refused = label_node(&app, "n1", restricted, true).await;
    let status = assert_status(&refused, 403, "Forbidden");
    assert_eq!(
        status["message"],
        format!("nodes \"n1\" is forbidden: is not allowed to modify labels: {restricted}")
    );
    let admin = label_node(&app, "n1", restricted, false).await;
    assert_eq!(admin.status, StatusCode::OK, "{}", admin.text());
}

// R-ACC-174: a node creates only mirror pods bound to itself.
#[tokio::test]
async fn a_node_creates_only_mirror_pods() {
    let app = restricted_app().await;
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i"}]}});
    let path = "/api/v1/namespaces/default/pods";
    let refused = call(&app, "POST", path, Some(&pod.to_string()), n1()).await;
    let status = assert_status(&refused, 403, "Forbidden");
    assert_eq!(
        status["message"],
        "pods \"p\" is forbidden: pod does not have \"kubernetes.io/config.mirror\" annotation, \
         node \"n1\" can only create mirror pods"
    );
    let made = admin_call(&app, "POST", path, Some(&pod.to_string())).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());
}
