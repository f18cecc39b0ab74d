//! Anonymous requests and the static token file through the whole router: who a request
//! without credentials is, where anonymous access applies, and how bearer tokens of the file
//! authenticate or are refused.

use std::io::Write;
use std::sync::Mutex;

use apiary_api::audit::AuditConfig;
use apiary_api::audit::Backend;
use apiary_api::audit::Event;
use apiary_api::audit::Policy;
use apiary_api::auth::Anonymous;
use apiary_node::authn::token_file::TokenFile;

use super::*;

/// Tokens of the file: an admin, a user without permissions, a user with a quoted groups column.
const TOKENS: &str = "admin-secret-token,alice,1001,system:masters\n\
                      plain-secret-token,bob,1002\n\
                      ops-secret-token,carol,1003,\"ops,dev\"\n";

/// A router whose methods are client certificates, the token file of [`TOKENS`] and
/// `anonymous`, auditing every request at Metadata into the returned events.
async fn with_tokens(anonymous: Option<Anonymous>) -> (Router, Arc<Mutex<Vec<Value>>>) {
    let mut file = tempfile::NamedTempFile::new().expect("temp file");
    file.write_all(TOKENS.as_bytes()).expect("write");
    let tokens = TokenFile::read(file.path()).expect("valid token file");
    let (storage, _) = backend_in(Flavor::Kubernetes).await;
    let mut config = ApiConfig::new(Flavor::Kubernetes, Arc::new(AlwaysReady));
    config.authentication.tokens.push(Arc::new(tokens));
    config.authentication.anonymous = anonymous;
    let events = Arc::new(Capture::default());
    let policy = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n";
    config.audit = AuditConfig {
        policy: Some(Arc::new(
            Policy::parse(policy, Flavor::Kubernetes).expect("policy"),
        )),
        backends: vec![events.clone()],
    };
    (apiary_api::router(storage, config), events.0.clone())
}

#[derive(Default)]
struct Capture(Arc<Mutex<Vec<Value>>>);

#[async_trait::async_trait]
impl Backend for Capture {
    async fn process(&self, event: &Event) -> bool {
        let json = serde_json::to_value(event).expect("event serializes");
        self.0.lock().expect("lock").push(json);
        true
    }
}

/// `method path` with `authorization` as the `Authorization` header (`None`: without).
async fn bearer(app: &Router, method: &str, path: &str, authorization: Option<&str>) -> Reply {
    let mut request = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json");
    if let Some(value) = authorization {
        request = request.header("authorization", value);
    }
    let body = if method == "POST" {
        Body::from(r#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#)
    } else {
        Body::empty()
    };
    send(app, request.body(body).expect("request")).await
}

const WHOAMI: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

// R-ACC-116, R-ACC-117, R-ACC-006: a token of the file authenticates as its row's user, uid and
// groups (the quoted column split at commas), plus system:authenticated; an admin row's token
// may do what system:masters may.
#[tokio::test]
async fn file_tokens_authenticate_as_their_rows() {
    let (app, _) = with_tokens(Some(Anonymous::default())).await;
    let listed = bearer(
        &app,
        "GET",
        "/api/v1/namespaces",
        Some("Bearer admin-secret-token"),
    )
    .await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.text());
    let whoami = bearer(&app, "POST", WHOAMI, Some("Bearer ops-secret-token")).await;
    assert_eq!(whoami.status, StatusCode::CREATED, "{}", whoami.text());
    assert_eq!(
        whoami.json()["status"]["userInfo"],
        serde_json::json!({
            "username": "carol",
            "uid": "1003",
            "groups": ["ops", "dev", "system:authenticated"],
        })
    );
    let denied = bearer(&app, "GET", CM_PATH, Some("bearer plain-secret-token")).await;
    assert_eq!(
        assert_status(&denied, 403, "Forbidden")["message"],
        "configmaps is forbidden: User \"bob\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );
}

// R-ACC-085, R-ACC-001: a bearer token nobody recognises is 401 with the generic message even
// though anonymous access is on; it never becomes system:anonymous.
#[tokio::test]
async fn an_unknown_token_is_401_even_with_anonymous_on() {
    let (app, _) = with_tokens(Some(Anonymous::default())).await;
    for path in [CM_PATH, WHOAMI, "/api"] {
        let reply = bearer(&app, "GET", path, Some("Bearer wrong-secret-token")).await;
        let status = assert_status(&reply, 401, "Unauthorized");
        assert_eq!(status["message"], "Unauthorized");
        assert!(!reply.text().contains("wrong-secret-token"));
    }
}

// R-ACC-084, R-ACC-001, R-ACC-017: without credentials the request is system:anonymous in
// system:unauthenticated (not system:authenticated), so not even the self reviews, which
// every authenticated user may create, are allowed.
#[tokio::test]
async fn no_credentials_is_system_anonymous() {
    let (app, events) = with_tokens(Some(Anonymous::default())).await;
    let whoami = bearer(&app, "POST", WHOAMI, None).await;
    assert_eq!(
        assert_status(&whoami, 403, "Forbidden")["message"],
        "selfsubjectreviews.authentication.k8s.io is forbidden: User \"system:anonymous\" cannot create resource \"selfsubjectreviews\" in API group \"authentication.k8s.io\" at the cluster scope"
    );
    let recorded = events.lock().expect("lock").clone();
    assert_eq!(
        recorded[0]["user"],
        serde_json::json!({"username": "system:anonymous", "groups": ["system:unauthenticated"]})
    );
}

// R-ACC-147: with anonymous access off, a request without credentials is 401.
#[tokio::test]
async fn anonymous_off_makes_no_credentials_401() {
    let (app, _) = with_tokens(None).await;
    for path in [CM_PATH, "/api", WHOAMI] {
        let reply = bearer(&app, "GET", path, None).await;
        assert_status(&reply, 401, "Unauthorized");
    }
    let listed = bearer(&app, "GET", "/api", Some("Bearer admin-secret-token")).await;
    assert_eq!(listed.status, StatusCode::OK);
}

// R-ACC-048: with paths, anonymous requests are let in only on those exact paths; elsewhere
// a request without credentials is 401.
#[tokio::test]
async fn anonymous_paths_limit_where_anonymous_applies() {
    let (app, _) = with_tokens(Some(Anonymous {
        paths: vec!["/api".to_owned()],
    }))
    .await;
    let allowed_path = bearer(&app, "GET", "/api", None).await;
    assert_eq!(
        assert_status(&allowed_path, 403, "Forbidden")["message"],
        "forbidden: User \"system:anonymous\" cannot get path \"/api\""
    );
    for path in ["/apis", "/api/v1", CM_PATH] {
        assert_status(&bearer(&app, "GET", path, None).await, 401, "Unauthorized");
    }
}

// Health and /version answer callers without credentials (what Kubernetes'
// system:public-info-viewer grants anonymous callers), whether anonymous access is on or off.
#[tokio::test]
async fn health_and_version_answer_anonymous_callers() {
    for anonymous in [Some(Anonymous::default()), None] {
        let (app, _) = with_tokens(anonymous).await;
        for path in ["/healthz", "/livez", "/readyz", "/version"] {
            assert_eq!(bearer(&app, "GET", path, None).await.status, StatusCode::OK);
        }
    }
}

// Never leak (issue 14, item 6): neither a refused nor an accepted bearer token appears in the audit
// events, and the refusal's Status names no token.
#[tokio::test]
async fn tokens_never_reach_the_audit_events() {
    let (app, events) = with_tokens(Some(Anonymous::default())).await;
    let refused = bearer(&app, "GET", CM_PATH, Some("Bearer wrong-secret-token")).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    let accepted = bearer(&app, "GET", CM_PATH, Some("Bearer admin-secret-token")).await;
    assert_eq!(accepted.status, StatusCode::OK);
    let recorded = serde_json::to_string(&*events.lock().expect("lock")).expect("JSON");
    assert!(recorded.contains("\"alice\""), "{recorded}");
    assert!(!recorded.contains("secret"), "{recorded}");
}
