//! The `serviceaccount` and `root-ca-cert-publisher` controllers, as their own
//! ServiceAccounts under the default RBAC policy: every active namespace gets its `default`
//! ServiceAccount and its `kube-root-ca.crt` ConfigMap, again when they are deleted or
//! changed; a terminating namespace gets neither.

use std::sync::Arc;

use apiary_api::Flavor;
use apiary_api::SystemClock;
use apiary_node::controllers::Controller;
use apiary_node::controllers::ControllerContext;
use apiary_node::controllers::changes::Changes;
use apiary_node::controllers::client::InProcessClient;
use apiary_node::controllers::rbac_bootstrap::reconcile_defaults;
use apiary_node::controllers::root_ca_publisher::DESCRIPTION;
use apiary_node::controllers::root_ca_publisher::RootCaPublisher;
use apiary_node::controllers::service_accounts::ServiceAccounts;
use http::StatusCode;
use serde_json::json;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::Reply;
use super::admin_call;
use super::created;
use super::poll_until;

const BUNDLE: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

fn account(namespace: &str) -> String {
    format!("/api/v1/namespaces/{namespace}/serviceaccounts/default")
}

fn root_ca(namespace: &str) -> String {
    format!("/api/v1/namespaces/{namespace}/configmaps/kube-root-ca.crt")
}

fn found(reply: &Reply) -> bool {
    reply.status == StatusCode::OK
}

fn published(reply: &Reply) -> bool {
    found(reply) && reply.json()["data"] == json!({"ca.crt": BUNDLE})
}

// R-ACC-124: the accounts pods run as exist in every namespace without anyone creating
// them, and the CA bundle their token volume projects with them.
#[tokio::test]
async fn every_active_namespace_gets_its_default_account_and_the_ca_bundle() {
    let (app, storage, rbac) = super::rbac::rbac_app().await;
    let loopback = InProcessClient::loopback(app.clone());
    reconcile_defaults(&loopback, Flavor::Kubernetes)
        .await
        .expect("default policy");
    super::rbac::settled(&storage, &rbac).await;
    let namespace = |name: &str| {
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}).to_string()
    };
    created(&app, "/api/v1/namespaces", &namespace("leaving")).await;
    let reply = admin_call(&app, "DELETE", "/api/v1/namespaces/leaving", None).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());

    let (changes, receiver) = watch::channel(0);
    let stop = CancellationToken::new();
    let controllers: [Arc<dyn Controller>; 2] = [
        Arc::new(ServiceAccounts),
        Arc::new(RootCaPublisher {
            bundle: Arc::from(BUNDLE),
        }),
    ];
    let mut running = Vec::new();
    for controller in controllers {
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
    poll_until(&app, &changes, &account("a"), "a's account", found).await;
    poll_until(&app, &changes, &account("b"), "b's account", found).await;
    let map = poll_until(&app, &changes, &root_ca("a"), "a's bundle", published).await;
    assert_eq!(
        map.json()["metadata"]["annotations"],
        json!({"kubernetes.io/description": DESCRIPTION})
    );
    poll_until(&app, &changes, &root_ca("b"), "b's bundle", published).await;

    created(&app, "/api/v1/namespaces", &namespace("c")).await;
    poll_until(
        &app,
        &changes,
        &account("c"),
        "a new namespace's account",
        found,
    )
    .await;
    poll_until(
        &app,
        &changes,
        &root_ca("c"),
        "a new namespace's bundle",
        published,
    )
    .await;

    let reply = admin_call(&app, "DELETE", &account("a"), None).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    poll_until(&app, &changes, &account("a"), "a's account again", found).await;

    let mut changed = map.json();
    changed["data"] = json!({"ca.crt": "forged"});
    changed["metadata"]["annotations"] = json!({"note": "mine"});
    let reply = admin_call(&app, "PUT", &root_ca("a"), Some(&changed.to_string())).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let map = poll_until(&app, &changes, &root_ca("a"), "a's bundle back", published).await;
    assert_eq!(
        map.json()["metadata"]["annotations"],
        json!({"note": "mine", "kubernetes.io/description": DESCRIPTION}),
        "other annotations are kept"
    );

    for path in [account("leaving"), root_ca("leaving")] {
        let reply = admin_call(&app, "GET", &path, None).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{path}: terminating");
    }
    stop.cancel();
    for task in running {
        task.await.expect("controller ends");
    }
}
