//! The Node authorizer in the router's chain: a node agent's client certificate reads the
//! secret of the pod bound to its node and is refused another node's, as the graph follows
//! the store.

use std::sync::Arc;
use std::time::Duration;

use apiary_api::ApiConfig;
use apiary_api::auth::ClientCertificate;
use apiary_api::auth::node::NodeAuthorizer;
use apiary_api::flavor::Flavor;
use apiary_api::storage::Storage;
use axum::Router;
use http::StatusCode;
use serde_json::json;

use super::AlwaysReady;
use super::admin_call;
use super::backend_in;
use super::call;
use super::cert;
use super::created;

/// The agent of node `n1`.
fn n1() -> ClientCertificate {
    ClientCertificate::new(cert("system:node:n1", Some("system:nodes")))
}

/// A router whose chain ends with the Node authorizer (selectors on).
async fn node_app() -> Router {
    let flavor = Flavor::Kubernetes;
    let (storage, _) = backend_in(flavor).await;
    let mut config = ApiConfig::new(flavor, Arc::new(AlwaysReady));
    let as_storage: Arc<dyn Storage> = storage.clone();
    config
        .authorizers
        .push(NodeAuthorizer::new(flavor, as_storage, true));
    apiary_api::router(storage, config)
}

/// The status of GET `path` as `n1` once it is `want`, or the last one after a generous
/// bound: the graph follows the store's watch, so a write takes effect shortly after it.
async fn settles(app: &Router, path: &str, want: StatusCode) -> StatusCode {
    let mut status = StatusCode::OK;
    for _ in 0..500 {
        status = call(app, "GET", path, None, Some(n1())).await.status;
        if status == want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    status
}

/// A pod in `default` bound to `node`, mounting the secret `secret`.
fn pod(name: &str, node: &str, secret: &str) -> String {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "c", "image": "i"}],
            "volumes": [{"name": "s", "secret": {"secretName": secret}}],
        },
    })
    .to_string()
}

fn secret(name: &str) -> String {
    json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}}).to_string()
}

// R-ACC-169, R-ACC-171, R-ACC-172
#[tokio::test]
async fn a_node_reads_its_pods_secret_and_not_anothers() {
    let app = node_app().await;
    let secrets = "/api/v1/namespaces/default/secrets";
    let pods = "/api/v1/namespaces/default/pods";
    for name in ["s1", "s2"] {
        created(&app, secrets, &secret(name)).await;
    }
    created(&app, pods, &pod("p1", "n1", "s1")).await;
    created(&app, pods, &pod("p2", "n2", "s2")).await;

    let mine = format!("{secrets}/s1");
    assert_eq!(settles(&app, &mine, StatusCode::OK).await, StatusCode::OK);
    let reply = call(&app, "GET", &mine, None, Some(n1())).await;
    assert_eq!(reply.json()["metadata"]["name"], "s1");
    let theirs = call(&app, "GET", &format!("{secrets}/s2"), None, Some(n1())).await;
    assert_eq!(theirs.status, StatusCode::FORBIDDEN, "{}", theirs.text());
    assert!(
        theirs
            .text()
            .contains("no relationship found between node 'n1' and this object"),
        "{}",
        theirs.text()
    );
    let own_pod = call(&app, "GET", &format!("{pods}/p1"), None, Some(n1())).await;
    assert_eq!(own_pod.status, StatusCode::OK);
    let other_pod = call(&app, "GET", &format!("{pods}/p2"), None, Some(n1())).await;
    assert_eq!(other_pod.status, StatusCode::FORBIDDEN);
    let all = call(&app, "GET", secrets, None, Some(n1())).await;
    assert_eq!(all.status, StatusCode::FORBIDDEN);

    // Once the pod is gone (a bound pod goes at once only with no grace period), so is the
    // node's access to its secret.
    let p1 = format!("{pods}/p1?gracePeriodSeconds=0");
    let deleted = admin_call(&app, "DELETE", &p1, None).await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.text());
    let after = settles(&app, &mine, StatusCode::FORBIDDEN).await;
    assert_eq!(after, StatusCode::FORBIDDEN);
}
