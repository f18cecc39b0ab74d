//! The computed kinds through the router: the authentication reviews (selfsubjectreviews,
//! tokenreviews), the authorization reviews (the three access reviews and the rules
//! review), componentstatuses, and their discovery and OpenAPI entries.

use std::sync::Arc;
use std::sync::OnceLock;

use rsa::RsaPrivateKey;
use rsa::pkcs8::EncodePrivateKey;
use rsa::pkcs8::LineEnding;
use serde_json::Value;
use serde_json::json;

use super::*;
use apiary_api::RsaTokenSigner;
use apiary_api::auth::Attributes;
use apiary_api::auth::Authorizer;
use apiary_api::auth::Decision;
use apiary_api::auth::ServiceAccountTokenAuthenticator;
use apiary_api::auth::SystemMastersAuthorizer;

const ISSUER: &str = "https://apiary.test";

/// Denies every `delete`; no opinion on anything else, and cannot list its rules.
struct NoDeletes;

#[async_trait::async_trait]
impl Authorizer for NoDeletes {
    async fn authorize(&self, attributes: &Attributes<'_>) -> Decision {
        if attributes.request.verb.as_str() == "delete" {
            Decision::Deny("deletes are off".to_owned())
        } else {
            Decision::NoOpinion(String::new())
        }
    }
}

/// A replica that cannot serve.
struct NeverReady;

impl Readiness for NeverReady {
    fn check(&self) -> Result<(), String> {
        Err("no leader".to_owned())
    }
}

fn signer() -> RsaTokenSigner {
    static PEM: OnceLock<String> = OnceLock::new();
    let pem = PEM.get_or_init(|| {
        let key = RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048).expect("key");
        key.to_pkcs8_pem(LineEnding::LF).expect("pem").to_string()
    });
    RsaTokenSigner::from_pem(pem.as_bytes(), ISSUER, vec![ISSUER.to_owned()]).expect("signer")
}

/// A router in `flavor` with a token signer and, when `deny_deletes`, [`NoDeletes`] in
/// front of `system:masters`.
async fn review_app(flavor: Flavor, deny_deletes: bool) -> Router {
    let (storage, _) = backend_in(flavor).await;
    let mut config = ApiConfig::new(flavor, Arc::new(AlwaysReady));
    let signer = signer();
    config.authentication.api_audiences = vec![ISSUER.to_owned()];
    config.authentication.tokens = vec![Arc::new(ServiceAccountTokenAuthenticator::new(
        vec![signer.verifying_key().clone()],
        vec![ISSUER.to_owned()],
        vec![ISSUER.to_owned()],
        true,
    ))];
    config.token_signer = Some(Arc::new(signer));
    if deny_deletes {
        config.authorizers = vec![Arc::new(NoDeletes), Arc::new(SystemMastersAuthorizer)];
    }
    apiary_api::router(storage, config)
}

fn authn(flavor: Flavor) -> String {
    format!("/apis/authentication.{}/v1", flavor.group_domain())
}

fn authz(flavor: Flavor) -> String {
    format!("/apis/authorization.{}/v1", flavor.group_domain())
}

/// POSTs `body` to `path` as the admin and answers the created review.
async fn reviewed(app: &Router, path: &str, body: &Value) -> Value {
    let reply = admin_call(app, "POST", path, Some(&body.to_string())).await;
    assert_eq!(
        reply.status,
        StatusCode::CREATED,
        "{path}: {}",
        reply.text()
    );
    reply.json()
}

fn access_review(flavor: Flavor, kind: &str, spec: Value) -> Value {
    json!({
        "apiVersion": format!("authorization.{}/v1", flavor.group_domain()),
        "kind": kind,
        "spec": spec,
    })
}

fn resource(verb: &str, resource: &str, namespace: &str) -> Value {
    json!({"resourceAttributes": {"verb": verb, "resource": resource, "namespace": namespace}})
}

// R-ACC-016: a SelfSubjectReview answers the caller's user info, in both flavors; nothing is
// stored and no other verb is served (R-RES-009: no name needed).
#[tokio::test]
async fn self_subject_review_names_the_caller() {
    for flavor in [Flavor::Kubernetes, Flavor::Platform] {
        let app = review_app(flavor, false).await;
        let path = format!("{}/selfsubjectreviews", authn(flavor));
        let api_version = format!("authentication.{}/v1", flavor.group_domain());
        let body = json!({"apiVersion": api_version, "kind": "SelfSubjectReview"});
        let review = reviewed(&app, &path, &body).await;
        assert_eq!(review["kind"], "SelfSubjectReview");
        assert_eq!(review["apiVersion"], api_version.as_str());
        assert_eq!(
            review["status"]["userInfo"],
            json!({"username": "admin", "groups": ["system:masters", "system:authenticated"]})
        );
        assert_status(
            &admin_call(&app, "GET", &path, None).await,
            405,
            "MethodNotAllowed",
        );
        let named = format!("{path}/x");
        assert_status(
            &admin_call(&app, "DELETE", &named, None).await,
            405,
            "MethodNotAllowed",
        );
        let wrong = json!({"apiVersion": "v1", "kind": "SelfSubjectReview"});
        let reply = admin_call(&app, "POST", &path, Some(&wrong.to_string())).await;
        assert_status(&reply, 400, "BadRequest");
    }
}

// R-RES-007, R-ACC-095, R-ACC-079: access reviews ask the authorizer chain and answer
// allowed, denied and reason, for resource and non-resource attributes; the review is not
// stored.
#[tokio::test]
async fn access_reviews_answer_the_chain() {
    for flavor in [Flavor::Kubernetes, Flavor::Platform] {
        let app = review_app(flavor, true).await;
        let sar = format!("{}/subjectaccessreviews", authz(flavor));
        let mut spec = resource("create", "pods", "default");
        spec["user"] = "bob".into();
        let review = reviewed(
            &app,
            &sar,
            &access_review(flavor, "SubjectAccessReview", spec),
        )
        .await;
        assert_eq!(review["status"], json!({"allowed": false}));
        assert_eq!(review["spec"]["user"], "bob");

        let mut spec = resource("create", "pods", "default");
        spec["groups"] = json!(["system:masters"]);
        let review = reviewed(
            &app,
            &sar,
            &access_review(flavor, "SubjectAccessReview", spec),
        )
        .await;
        assert_eq!(review["status"], json!({"allowed": true}));

        let ssar = format!("{}/selfsubjectaccessreviews", authz(flavor));
        let kind = "SelfSubjectAccessReview";
        let allowed = access_review(flavor, kind, resource("get", "pods", "default"));
        assert_eq!(
            reviewed(&app, &ssar, &allowed).await["status"]["allowed"],
            true
        );
        let denied = access_review(flavor, kind, resource("delete", "pods", "default"));
        assert_eq!(
            reviewed(&app, &ssar, &denied).await["status"],
            json!({"allowed": false, "denied": true, "reason": "deletes are off"})
        );
        let path = json!({"nonResourceAttributes": {"path": "/healthz", "verb": "get"}});
        let review = reviewed(&app, &ssar, &access_review(flavor, kind, path)).await;
        assert_eq!(review["status"]["allowed"], true);

        // Nothing was stored: a list of the reviews is not served.
        assert_status(
            &admin_call(&app, "GET", &ssar, None).await,
            405,
            "MethodNotAllowed",
        );
    }
}

// R-ACC-079: exactly one of the attribute kinds, and a subject for SubjectAccessReview
// (upstream's 422 wording).
#[tokio::test]
async fn access_reviews_validate_their_spec() {
    let flavor = Flavor::Kubernetes;
    let app = review_app(flavor, false).await;
    let ssar = format!("{}/selfsubjectaccessreviews", authz(flavor));
    let none = access_review(flavor, "SelfSubjectAccessReview", json!({}));
    let reply = admin_call(&app, "POST", &ssar, Some(&none.to_string())).await;
    let status = assert_status(&reply, 422, "Invalid");
    assert!(
        status["message"].as_str().is_some_and(|m| m.contains(
            "spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified"
        )),
        "{status}"
    );
    let mut both = resource("get", "pods", "default");
    both["nonResourceAttributes"] = json!({"path": "/healthz", "verb": "get"});
    let both = access_review(flavor, "SelfSubjectAccessReview", both);
    let reply = admin_call(&app, "POST", &ssar, Some(&both.to_string())).await;
    let status = assert_status(&reply, 422, "Invalid");
    assert_eq!(
        status["details"]["causes"][0]["field"],
        "spec.nonResourceAttributes"
    );

    let sar = format!("{}/subjectaccessreviews", authz(flavor));
    let nobody = access_review(flavor, "SubjectAccessReview", resource("get", "pods", "a"));
    let reply = admin_call(&app, "POST", &sar, Some(&nobody.to_string())).await;
    let status = assert_status(&reply, 422, "Invalid");
    assert!(
        status["message"]
            .as_str()
            .is_some_and(|m| m.contains("at least one of user or group must be specified")),
        "{status}"
    );
}

// R-ACC-095, R-RES-010: LocalSubjectAccessReview is namespaced; its resource attributes must
// name the path's namespace (400, upstream's wording); non-resource attributes are refused.
#[tokio::test]
async fn local_access_reviews_stay_in_their_namespace() {
    for flavor in [Flavor::Kubernetes, Flavor::Platform] {
        let app = review_app(flavor, false).await;
        let kind = "LocalSubjectAccessReview";
        let local = format!(
            "{}/namespaces/default/localsubjectaccessreviews",
            authz(flavor)
        );
        let mut spec = resource("get", "pods", "default");
        spec["groups"] = json!(["system:masters"]);
        let review = reviewed(&app, &local, &access_review(flavor, kind, spec)).await;
        assert_eq!(review["status"]["allowed"], true);
        assert_eq!(review["metadata"]["namespace"], "default");

        let mut spec = resource("get", "pods", "other");
        spec["user"] = "bob".into();
        let body = access_review(flavor, kind, spec).to_string();
        let reply = admin_call(&app, "POST", &local, Some(&body)).await;
        let status = assert_status(&reply, 400, "BadRequest");
        assert_eq!(
            status["message"],
            "spec.resourceAttributes.namespace must match namespace: default"
        );

        let spec = json!({"user": "bob", "nonResourceAttributes": {"path": "/x", "verb": "get"}});
        let body = access_review(flavor, kind, spec).to_string();
        let reply = admin_call(&app, "POST", &local, Some(&body)).await;
        assert_status(&reply, 422, "Invalid");

        let cluster = format!("{}/localsubjectaccessreviews", authz(flavor));
        let reply = admin_call(&app, "POST", &cluster, Some("{}")).await;
        assert_status(&reply, 404, "NotFound");
    }
}

// R-ACC-095: the rules review lists what the chain grants: everything for system:masters,
// then what every authenticated user may do; a chain member that cannot list makes it
// incomplete.
#[tokio::test]
async fn rules_reviews_list_what_the_chain_grants() {
    let flavor = Flavor::Kubernetes;
    let path = format!("{}/selfsubjectrulesreviews", authz(flavor));
    let body = access_review(
        flavor,
        "SelfSubjectRulesReview",
        json!({"namespace": "default"}),
    );
    let app = review_app(flavor, false).await;
    let review = reviewed(&app, &path, &body).await;
    assert_eq!(
        review["status"],
        json!({
            "resourceRules": [
                {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
                {"verbs": ["create"], "apiGroups": ["authentication.k8s.io"],
                 "resources": ["selfsubjectreviews"]},
                {"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
                 "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]},
            ],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": false,
        })
    );
    let app = review_app(flavor, true).await;
    assert_eq!(
        reviewed(&app, &path, &body).await["status"]["incomplete"],
        true
    );
}

/// A service account `robot` in `default` and a token for it with `audiences`.
async fn robot_token(app: &Router, flavor: Flavor, audiences: Value) -> String {
    let accounts = "/api/v1/namespaces/default/serviceaccounts";
    let sa = r#"{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"robot"}}"#;
    let made = admin_call(app, "POST", accounts, Some(sa)).await;
    assert!(made.status.is_success() || made.status == StatusCode::CONFLICT);
    let request = json!({
        "apiVersion": format!("authentication.{}/v1", flavor.group_domain()),
        "kind": "TokenRequest",
        "spec": {"audiences": audiences},
    });
    let reply = reviewed(app, &format!("{accounts}/robot/token"), &request).await;
    reply["status"]["token"].as_str().expect("token").to_owned()
}

fn token_review(flavor: Flavor, spec: Value) -> Value {
    json!({
        "apiVersion": format!("authentication.{}/v1", flavor.group_domain()),
        "kind": "TokenReview",
        "spec": spec,
    })
}

// R-ACC-010..014, R-ACC-122: a TokenReview of a token the token subresource issued
// authenticates its service account; garbage, another audience and a token whose service
// account is gone answer authenticated false with an error, not an HTTP error.
#[tokio::test]
async fn token_reviews_verify_service_account_tokens() {
    for flavor in [Flavor::Kubernetes, Flavor::Platform] {
        let app = review_app(flavor, false).await;
        let path = format!("{}/tokenreviews", authn(flavor));
        let token = robot_token(&app, flavor, json!([])).await;
        let review = reviewed(&app, &path, &token_review(flavor, json!({"token": token}))).await;
        let status = &review["status"];
        assert_eq!(status["authenticated"], true, "{review}");
        assert_eq!(status["audiences"], json!([ISSUER]));
        let user = &status["user"];
        assert_eq!(user["username"], "system:serviceaccount:default:robot");
        assert_eq!(
            user["groups"],
            json!([
                "system:serviceaccounts",
                "system:serviceaccounts:default",
                "system:authenticated"
            ])
        );
        assert!(
            user["uid"].as_str().is_some_and(|u| !u.is_empty()),
            "{user}"
        );
        let credential = format!("authentication.{}/credential-id", flavor.label_domain());
        assert!(
            user["extra"][&credential][0]
                .as_str()
                .is_some_and(|c| c.starts_with("JTI="))
        );

        let other = json!({"token": token, "audiences": ["elsewhere"]});
        let review = reviewed(&app, &path, &token_review(flavor, other)).await;
        assert_eq!(review["status"]["authenticated"], false);
        assert!(
            review["status"]["error"]
                .as_str()
                .is_some_and(|e| e.contains("audiences"))
        );

        let garbage = json!({"token": "not.a.token"});
        let review = reviewed(&app, &path, &token_review(flavor, garbage)).await;
        assert_eq!(review["status"]["authenticated"], false);
        assert!(
            review["status"]["error"]
                .as_str()
                .is_some_and(|e| e.starts_with("[invalid bearer token, ")),
            "{review}"
        );

        let item = "/api/v1/namespaces/default/serviceaccounts/robot";
        assert_eq!(
            admin_call(&app, "DELETE", item, None).await.status,
            StatusCode::OK
        );
        let review = reviewed(&app, &path, &token_review(flavor, json!({"token": token}))).await;
        assert_eq!(review["status"]["authenticated"], false);
        assert!(
            review["status"]["error"]
                .as_str()
                .is_some_and(|e| e.contains("deleted"))
        );

        let empty = token_review(flavor, json!({})).to_string();
        let reply = admin_call(&app, "POST", &path, Some(&empty)).await;
        let status = assert_status(&reply, 400, "BadRequest");
        assert_eq!(
            status["message"],
            "token is required for TokenReview in authentication"
        );
    }
}

// R-RES-010: componentstatuses (get, list, cluster-scoped) answers the store's health from
// readiness; other verbs 405, a namespaced path 404.
#[tokio::test]
async fn component_statuses_report_the_store() {
    let (app, _) = app().await;
    let list = admin_call(&app, "GET", "/api/v1/componentstatuses", None).await;
    assert_eq!(list.status, StatusCode::OK);
    let list = list.json();
    assert_eq!(list["kind"], "ComponentStatusList");
    assert_eq!(
        list["items"],
        json!([{"metadata": {"name": "store"},
            "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]}])
    );
    let item = admin_call(&app, "GET", "/api/v1/componentstatuses/store", None).await;
    assert_eq!(item.json()["kind"], "ComponentStatus");
    let missing = admin_call(&app, "GET", "/api/v1/componentstatuses/etcd-0", None).await;
    assert_status(&missing, 404, "NotFound");
    let post = admin_call(&app, "POST", "/api/v1/componentstatuses", Some("{}")).await;
    assert_status(&post, 405, "MethodNotAllowed");
    let watch = admin_call(&app, "GET", "/api/v1/componentstatuses?watch=1", None).await;
    assert_status(&watch, 405, "MethodNotAllowed");
    let namespaced = "/api/v1/namespaces/default/componentstatuses";
    assert_status(
        &admin_call(&app, "GET", namespaced, None).await,
        404,
        "NotFound",
    );

    let storage = Arc::new(empty_backend());
    let config = ApiConfig::new(Flavor::Kubernetes, Arc::new(NeverReady));
    let app = apiary_api::router(storage, config);
    let item = admin_call(&app, "GET", "/api/v1/componentstatuses/store", None).await;
    assert_eq!(item.json()["conditions"][0]["status"], "False");
}

/// The legacy discovery entry of `name` in the document at `path`.
async fn entry(app: &Router, path: &str, name: &str) -> Value {
    let list = admin_call(app, "GET", path, None).await.json();
    list["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("{name} in {path}"))
}

// R-RES-003, R-ACC-095, R-VER-061: discovery lists the computed kinds with upstream's
// verbs, in both flavors; OpenAPI documents a review's create only.
#[tokio::test]
async fn discovery_and_openapi_list_the_computed_kinds() {
    for flavor in [Flavor::Kubernetes, Flavor::Platform] {
        let app = review_app(flavor, false).await;
        let create = json!(["create"]);
        for name in ["selfsubjectreviews", "tokenreviews"] {
            assert_eq!(entry(&app, &authn(flavor), name).await["verbs"], create);
        }
        for name in [
            "selfsubjectaccessreviews",
            "selfsubjectrulesreviews",
            "subjectaccessreviews",
        ] {
            let e = entry(&app, &authz(flavor), name).await;
            assert_eq!(
                (e["verbs"].clone(), e["namespaced"].clone()),
                (create.clone(), json!(false))
            );
        }
        let local = entry(&app, &authz(flavor), "localsubjectaccessreviews").await;
        assert_eq!(local["namespaced"], true);
        let bindings = entry(&app, "/api/v1", "bindings").await;
        assert_eq!(
            (bindings["verbs"].clone(), bindings["kind"].clone()),
            (create.clone(), json!("Binding"))
        );
        let cs = entry(&app, "/api/v1", "componentstatuses").await;
        assert_eq!(cs["verbs"], json!(["get", "list"]));
        assert_eq!(cs["shortNames"], json!(["cs"]));

        let doc = admin_call(&app, "GET", &format!("/openapi/v3{}", authz(flavor)), None).await;
        let doc = doc.json();
        let ops = &doc["paths"][format!("{}/selfsubjectaccessreviews", authz(flavor))];
        let methods: Vec<&String> = ops
            .as_object()
            .expect("path")
            .keys()
            .filter(|k| *k != "parameters")
            .collect();
        assert_eq!(methods, vec!["post"], "{ops}");
    }
}
