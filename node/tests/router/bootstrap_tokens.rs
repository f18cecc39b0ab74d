//! Bootstrap tokens as bearer credentials, and the in-process identity of the controllers.

use apiary_api::auth::BootstrapTokenAuthenticator;
use apiary_api::auth::InProcessUser;
use apiary_api::auth::UserInfo;
use serde_json::json;

use super::*;

const TOKEN: &str = "abcdef.0123456789abcdef";
const SECRETS: &str = "/api/v1/namespaces/kube-system/secrets";
const WHOAMI: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

/// A router whose bearer tokens are bootstrap tokens (`--enable-bootstrap-token-auth`).
async fn bootstrap_app() -> Router {
    let (storage, _) = backend_in(Flavor::Kubernetes).await;
    let mut config = ApiConfig::new(Flavor::Kubernetes, Arc::new(AlwaysReady));
    config
        .authentication
        .tokens
        .push(Arc::new(BootstrapTokenAuthenticator));
    apiary_api::router(storage, config)
}

/// The Secret of token `abcdef.0123456789abcdef`, with `string_data` over a usable default.
fn token_secret(namespace: &str, type_: &str, string_data: Value) -> String {
    let mut data = json!({
        "token-id": "abcdef",
        "token-secret": "0123456789abcdef",
        "usage-bootstrap-authentication": "true",
        "auth-extra-groups": "system:bootstrappers:nodes",
    });
    if let (Some(data), Value::Object(over)) = (data.as_object_mut(), string_data) {
        data.extend(over);
    }
    json!({
        "metadata": {"name": "bootstrap-token-abcdef", "namespace": namespace},
        "type": type_,
        "stringData": data,
    })
    .to_string()
}

/// Creates the token Secret as the admin.
async fn store_secret(app: &Router, namespace: &str, body: &str) {
    let path = format!("/api/v1/namespaces/{namespace}/secrets");
    let reply = admin_call(app, "POST", &path, Some(body)).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
}

/// A SelfSubjectReview sent with `Authorization: Bearer <token>`.
async fn whoami(app: &Router, token: &str) -> Reply {
    let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let request = Request::builder()
        .method("POST")
        .uri(WHOAMI)
        .header("content-type", "application/json")
        .header("authorization", format!("Bearer {token}"))
        .body(Body::from(body.to_string()))
        .expect("request");
    send(app, request).await
}

// R-ACC-018, R-ACC-023, R-ACC-025, R-ACC-026, R-ACC-119: the token of a bootstrap token Secret
// in the system namespace authenticates as system:bootstrap:<id> in system:bootstrappers plus
// its extra groups.
#[tokio::test]
async fn a_bootstrap_token_authenticates_as_its_bootstrap_user() {
    let app = bootstrap_app().await;
    let token_type = "bootstrap.kubernetes.io/token";
    store_secret(
        &app,
        "kube-system",
        &token_secret("kube-system", token_type, json!({})),
    )
    .await;
    let reply = whoami(&app, TOKEN).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
    assert_eq!(
        reply.json()["status"]["userInfo"],
        json!({
            "username": "system:bootstrap:abcdef",
            "groups": ["system:bootstrappers", "system:bootstrappers:nodes", "system:authenticated"],
        })
    );
}

// R-ACC-023, R-ACC-025, R-ACC-080: an expired token, one not marked for authentication, one
// with a foreign extra group, one whose Secret names another id, and a wrong secret are all 401.
#[tokio::test]
async fn invalid_bootstrap_tokens_are_401() {
    let token_type = "bootstrap.kubernetes.io/token";
    for (why, over) in [
        ("expired", json!({"expiration": "2000-01-01T00:00:00Z"})),
        (
            "not for authentication",
            json!({"usage-bootstrap-authentication": "false"}),
        ),
        (
            "foreign group",
            json!({"auth-extra-groups": "system:masters"}),
        ),
        ("other id", json!({"token-id": "zzzzzz"})),
    ] {
        let app = bootstrap_app().await;
        store_secret(
            &app,
            "kube-system",
            &token_secret("kube-system", token_type, over),
        )
        .await;
        let reply = whoami(&app, TOKEN).await;
        assert_status(&reply, 401, "Unauthorized");
        assert_eq!(reply.json()["message"], "Unauthorized", "{why}");
        assert!(!reply.text().contains("0123456789abcdef"), "{why}");
    }
    let app = bootstrap_app().await;
    store_secret(
        &app,
        "kube-system",
        &token_secret("kube-system", token_type, json!({})),
    )
    .await;
    assert_status(
        &whoami(&app, "abcdef.0123456789abcdee").await,
        401,
        "Unauthorized",
    );
    let reply = whoami(&app, "abcdef.0123456789abcdef").await;
    assert_eq!(
        reply.status,
        StatusCode::CREATED,
        "the right token still works"
    );
}

// R-ACC-018, R-ACC-119: only a Secret of the bootstrap type, named after the token, in the
// system namespace counts; and only with `--enable-bootstrap-token-auth`.
#[tokio::test]
async fn only_bootstrap_secrets_in_the_system_namespace_count() {
    let token_type = "bootstrap.kubernetes.io/token";
    let app = bootstrap_app().await;
    store_secret(
        &app,
        "kube-system",
        &token_secret("kube-system", "Opaque", json!({})),
    )
    .await;
    assert_status(&whoami(&app, TOKEN).await, 401, "Unauthorized");

    let app = bootstrap_app().await;
    store_secret(
        &app,
        "default",
        &token_secret("default", token_type, json!({})),
    )
    .await;
    assert_status(&whoami(&app, TOKEN).await, 401, "Unauthorized");

    let (plain, _) = app_in(Flavor::Kubernetes).await;
    store_secret(
        &plain,
        "kube-system",
        &token_secret("kube-system", token_type, json!({})),
    )
    .await;
    assert_status(&whoami(&plain, TOKEN).await, 401, "Unauthorized");
}

// A bootstrap token whose Secret is being deleted (held by a finalizer) no longer
// authenticates.
#[tokio::test]
async fn a_terminating_token_secret_does_not_authenticate() {
    let app = bootstrap_app().await;
    let mut secret: Value = serde_json::from_str(&token_secret(
        "kube-system",
        "bootstrap.kubernetes.io/token",
        json!({}),
    ))
    .expect("json");
    secret["metadata"]["finalizers"] = json!(["example.com/hold"]);
    store_secret(&app, "kube-system", &secret.to_string()).await;
    assert_eq!(whoami(&app, TOKEN).await.status, StatusCode::CREATED);
    let path = format!("{SECRETS}/bootstrap-token-abcdef");
    let deleted = admin_call(&app, "DELETE", &path, None).await;
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.text());
    assert_status(&whoami(&app, TOKEN).await, 401, "Unauthorized");
}

/// `method path` as the in-process user `name`.
async fn in_process(app: &Router, method: &str, path: &str, name: &str) -> Reply {
    let mut request = Request::builder()
        .method(method)
        .uri(path)
        .body(Body::empty())
        .expect("request");
    let user = UserInfo {
        name: name.to_owned(),
        ..UserInfo::default()
    };
    request.extensions_mut().insert(InProcessUser(user));
    send(app, request).await
}

// The controllers' in-process identity is authenticated from the request extension and gets
// its bootstrap-policy role's rules, nothing more; a request without the extension is anonymous.
#[tokio::test]
async fn in_process_controllers_act_with_their_roles() {
    let (app, _) = app().await;
    let cleaner = "system:serviceaccount:kube-system:token-cleaner";
    let signer = "system:serviceaccount:kube-system:bootstrap-signer";
    assert_eq!(
        in_process(&app, "GET", SECRETS, cleaner).await.status,
        StatusCode::OK
    );
    assert_eq!(
        in_process(&app, "GET", SECRETS, signer).await.status,
        StatusCode::OK
    );
    let public = "/api/v1/namespaces/kube-public/configmaps";
    assert_eq!(
        in_process(&app, "GET", public, signer).await.status,
        StatusCode::OK
    );
    assert_status(
        &in_process(&app, "GET", public, cleaner).await,
        403,
        "Forbidden",
    );
    assert_status(
        &in_process(&app, "GET", CM_PATH, signer).await,
        403,
        "Forbidden",
    );
    assert_status(
        &call(&app, "GET", SECRETS, None, None).await,
        403,
        "Forbidden",
    );
}
