//! Bearer tokens and anonymous requests on a real `apiary dev --flavor kubernetes` cluster,
//! through kubectl: a static token file user (`--token-auth-file`), an unknown token, a caller
//! without credentials, the authentication webhook (a real TLS TokenReview server,
//! [`apiary_tests::token_webhook`]) and `--anonymous-auth=false`; and no token in the audit log
//! or the replica logs afterwards.

use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use apiary_tests::token_webhook;
use apiary_tests::token_webhook::Users;
use http::Method;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;

use crate::run::kubectl;
use crate::run::kubectl_available;
use crate::run::kubectl_status;

/// Every token these tests use contains this, so the logs can be searched for any of them.
const MARK: &str = "s3cr3t";

const AUDIT_POLICY: &str = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n\
- level: None\n  nonResourceURLs: [\"/readyz*\", \"/livez*\", \"/healthz*\"]\n\
- level: Metadata\n";

const WHOAMI: &str = "/apis/authentication.k8s.io/v1/selfsubjectreviews";

/// The API's audience when `--api-audiences` is not given: the service account issuer of
/// `apiary dev`'s replicas.
const API_AUDIENCE: &str = "https://apiary.local";

/// Writes a kubeconfig for replica 1 of `cluster` whose user is `token` and answers its path.
pub(crate) fn user_kubeconfig(cluster: &DevCluster, name: &str, token: &str) -> PathBuf {
    let dev: Value = serde_json::from_slice(
        &std::fs::read(cluster.kubeconfig()).expect("the dev kubeconfig is there"),
    )
    .expect("the dev kubeconfig is JSON");
    let user = json!({ "token": token });
    let config = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [dev["clusters"][0]],
        "users": [{"name": name, "user": user}],
        "contexts": [{"name": name, "context": {"cluster": dev["clusters"][0]["name"], "user": name}}],
        "current-context": name,
    });
    let path = cluster.dir().join(format!("{name}.kubeconfig"));
    std::fs::write(&path, config.to_string()).expect("kubeconfig written");
    path
}

/// Who `kubeconfig`'s user is, by a SelfSubjectReview in JSON (t12 runs `kubectl auth whoami`
/// itself).
async fn whoami(kubeconfig: &Path, dir: &Path) -> Value {
    let file = dir.join("whoami.json");
    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    std::fs::write(&file, review.to_string()).expect("review written");
    let path = file.to_str().expect("a UTF-8 path");
    let out = kubectl(kubeconfig, &["create", "--raw", WHOAMI, "-f", path]).await;
    let reply: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    reply["status"]["userInfo"].clone()
}

/// Fails when any replica log, or `extra` file, contains [`MARK`].
fn assert_no_token_in(cluster: &DevCluster, extra: &[PathBuf]) {
    let logs = (1..=cluster.nodes()).map(|i| cluster.log_file(i));
    for file in logs.chain(extra.iter().cloned()) {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(!text.contains(MARK), "a token in {}", file.display());
    }
}

// R-ACC-116, R-ACC-117, R-ACC-084, R-ACC-085, R-ACC-001, R-ACC-006: kubectl --token with a
// token-file user in system:masters lists namespaces; an unknown token is 401 although
// anonymous access is on; no credentials is system:anonymous, denied even the self review;
// /version and /healthz answer it. No token reaches the audit log or the replica logs.
#[tokio::test]
async fn kubectl_with_file_tokens_and_anonymous_requests() {
    if !kubectl_available() {
        return;
    }
    let files = tempfile::tempdir().expect("dir");
    let tokens = files.path().join("tokens.csv");
    std::fs::write(
        &tokens,
        format!("admin-{MARK}-1,alice,1001,\"system:masters,dev\"\nbob-{MARK}-2,bob,1002\n"),
    )
    .expect("token file");
    let policy = files.path().join("policy.yaml");
    std::fs::write(&policy, AUDIT_POLICY).expect("policy");
    let mut options = DevOptions::flavor(Flavor::Kubernetes)
        .flag(&format!("--token-auth-file={}", tokens.display()))
        .flag(&format!("--audit-policy-file={}", policy.display()))
        .flag("--audit-log-path=audit.log");
    options.nodes = 1;
    let cluster = DevCluster::start(options)
        .await
        .expect("the cluster starts");
    let dir = cluster.dir();

    let admin = user_kubeconfig(&cluster, "alice", &format!("admin-{MARK}-1"));
    let namespaces = kubectl(&admin, &["get", "ns", "-o", "name"]).await;
    assert!(namespaces.contains("namespace/default"), "{namespaces}");
    assert_eq!(
        whoami(&admin, dir).await,
        json!({"username": "alice", "uid": "1001", "groups": ["system:masters", "dev", "system:authenticated"]})
    );

    let unknown = user_kubeconfig(&cluster, "unknown", &format!("unknown-{MARK}-3"));
    let (ok, out) = kubectl_status(&unknown, &["get", "ns"]).await;
    assert!(!ok && out.contains("Unauthorized"), "{out}");

    let anonymous = cluster.anonymous_client(1).await.expect("replica 1");
    let reply = anonymous.get("/api/v1/namespaces").await.expect("answered");
    assert_eq!(reply.status, StatusCode::FORBIDDEN, "{}", reply.text());
    assert_eq!(
        reply.json("namespaces").expect("a Status")["message"],
        "namespaces is forbidden: User \"system:anonymous\" cannot list resource \"namespaces\" in API group \"\" at the cluster scope"
    );
    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let reply = anonymous.post(WHOAMI, &review).await.expect("answered");
    assert_eq!(reply.status, StatusCode::FORBIDDEN, "{}", reply.text());
    for path in ["/version", "/healthz", "/livez", "/readyz"] {
        let reply = anonymous
            .send(Method::GET, path, None)
            .await
            .expect("answered");
        assert_eq!(reply.status, StatusCode::OK, "{path}");
    }

    let audit = dir.join("node-1").join("audit.log");
    let mut text = String::new();
    for _ in 0..100 {
        text = std::fs::read_to_string(&audit).unwrap_or_default();
        if text.contains("\"alice\"") && text.contains("system:anonymous") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(text.contains("\"alice\""), "{text}");
    assert!(text.contains("system:anonymous"), "{text}");
    assert_no_token_in(&cluster, &[audit]);
}

// R-ACC-008, R-ACC-009, R-ACC-010, R-ACC-012, R-ACC-013, R-ACC-094, R-ACC-126, R-ACC-127,
// R-ACC-147, R-ACC-200: with the webhook of a kubeconfig, a token it knows lists namespaces as
// its user (uid, groups, extra); the review came as JSON in v1 with the opaque token and the
// API's audiences; answers are cached (further kubectl runs ask nothing); a token it refuses is 401
// with the generic message; with anonymous access off, no credentials is 401.
#[tokio::test]
async fn kubectl_through_the_authentication_webhook() {
    if !kubectl_available() {
        return;
    }
    let files = tempfile::tempdir().expect("dir");
    let users: Users = [(
        format!("hook-{MARK}-1"),
        json!({"username": "wanda", "uid": "w-1", "groups": ["system:masters"],
               "extra": {"team": ["blue"]}}),
    )]
    .into_iter()
    .collect();
    let server_dir = files.path().join("server");
    std::fs::create_dir(&server_dir).expect("dir");
    let hook = token_webhook::start(&server_dir, users)
        .await
        .expect("the webhook starts");
    let config = files.path().join("webhook.kubeconfig");
    hook.kubeconfig(&config).expect("kubeconfig written");
    let mut options = DevOptions::flavor(Flavor::Kubernetes)
        .flag(&format!(
            "--authentication-token-webhook-config-file={}",
            config.display()
        ))
        .flag("--authentication-token-webhook-version=v1")
        .flag("--anonymous-auth=false");
    options.nodes = 1;
    let cluster = DevCluster::start(options)
        .await
        .expect("the cluster starts");

    let wanda = user_kubeconfig(&cluster, "wanda", &format!("hook-{MARK}-1"));
    let namespaces = kubectl(&wanda, &["get", "ns", "-o", "name"]).await;
    assert!(namespaces.contains("namespace/default"), "{namespaces}");
    let asked = hook.received();
    assert!(!asked.is_empty());
    assert_eq!(
        asked[0],
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
               "spec": {"token": format!("hook-{MARK}-1"), "audiences": [API_AUDIENCE]}})
    );
    assert_eq!(
        whoami(&wanda, cluster.dir()).await,
        json!({"username": "wanda", "uid": "w-1",
               "groups": ["system:masters", "system:authenticated"],
               "extra": {"team": ["blue"]}})
    );
    kubectl(&wanda, &["get", "ns"]).await;
    assert_eq!(hook.received().len(), asked.len(), "the answer was cached");

    let refused = user_kubeconfig(&cluster, "refused", &format!("other-{MARK}-2"));
    let (ok, out) = kubectl_status(&refused, &["get", "--raw", "/api"]).await;
    assert!(!ok && out.contains("Unauthorized"), "{out}");
    assert!(!out.contains("unknown to the webhook"), "{out}");
    assert_eq!(hook.received().len(), asked.len() + 1);

    let reply = cluster
        .anonymous_client(1)
        .await
        .expect("replica 1")
        .get("/api")
        .await
        .expect("answered");
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{}", reply.text());
    assert_no_token_in(&cluster, &[]);
}
