//! Service account tokens as credentials through the router: a token the token subresource
//! issued is a bearer token (the service account's user, then authorization decides), the
//! refusals (another key, expired, another audience, a deleted account or bound object),
//! verifying keys of several kinds and issuers, bound tokens and their lifetimes, legacy
//! Secret tokens, and the issuer discovery documents.

use std::sync::Arc;
use std::sync::OnceLock;

use base64::Engine;
use base64::prelude::BASE64_STANDARD;
use jsonwebtoken::Algorithm;
use jsonwebtoken::DecodingKey;
use jsonwebtoken::EncodingKey;
use jsonwebtoken::Header;
use jsonwebtoken::Validation;
use jsonwebtoken::jwk::Jwk;
use rsa::RsaPrivateKey;
use rsa::pkcs8::EncodePrivateKey;
use rsa::pkcs8::LineEnding;
use serde_json::Value;
use serde_json::json;

use super::*;
use apiary_api::IssuerDiscovery;
use apiary_api::RsaTokenSigner;
use apiary_api::TokenLimits;
use apiary_api::TokenSigner;
use apiary_api::VerifyingKey;
use apiary_api::auth::ServiceAccountTokenAuthenticator;

const ISSUER: &str = "https://apiary.test";
const OLD_ISSUER: &str = "https://old.apiary.test";
const ACCOUNTS: &str = "/api/v1/namespaces/default/serviceaccounts";
const WHOAMI: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

/// A fresh RSA key in PKCS#8 PEM, made once per name (key generation is slow).
fn rsa_pem(which: usize) -> &'static str {
    static KEYS: [OnceLock<String>; 2] = [OnceLock::new(), OnceLock::new()];
    KEYS[which].get_or_init(|| {
        let key = RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048).expect("key");
        key.to_pkcs8_pem(LineEnding::LF).expect("pem").to_string()
    })
}

fn signer(limits: TokenLimits) -> RsaTokenSigner {
    RsaTokenSigner::from_pem(rsa_pem(0).as_bytes(), ISSUER, vec![ISSUER.to_owned()])
        .expect("signer")
        .with_limits(limits)
}

/// A router whose tokens are signed by [`signer`] and authenticate with its key plus
/// `extra_keys`, for `ISSUER` and `OLD_ISSUER`; legacy tokens looked up when `lookup`.
async fn sa_app(extra_keys: Vec<VerifyingKey>, lookup: bool, limits: TokenLimits) -> Router {
    let (storage, _) = backend_in(Flavor::Kubernetes).await;
    let mut config = ApiConfig::new(Flavor::Kubernetes, Arc::new(AlwaysReady));
    let signer = signer(limits);
    let mut keys = vec![signer.verifying_key().clone()];
    keys.extend(extra_keys);
    config.authentication.api_audiences = vec![ISSUER.to_owned()];
    config.authentication.tokens = vec![Arc::new(ServiceAccountTokenAuthenticator::new(
        keys.clone(),
        vec![ISSUER.to_owned(), OLD_ISSUER.to_owned()],
        vec![ISSUER.to_owned()],
        lookup,
    ))];
    config.issuer_discovery = Some(Arc::new(IssuerDiscovery::new(
        ISSUER.to_owned(),
        None,
        keys,
    )));
    config.token_signer = Some(Arc::new(signer));
    apiary_api::router(storage, config)
}

async fn default_app() -> Router {
    sa_app(Vec::new(), true, TokenLimits::default()).await
}

/// Creates the service account `name` in `default`; its uid.
async fn account(app: &Router, name: &str) -> String {
    let sa = json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}});
    let made = created(app, ACCOUNTS, &sa.to_string()).await;
    made["metadata"]["uid"].as_str().expect("uid").to_owned()
}

/// The TokenRequest answer for `name` with `spec`, which must be 201.
async fn token_request(app: &Router, name: &str, spec: Value) -> Value {
    let request =
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec});
    created(
        app,
        &format!("{ACCOUNTS}/{name}/token"),
        &request.to_string(),
    )
    .await
}

async fn token(app: &Router, name: &str) -> String {
    let answer = token_request(app, name, json!({})).await;
    answer["status"]["token"]
        .as_str()
        .expect("token")
        .to_owned()
}

/// `method path` with `Authorization: Bearer <token>` and no client certificate.
async fn bearer(app: &Router, method: &str, path: &str, token: &str, body: Option<&str>) -> Reply {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .header("authorization", format!("Bearer {token}"))
        .header("host", "api.example:6443")
        .body(Body::from(body.unwrap_or_default().to_owned()))
        .expect("request");
    send(app, request).await
}

/// The user a SelfSubjectReview shows to the bearer of `token`, or the failed reply's code.
async fn whoami(app: &Router, token: &str) -> Result<Value, StatusCode> {
    let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let reply = bearer(app, "POST", WHOAMI, token, Some(&body.to_string())).await;
    if reply.status == StatusCode::CREATED {
        Ok(reply.json()["status"]["userInfo"].clone())
    } else {
        Err(reply.status)
    }
}

/// The claims of `token`, unverified.
fn claims_of(token: &str) -> Value {
    let payload = token.split('.').nth(1).expect("payload");
    let bytes = base64::prelude::BASE64_URL_SAFE_NO_PAD
        .decode(payload)
        .expect("base64");
    serde_json::from_slice(&bytes).expect("claims")
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// Claims of a bound token for `default/<name>` of `uid`, issued at `iat`.
fn bound_claims(name: &str, uid: &str, iat: i64, exp: i64, aud: &str) -> Value {
    json!({
        "aud": [aud], "exp": exp, "iat": iat, "nbf": iat, "iss": ISSUER, "jti": "j1",
        "kubernetes.io": {"namespace": "default", "serviceaccount": {"name": name, "uid": uid}},
        "sub": format!("system:serviceaccount:default:{name}"),
    })
}

// R-ACC-114, R-ACC-122, R-ACC-011, R-ACC-012, R-ACC-013: a token the token subresource issued
// is a bearer credential: the service account's user (uid, groups, credential id) as
// SelfSubjectReview and TokenReview show it (the review's audiences the intersection of those
// asked and the token's), and authorization then decides (403, not 401); a deleted account's
// token is 401.
#[tokio::test]
async fn issued_tokens_authenticate_as_the_service_account() {
    let app = default_app().await;
    let uid = account(&app, "robot").await;
    let token = token(&app, "robot").await;
    let user = whoami(&app, &token).await.expect("authenticated");
    assert_eq!(user["username"], "system:serviceaccount:default:robot");
    assert_eq!(user["uid"], uid.as_str());
    assert_eq!(
        user["groups"],
        json!([
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ])
    );
    let jti = claims_of(&token)["jti"].as_str().expect("jti").to_owned();
    assert_eq!(
        user["extra"],
        json!({"authentication.kubernetes.io/credential-id": [format!("JTI={jti}")]})
    );
    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
        "spec": {"token": token}});
    let reviewed = created(
        &app,
        "/apis/authentication.k8s.io/v1/tokenreviews",
        &review.to_string(),
    )
    .await;
    assert_eq!(
        reviewed["status"]["user"], user,
        "the review answers as the request does"
    );
    assert_eq!(reviewed["status"]["audiences"], json!([ISSUER]));
    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
        "spec": {"token": token, "audiences": ["https://elsewhere", ISSUER]}});
    let reviewed = created(
        &app,
        "/apis/authentication.k8s.io/v1/tokenreviews",
        &review.to_string(),
    )
    .await;
    assert_eq!(reviewed["status"]["authenticated"], true);
    assert_eq!(reviewed["status"]["audiences"], json!([ISSUER]));
    let list = bearer(
        &app,
        "GET",
        "/api/v1/namespaces/default/configmaps",
        &token,
        None,
    )
    .await;
    assert_eq!(list.status, StatusCode::FORBIDDEN, "{}", list.text());
    let deleted = admin_call(&app, "DELETE", &format!("{ACCOUNTS}/robot"), None).await;
    assert_eq!(deleted.status, StatusCode::OK);
    assert_eq!(whoami(&app, &token).await, Err(StatusCode::UNAUTHORIZED));
    account(&app, "robot").await;
    assert_eq!(
        whoami(&app, &token).await,
        Err(StatusCode::UNAUTHORIZED),
        "a new account of the same name has another uid"
    );
}

// R-ACC-121, R-ACC-122: a token signed by a key that is not a verifying key, expired beyond
// the minute of leeway, not valid yet, or for another audience is 401; within the leeway it
// authenticates; a token of another issuer is not a service account token at all.
#[tokio::test]
async fn invalid_tokens_are_refused() {
    let app = default_app().await;
    let uid = account(&app, "robot").await;
    let ours = signer(TokenLimits::default());
    let other = RsaTokenSigner::from_pem(rsa_pem(1).as_bytes(), ISSUER, vec![]).expect("signer");
    let t = now();
    let sign = |s: &RsaTokenSigner, claims: Value| s.sign(&claims).expect("signed");
    let good = sign(
        &ours,
        bound_claims("robot", &uid, t - 100, t + 3600, ISSUER),
    );
    assert!(whoami(&app, &good).await.is_ok());
    let cases = [
        (
            "another key",
            sign(
                &other,
                bound_claims("robot", &uid, t - 100, t + 3600, ISSUER),
            ),
        ),
        (
            "expired",
            sign(&ours, bound_claims("robot", &uid, t - 4000, t - 90, ISSUER)),
        ),
        (
            "not yet valid",
            sign(
                &ours,
                bound_claims("robot", &uid, t + 300, t + 3600, ISSUER),
            ),
        ),
        (
            "another audience",
            sign(
                &ours,
                bound_claims("robot", &uid, t - 100, t + 3600, "elsewhere"),
            ),
        ),
        (
            "another uid",
            sign(
                &ours,
                bound_claims("robot", "not-its-uid", t - 100, t + 3600, ISSUER),
            ),
        ),
        ("another issuer", {
            let mut claims = bound_claims("robot", &uid, t - 100, t + 3600, ISSUER);
            claims["iss"] = "https://elsewhere".into();
            sign(&ours, claims)
        }),
        ("garbage", "not.a.jwt".to_owned()),
    ];
    for (what, token) in cases {
        assert_eq!(
            whoami(&app, &token).await,
            Err(StatusCode::UNAUTHORIZED),
            "{what}"
        );
    }
    let leeway = sign(&ours, bound_claims("robot", &uid, t - 4000, t - 30, ISSUER));
    assert!(whoami(&app, &leeway).await.is_ok(), "within the leeway");
}

// R-ACC-121: every configured key verifies, an ECDSA public key too, and tokens of every
// accepted issuer authenticate.
#[tokio::test]
async fn every_key_and_issuer_is_accepted() {
    let ec = rcgen::KeyPair::generate().expect("ecdsa key");
    let public = VerifyingKey::all_from_pem(ec.public_key_pem().as_bytes()).expect("public key");
    let app = sa_app(public, true, TokenLimits::default()).await;
    let uid = account(&app, "robot").await;
    let t = now();
    let mut claims = bound_claims("robot", &uid, t, t + 3600, ISSUER);
    claims["iss"] = OLD_ISSUER.into();
    let key = EncodingKey::from_ec_pem(ec.serialize_pem().as_bytes()).expect("ec pem");
    let token =
        jsonwebtoken::encode(&Header::new(Algorithm::ES256), &claims, &key).expect("signed");
    let user = whoami(&app, &token).await.expect("authenticated");
    assert_eq!(user["username"], "system:serviceaccount:default:robot");
}

/// Creates `body` in the core `resource` collection of `default` (or cluster-wide); its uid.
async fn make(app: &Router, resource: &str, body: Value) -> String {
    let path = if resource == "nodes" {
        "/api/v1/nodes".to_owned()
    } else {
        format!("/api/v1/namespaces/default/{resource}")
    };
    let made = created(app, &path, &body.to_string()).await;
    made["metadata"]["uid"].as_str().expect("uid").to_owned()
}

fn pod(name: &str, account: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"serviceAccountName": account, "nodeName": "n1",
                 "containers": [{"name": "c", "image": "busybox"}]}})
}

fn bound(kind: &str, name: &str) -> Value {
    json!({"boundObjectRef": {"kind": kind, "apiVersion": "v1", "name": name}})
}

// R-ACC-114, R-ACC-122: a token bound to a pod names the pod and its node in its claims and
// its user's extra (pod-name, pod-uid, node-name, node-uid, credential-id), and stops
// authenticating when the pod is gone; a secret-bound token when the secret is. Binding to a
// pod of another account is 400, to another uid 409, to another kind 400, to a missing
// object 404.
#[tokio::test]
async fn bound_tokens_follow_their_object() {
    let app = default_app().await;
    account(&app, "robot").await;
    let node_uid = make(
        &app,
        "nodes",
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}),
    )
    .await;
    let pod_uid = make(&app, "pods", pod("p1", "robot")).await;
    let answer = token_request(&app, "robot", bound("Pod", "p1")).await;
    assert_eq!(answer["spec"]["boundObjectRef"]["uid"], pod_uid.as_str());
    let token = answer["status"]["token"]
        .as_str()
        .expect("token")
        .to_owned();
    let private = &claims_of(&token)["kubernetes.io"];
    assert_eq!(private["pod"], json!({"name": "p1", "uid": pod_uid}));
    assert_eq!(private["node"], json!({"name": "n1", "uid": node_uid}));
    let user = whoami(&app, &token).await.expect("authenticated");
    let extra = &user["extra"];
    let key = |k: &str| format!("authentication.kubernetes.io/{k}");
    assert_eq!(extra[key("pod-name")], json!(["p1"]));
    assert_eq!(extra[key("pod-uid")], json!([pod_uid]));
    assert_eq!(extra[key("node-name")], json!(["n1"]));
    assert_eq!(extra[key("node-uid")], json!([node_uid]));
    assert!(
        extra[key("credential-id")][0]
            .as_str()
            .is_some_and(|c| c.starts_with("JTI="))
    );
    let gone = admin_call(
        &app,
        "DELETE",
        "/api/v1/namespaces/default/pods/p1?gracePeriodSeconds=0",
        None,
    )
    .await;
    assert!(gone.status.is_success(), "{}", gone.text());
    assert_eq!(whoami(&app, &token).await, Err(StatusCode::UNAUTHORIZED));

    make(
        &app,
        "secrets",
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"}}),
    )
    .await;
    let answer = token_request(&app, "robot", bound("Secret", "s1")).await;
    let token = answer["status"]["token"]
        .as_str()
        .expect("token")
        .to_owned();
    assert!(whoami(&app, &token).await.is_ok());
    let gone = admin_call(
        &app,
        "DELETE",
        "/api/v1/namespaces/default/secrets/s1",
        None,
    )
    .await;
    assert_eq!(gone.status, StatusCode::OK);
    assert_eq!(whoami(&app, &token).await, Err(StatusCode::UNAUTHORIZED));

    let other = json!({"apiVersion": "v1", "kind": "ServiceAccount",
                       "metadata": {"name": "someone-else"}});
    make(&app, "serviceaccounts", other).await;
    make(&app, "pods", pod("other", "someone-else")).await;
    let path = format!("{ACCOUNTS}/robot/token");
    let ask = |spec: Value| {
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec})
            .to_string()
    };
    let reply = admin_call(&app, "POST", &path, Some(&ask(bound("Pod", "other")))).await;
    assert_status(&reply, 400, "BadRequest");
    let mut wrong_uid = bound("Secret", "s2");
    make(
        &app,
        "secrets",
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s2"}}),
    )
    .await;
    wrong_uid["boundObjectRef"]["uid"] = "not-its-uid".into();
    let reply = admin_call(&app, "POST", &path, Some(&ask(wrong_uid))).await;
    assert_status(&reply, 409, "Conflict");
    let reply = admin_call(&app, "POST", &path, Some(&ask(bound("ConfigMap", "c")))).await;
    assert_status(&reply, 400, "BadRequest");
    let reply = admin_call(&app, "POST", &path, Some(&ask(bound("Pod", "missing")))).await;
    assert_status(&reply, 404, "NotFound");
}

// R-ACC-122: a pod-bound token asking for the node agent's 3607 seconds lives a year with a
// `warnafter` claim at the time asked for (extension on), or exactly what it asked for
// (extension off); a lifetime over `--service-account-max-token-expiration` is capped.
#[tokio::test]
async fn lifetimes_are_extended_and_capped() {
    let lifetime = |token: &Value| {
        let claims = claims_of(token["status"]["token"].as_str().expect("token"));
        let iat = claims["iat"].as_i64().expect("iat");
        let warn = claims["kubernetes.io"]["warnafter"]
            .as_i64()
            .map(|w| w - iat);
        (claims["exp"].as_i64().expect("exp") - iat, warn)
    };
    for extend in [true, false] {
        let limits = TokenLimits {
            max_expiration_seconds: Some(7200),
            extend_expiration: extend,
        };
        let app = sa_app(Vec::new(), true, limits).await;
        account(&app, "robot").await;
        make(
            &app,
            "nodes",
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}),
        )
        .await;
        make(&app, "pods", pod("p1", "robot")).await;
        let mut spec = bound("Pod", "p1");
        spec["expirationSeconds"] = 3607.into();
        let answer = token_request(&app, "robot", spec).await;
        assert_eq!(answer["spec"]["expirationSeconds"], 3607);
        let expected = if extend {
            (365 * 24 * 3600, Some(3607))
        } else {
            (3607, None)
        };
        assert_eq!(lifetime(&answer), expected, "extend {extend}");
        let capped = token_request(&app, "robot", json!({"expirationSeconds": 10_000})).await;
        assert_eq!(capped["spec"]["expirationSeconds"], 7200);
        assert_eq!(lifetime(&capped), (7200, None));
    }
}

/// A legacy token of `robot` (uid `uid`) kept in the Secret `name`, signed by [`signer`].
fn legacy_token(uid: &str, name: &str) -> String {
    let claims = json!({
        "iss": "kubernetes/serviceaccount",
        "kubernetes.io/serviceaccount/namespace": "default",
        "kubernetes.io/serviceaccount/secret.name": name,
        "kubernetes.io/serviceaccount/service-account.name": "robot",
        "kubernetes.io/serviceaccount/service-account.uid": uid,
        "sub": "system:serviceaccount:default:robot",
    });
    signer(TokenLimits::default())
        .sign(&claims)
        .expect("signed")
}

// R-ACC-123: a legacy Secret token authenticates while its Secret holds it; with
// `--service-account-lookup` a deleted Secret revokes it, without the lookup it does not.
#[tokio::test]
async fn legacy_tokens_are_revoked_with_their_secret() {
    for lookup in [true, false] {
        let app = sa_app(Vec::new(), lookup, TokenLimits::default()).await;
        let uid = account(&app, "robot").await;
        let token = legacy_token(&uid, "robot-token");
        let secret = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "robot-token",
                         "annotations": {"kubernetes.io/service-account.name": "robot"}},
            "type": "kubernetes.io/service-account-token",
            "data": {"token": BASE64_STANDARD.encode(&token)}});
        make(&app, "secrets", secret).await;
        let user = whoami(&app, &token).await.expect("authenticated");
        assert_eq!(user["username"], "system:serviceaccount:default:robot");
        let gone = admin_call(
            &app,
            "DELETE",
            "/api/v1/namespaces/default/secrets/robot-token",
            None,
        )
        .await;
        assert_eq!(gone.status, StatusCode::OK);
        let after = whoami(&app, &token).await;
        assert_eq!(after.is_ok(), !lookup, "lookup {lookup}: {after:?}");
    }
}

// R-ACC-122: the issuer discovery documents are served to service accounts (403 for anonymous
// callers and other users): the OpenID configuration names the issuer and the key
// set, whose keys verify the service account's token.
#[tokio::test]
async fn issuer_discovery_serves_the_verifying_keys() {
    let app = default_app().await;
    account(&app, "robot").await;
    let token = token(&app, "robot").await;
    let config = bearer(
        &app,
        "GET",
        "/.well-known/openid-configuration",
        &token,
        None,
    )
    .await;
    assert_eq!(config.status, StatusCode::OK, "{}", config.text());
    assert_eq!(config.headers["content-type"], "application/json");
    assert_eq!(config.headers["cache-control"], "public, max-age=3600");
    assert_eq!(
        config.json(),
        json!({"issuer": ISSUER, "jwks_uri": "https://api.example:6443/openid/v1/jwks",
            "response_types_supported": ["id_token"], "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"]})
    );
    let jwks = bearer(&app, "GET", "/openid/v1/jwks", &token, None).await;
    assert_eq!(jwks.status, StatusCode::OK);
    assert_eq!(jwks.headers["content-type"], "application/jwk-set+json");
    let keys = jwks.json()["keys"].clone();
    assert_eq!(keys.as_array().map(Vec::len), Some(1));
    let jwk: Jwk = serde_json::from_value(keys[0].clone()).expect("a JWK");
    let header = jsonwebtoken::decode_header(&token).expect("header");
    assert_eq!(header.kid, jwk.common.key_id);
    let key = DecodingKey::from_jwk(&jwk).expect("key");
    let mut validation = Validation::new(Algorithm::RS256);
    validation.set_audience(&[ISSUER]);
    validation.set_issuer(&[ISSUER]);
    assert!(jsonwebtoken::decode::<Value>(&token, &key, &validation).is_ok());
    let anonymous = call(&app, "GET", "/openid/v1/jwks", None, None).await;
    assert_eq!(anonymous.status, StatusCode::FORBIDDEN);
    let other = call(&app, "GET", "/openid/v1/jwks", None, Some(bob())).await;
    assert_eq!(other.status, StatusCode::FORBIDDEN);
}
