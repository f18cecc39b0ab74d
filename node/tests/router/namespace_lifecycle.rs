//! Namespace lifecycle through the router: creates in a terminating namespace are refused
//! with Kubernetes' `NamespaceTerminating` cause, the system namespaces cannot be deleted, and
//! the namespace controller, run in-process against the router, empties a terminating
//! namespace, reports its conditions and finalizes it.

use std::sync::Arc;

use apiary_api::Flavor;
use apiary_api::SystemClock;
use apiary_node::controllers::Controller;
use apiary_node::controllers::ControllerContext;
use apiary_node::controllers::changes::Changes;
use apiary_node::controllers::client::InProcessClient;
use apiary_node::controllers::namespace::NamespaceController;
use apiary_node::controllers::rbac_bootstrap::reconcile_defaults;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::*;

async fn namespace(app: &axum::Router, name: &str) {
    created(
        app,
        "/api/v1/namespaces",
        &json!({"metadata": {"name": name}}).to_string(),
    )
    .await;
}

// No CHECKLIST ID (Kubernetes' NamespaceLifecycle admission): a create in a terminating
// namespace is 403 Forbidden with the `NamespaceTerminating` cause on `metadata.namespace`,
// naming the object (its `generateName` when it has no name).
#[tokio::test]
async fn creates_in_a_terminating_namespace_are_refused_with_the_cause() {
    let (app, _) = app().await;
    namespace(&app, "closing").await;
    let deleting = admin_call(&app, "DELETE", "/api/v1/namespaces/closing", None).await;
    assert_eq!(deleting.status, StatusCode::OK, "{}", deleting.text());
    let path = "/api/v1/namespaces/closing/configmaps";
    let refused = admin_call(&app, "POST", path, Some(&cm("late"))).await;
    let status = assert_status(&refused, 403, "Forbidden");
    assert_eq!(
        status["message"],
        "configmaps \"late\" is forbidden: unable to create new content in namespace closing because it is being terminated"
    );
    assert_eq!(
        status["details"],
        json!({
            "name": "late",
            "kind": "configmaps",
            "causes": [{
                "reason": "NamespaceTerminating",
                "message": "namespace closing is being terminated",
                "field": "metadata.namespace",
            }],
        })
    );
    let generated = r#"{"metadata":{"generateName":"gen-"},"data":{}}"#;
    let refused = admin_call(&app, "POST", path, Some(generated)).await;
    let status = assert_status(&refused, 403, "Forbidden");
    assert_eq!(status["details"]["name"], "gen-");
    let apps = "/apis/apps/v1/namespaces/closing/deployments";
    let refused = admin_call(&app, "POST", apps, Some(r#"{"metadata":{"name":"d"}}"#)).await;
    let status = assert_status(&refused, 403, "Forbidden");
    assert_eq!(status["details"]["group"], "apps");
    assert_eq!(
        status["details"]["causes"][0]["reason"],
        "NamespaceTerminating"
    );

    let missing = admin_call(
        &app,
        "POST",
        "/api/v1/namespaces/never/configmaps",
        Some(&cm("x")),
    )
    .await;
    assert_status(&missing, 404, "NotFound");
}

// No CHECKLIST ID (Kubernetes' NamespaceLifecycle admission): `default` and the flavor's
// system and public namespaces cannot be deleted; other namespaces can.
#[tokio::test]
async fn system_namespaces_cannot_be_deleted() {
    for (flavor, system, public) in [
        (Flavor::Kubernetes, "kube-system", "kube-public"),
        (Flavor::Platform, "platform-system", "platform-public"),
    ] {
        let (app, _) = app_in(flavor).await;
        for name in ["default", system, public] {
            let path = format!("/api/v1/namespaces/{name}");
            let refused = admin_call(&app, "DELETE", &path, None).await;
            let status = assert_status(&refused, 403, "Forbidden");
            assert_eq!(
                status["message"],
                format!("namespaces \"{name}\" is forbidden: this namespace may not be deleted")
            );
            assert_eq!(
                status["details"],
                json!({"name": name, "kind": "namespaces"})
            );
            let still = fetched(&app, &path).await;
            assert_eq!(still["status"]["phase"], "Active", "{name}");
            assert!(still["metadata"].get("deletionTimestamp").is_none());
        }
        namespace(&app, "mortal").await;
        let deleted = admin_call(&app, "DELETE", "/api/v1/namespaces/mortal", None).await;
        assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.text());
    }
}

// R-RES-015, R-RES-060, R-RES-061: the namespace controller deletes every namespaced object
// of several kinds in a terminating namespace, leaves objects held by finalizers (reporting
// them in the namespace's conditions, with Kubernetes' reasons and messages), and removes the
// namespace once their finalizers are gone; other namespaces are untouched.
#[tokio::test]
async fn the_namespace_controller_empties_and_finalizes_a_namespace() {
    // The controller's own identity, authorized by the default RBAC policy.
    let (app, storage, rbac) = super::rbac::rbac_app().await;
    let loopback = InProcessClient::loopback(app.clone());
    reconcile_defaults(&loopback, Flavor::Kubernetes)
        .await
        .expect("default policy");
    super::rbac::settled(&storage, &rbac).await;
    namespace(&app, "doomed").await;
    namespace(&app, "kept").await;
    for ns in ["doomed", "kept"] {
        let base = format!("/api/v1/namespaces/{ns}");
        created(&app, &format!("{base}/configmaps"), &cm("plain")).await;
        let held = r#"{"metadata":{"name":"held","finalizers":["example.com/hold"]},"data":{}}"#;
        created(&app, &format!("{base}/configmaps"), held).await;
        created(
            &app,
            &format!("{base}/secrets"),
            r#"{"metadata":{"name":"s"},"data":{}}"#,
        )
        .await;
        created(
            &app,
            &format!("/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles"),
            r#"{"metadata":{"name":"r"},"rules":[]}"#,
        )
        .await;
    }
    let deleting = admin_call(&app, "DELETE", "/api/v1/namespaces/doomed", None).await;
    assert_eq!(deleting.status, StatusCode::OK, "{}", deleting.text());

    let (changes, receiver) = watch::channel(0);
    let context = ControllerContext {
        api: app.clone(),
        flavor: Flavor::Kubernetes,
        clock: Arc::new(SystemClock),
        changes: Changes::of_revisions(receiver),
    };
    let stop = CancellationToken::new();
    let running = {
        let stop = stop.clone();
        tokio::spawn(async move { NamespaceController.run(context, stop).await })
    };

    let ns = poll_until(
        &app,
        &changes,
        "/api/v1/namespaces/doomed",
        "conditions",
        |r| condition(&r.json(), "NamespaceFinalizersRemaining")["status"] == "True",
    )
    .await
    .json();
    assert_eq!(ns["status"]["phase"], "Terminating");
    assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
    let remaining = condition(&ns, "NamespaceContentRemaining");
    assert_eq!(remaining["status"], "True");
    assert_eq!(remaining["reason"], "SomeResourcesRemain");
    assert_eq!(
        remaining["message"],
        "Some resources are remaining: configmaps. has 1 resource instances"
    );
    let finalizers = condition(&ns, "NamespaceFinalizersRemaining");
    assert_eq!(finalizers["reason"], "SomeFinalizerRemain");
    assert_eq!(
        finalizers["message"],
        "Some finalizers are remaining: example.com/hold in 1 resource instances"
    );
    for (kind, reason) in [
        ("NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered"),
        (
            "NamespaceDeletionGroupVersionParsingFailure",
            "ParsedGroupVersions",
        ),
        ("NamespaceDeletionContentFailure", "ContentDeleted"),
    ] {
        let c = condition(&ns, kind);
        assert_eq!(
            (c["status"].as_str(), c["reason"].as_str()),
            (Some("False"), Some(reason)),
            "{c}"
        );
    }
    let items = |path: String| {
        let app = app.clone();
        async move {
            fetched(&app, &path).await["items"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        }
    };
    let left: Vec<Value> = items("/api/v1/namespaces/doomed/configmaps".into()).await;
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["metadata"]["name"], "held");
    assert!(left[0]["metadata"]["deletionTimestamp"].is_string());
    assert!(
        items("/api/v1/namespaces/doomed/secrets".into())
            .await
            .is_empty()
    );
    let roles = "/apis/rbac.authorization.k8s.io/v1/namespaces/doomed/roles";
    assert!(items(roles.into()).await.is_empty());

    let mut held = left[0].clone();
    held["metadata"]["finalizers"] = json!([]);
    let released = admin_call(
        &app,
        "PUT",
        "/api/v1/namespaces/doomed/configmaps/held",
        Some(&held.to_string()),
    )
    .await;
    assert_eq!(released.status, StatusCode::OK, "{}", released.text());
    poll_until(
        &app,
        &changes,
        "/api/v1/namespaces/doomed",
        "removal",
        |r| r.status == StatusCode::NOT_FOUND,
    )
    .await;
    stop.cancel();
    running.await.unwrap();

    assert_eq!(
        items("/api/v1/namespaces/kept/configmaps".into())
            .await
            .len(),
        2
    );
    assert_eq!(
        items("/api/v1/namespaces/kept/secrets".into()).await.len(),
        1
    );
    assert_eq!(
        fetched(&app, "/api/v1/namespaces/kept").await["status"]["phase"],
        "Active"
    );
}
