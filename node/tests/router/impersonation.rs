//! Impersonation through the whole API (issue 14, item 2): `Impersonate-*` headers checked
//! with the authorizer chain, then the request flow-controlled, authorized and served as the
//! impersonated user (SelfSubjectReview shows who that is).

use std::sync::Arc;

use apiary_api::FeatureGates;
use apiary_api::auth::Attributes;
use apiary_api::auth::Authorizer;
use apiary_api::auth::BasicUserAuthorizer;
use apiary_api::auth::Decision;
use apiary_api::auth::SystemMastersAuthorizer;
use serde_json::Value;
use serde_json::json;

use super::*;

const WHOAMI: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

/// Lets `bob` impersonate the user `alice`, the group `dev` and the service account
/// `ns1/robot` with the legacy verb; no opinion on anything else.
struct BobImpersonates;

#[async_trait::async_trait]
impl Authorizer for BobImpersonates {
    async fn authorize(&self, attributes: &Attributes<'_>) -> Decision {
        let r = attributes.request;
        let target = (
            r.api_group.as_str(),
            r.resource.as_str(),
            r.namespace.as_str(),
            r.name.as_str(),
        );
        let granted = attributes.user.name == "bob"
            && r.verb.as_str() == "impersonate"
            && matches!(
                target,
                ("", "users", "", "alice")
                    | ("", "groups", "", "dev")
                    | ("", "serviceaccounts", "ns1", "robot")
            );
        if granted {
            Decision::Allow
        } else {
            Decision::NoOpinion(String::new())
        }
    }
}

/// A router whose chain is [`BobImpersonates`], `system:masters` and the self reviews of every
/// authenticated user, with `gates`.
async fn impersonation_app(gates: FeatureGates) -> Router {
    let (storage, _) = backend_in(Flavor::Kubernetes).await;
    let mut config = ApiConfig::new(Flavor::Kubernetes, Arc::new(AlwaysReady));
    config.authorizers = vec![
        Arc::new(BobImpersonates),
        Arc::new(SystemMastersAuthorizer),
        Arc::new(BasicUserAuthorizer::new(Flavor::Kubernetes)),
    ];
    config.feature_gates = gates;
    apiary_api::router(storage, config)
}

/// `method path` as `who` with the impersonation `headers`.
async fn acting(
    app: &Router,
    who: ClientCertificate,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> Reply {
    let body = if method == "POST" {
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}).to_string()
    } else {
        String::new()
    };
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json");
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let mut req = req.body(Body::from(body)).expect("request");
    req.extensions_mut().insert(who);
    send(app, req).await
}

/// Who a SelfSubjectReview by `who` with `headers` says the caller is.
async fn whoami(app: &Router, who: ClientCertificate, headers: &[(&str, &str)]) -> Value {
    let reply = acting(app, who, "POST", WHOAMI, headers).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
    reply.json()["status"]["userInfo"].clone()
}

fn legacy_only() -> FeatureGates {
    FeatureGates::parse(["ConstrainedImpersonation=false"])
        .expect("gates")
        .0
}

// R-ACC-149, R-ACC-150, R-ACC-151, R-ACC-152, R-ACC-157: an allowed impersonation runs the
// request as the user the headers name (every group header, the uid, the extras with their
// decoded lower-case key), plus system:authenticated.
#[tokio::test]
async fn the_request_runs_as_the_impersonated_user() {
    let app = impersonation_app(FeatureGates::default()).await;
    let headers = [
        ("impersonate-user", "alice"),
        ("impersonate-group", "dev"),
        ("impersonate-group", "ops"),
        ("impersonate-uid", "u-1"),
        ("impersonate-extra-acme.io%2FScopes", "read"),
        ("impersonate-extra-acme.io%2FScopes", "write"),
    ];
    assert_eq!(
        whoami(&app, admin(), &headers).await,
        json!({
            "username": "alice",
            "uid": "u-1",
            "groups": ["dev", "ops", "system:authenticated"],
            "extra": {"acme.io/scopes": ["read", "write"]},
        })
    );
    // Authorized as alice, not as the admin who asked.
    let reply = acting(&app, admin(), "GET", "/api/v1/namespaces", &headers).await;
    let status = assert_status(&reply, 403, "Forbidden");
    assert_eq!(
        status["message"],
        r#"namespaces is forbidden: User "alice" cannot list resource "namespaces" in API group "" at the cluster scope"#
    );
}

// R-ACC-154, R-ACC-155, R-ACC-157: a caller holding `impersonate` on some names may act as
// those and no others; a service account gets its groups. Without the verb: 403 naming the
// caller and what it may not impersonate.
#[tokio::test]
async fn only_granted_names_may_be_impersonated() {
    for gates in [FeatureGates::default(), legacy_only()] {
        let app = impersonation_app(gates).await;
        let alice = whoami(
            &app,
            bob(),
            &[("impersonate-user", "alice"), ("impersonate-group", "dev")],
        )
        .await;
        assert_eq!(
            alice,
            json!({"username": "alice", "groups": ["dev", "system:authenticated"]})
        );
        let robot = whoami(
            &app,
            bob(),
            &[("impersonate-user", "system:serviceaccount:ns1:robot")],
        )
        .await;
        assert_eq!(
            robot["groups"],
            json!([
                "system:serviceaccounts",
                "system:serviceaccounts:ns1",
                "system:authenticated"
            ])
        );
    }

    let app = impersonation_app(legacy_only()).await;
    for (headers, message) in [
        (
            &[("impersonate-user", "carol")][..],
            r#"users "carol" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope"#,
        ),
        (
            &[("impersonate-user", "alice"), ("impersonate-group", "ops")][..],
            r#"groups "ops" is forbidden: User "bob" cannot impersonate resource "groups" in API group "" at the cluster scope"#,
        ),
        (
            &[("impersonate-user", "system:serviceaccount:ns2:robot")][..],
            r#"serviceaccounts "robot" is forbidden: User "bob" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "ns2""#,
        ),
        (
            &[("impersonate-user", "alice"), ("impersonate-uid", "u-1")][..],
            r#"uids.authentication.k8s.io "u-1" is forbidden: User "bob" cannot impersonate resource "uids" in API group "authentication.k8s.io" at the cluster scope"#,
        ),
    ] {
        let reply = acting(&app, bob(), "POST", WHOAMI, headers).await;
        let status = assert_status(&reply, 403, "Forbidden");
        assert_eq!(status["message"], message, "{headers:?}");
    }

    // With constrained impersonation on, the first refusal is the user-info mode's.
    let app = impersonation_app(FeatureGates::default()).await;
    let reply = acting(&app, bob(), "GET", "/api", &[("impersonate-user", "carol")]).await;
    let status = assert_status(&reply, 403, "Forbidden");
    assert_eq!(
        status["message"],
        r#"forbidden: User "bob" cannot impersonate-on:user-info:get path "/api""#
    );
}

// R-ACC-153: a group, uid or extra without a user is refused with 400, before any check.
#[tokio::test]
async fn parts_without_a_user_are_refused() {
    let app = impersonation_app(FeatureGates::default()).await;
    for headers in [
        &[("impersonate-group", "dev")][..],
        &[("impersonate-uid", "u-1")][..],
        &[("impersonate-extra-scopes", "read")][..],
    ] {
        let reply = acting(&app, admin(), "POST", WHOAMI, headers).await;
        let status = assert_status(&reply, 400, "BadRequest");
        let message = status["message"].as_str().expect("message");
        assert!(
            message.ends_with("without impersonating a user name"),
            "{message}"
        );
    }
}
