//! `--authorization-config`: named webhooks with both failure policies (a server that is down,
//! one that answers garbage), match conditions that skip, call or fail, RBAC and AlwaysAllow
//! after them; then reloads of the file: one removing RBAC is refused, one adding a webhook
//! takes effect.

use std::path::Path;
use std::time::Duration;

use apiary_tests::DevCluster;
use apiary_tests::authz_webhook;
use apiary_tests::authz_webhook::Answer;
use apiary_tests::authz_webhook::Table;
use apiary_tests::authz_webhook::received_for;
use http::StatusCode;
use serde_json::Value;

use crate::PODS;
use crate::start;
use crate::status_of;

/// One webhook entry of the file: its name, kubeconfig, failure policy and one match
/// condition.
fn webhook(name: &str, kubeconfig: &Path, policy: &str, condition: &str) -> String {
    format!(
        "- type: Webhook\n  name: {name}\n  webhook:\n    timeout: 5s\n    subjectAccessReviewVersion: v1\n    matchConditionSubjectAccessReviewVersion: v1\n    failurePolicy: {policy}\n    connectionInfo:\n      type: KubeConfigFile\n      kubeConfigFile: {}\n    matchConditions:\n    - expression: \"{condition}\"\n",
        kubeconfig.display()
    )
}

/// The configuration: webhooks to a server that is down (Deny for dora, NoOpinion for gina),
/// the real server for erin only (NoOpinion), optionally `late` (Deny, for ivan), the real
/// server for everyone else (Deny; for hank only on namespaced requests), then RBAC (unless
/// left out) and AlwaysAllow.
fn configuration(up: &Path, down: &Path, late: bool, rbac: bool) -> String {
    let mut text =
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n"
            .to_owned();
    text += &webhook("down-closed", down, "Deny", "request.user == 'dora'");
    text += &webhook("down-open", down, "NoOpinion", "request.user == 'gina'");
    text += &webhook("garbage-open", up, "NoOpinion", "request.user == 'erin'");
    if late {
        text += &webhook("late", up, "Deny", "request.user == 'ivan'");
    }
    text += &webhook(
        "main",
        up,
        "Deny",
        "!(request.user in ['skip', 'erin', 'ivan', 'dora', 'gina']) && (request.user != 'hank' || request.resourceAttributes.namespace != 'x')",
    );
    if rbac {
        text += "- type: RBAC\n  name: rbac\n";
    }
    text += "- type: AlwaysAllow\n  name: alwaysallow\n";
    text
}

/// Writes a kubeconfig like `up`'s whose server is a loopback port nobody listens on.
fn down_kubeconfig(up: &Path, down: &Path) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let mut config: Value =
        serde_json::from_slice(&std::fs::read(up).expect("kubeconfig")).expect("JSON");
    config["clusters"][0]["cluster"]["server"] =
        format!("https://127.0.0.1:{port}/authorize").into();
    std::fs::write(down, config.to_string()).expect("kubeconfig written");
}

/// Replaces `file` with `text` at once (a rename), so the replica never reads half of it.
fn replace(file: &Path, text: &str) {
    let next = file.with_extension("next");
    std::fs::write(&next, text).expect("config written");
    std::fs::rename(&next, file).expect("config replaced");
}

/// The value of the authorization config reloads counter with `status`, if exposed yet.
async fn reloads(cluster: &DevCluster, status: &str) -> Option<f64> {
    let reply = cluster
        .client(1)
        .expect("replica 1")
        .get("/metrics")
        .await
        .expect("metrics");
    let label = format!("status=\"{status}\"");
    reply
        .text()
        .lines()
        .find(|l| {
            l.starts_with("apiserver_authorization_config_controller_automatic_reloads_total")
                && l.contains(&label)
        })
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// Waits up to 30 s for `check` to hold.
async fn eventually<F: AsyncFn() -> bool>(what: &str, check: F) {
    for _ in 0..150 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("{what} did not happen within 30 s");
}

// R-ACC-162, R-ACC-089, R-ACC-090, R-ACC-091, R-ACC-092, R-ACC-093, R-ACC-198, R-ACC-163: the
// configured chain in order: allow, deny, no opinion passed on; a server that is down denies
// with failurePolicy Deny and passes on with NoOpinion, as garbage answers do; a false
// condition skips a webhook (never called), all true call it, an error with none false
// applies the failure policy without calling it. The decisions and the calls are counted.
#[tokio::test]
async fn configured_webhooks_with_failure_policies_and_match_conditions() {
    let dir = tempfile::tempdir().expect("dir");
    let table = Table::from([
        ("alice".to_owned(), Answer::Allow),
        ("bob".to_owned(), Answer::Deny("no".to_owned())),
        ("carl".to_owned(), Answer::NoOpinion),
        ("erin".to_owned(), Answer::Garbage),
        ("fred".to_owned(), Answer::Garbage),
        ("hank".to_owned(), Answer::Allow),
        ("ivan".to_owned(), Answer::Deny("late".to_owned())),
    ]);
    let server = authz_webhook::start(dir.path(), table)
        .await
        .expect("webhook");
    let up = dir.path().join("up.kubeconfig");
    let down = dir.path().join("down.kubeconfig");
    server.kubeconfig(&up).expect("kubeconfig");
    down_kubeconfig(&up, &down);
    let file = dir.path().join("authz.yaml");
    std::fs::write(&file, configuration(&up, &down, false, true)).expect("config");
    let cluster = start(
        dir.path(),
        &[format!("--authorization-config={}", file.display())],
    )
    .await;

    let expected = [
        ("alice", PODS, StatusCode::OK),
        ("bob", PODS, StatusCode::FORBIDDEN),
        ("carl", PODS, StatusCode::OK),
        ("dora", PODS, StatusCode::FORBIDDEN),
        ("gina", PODS, StatusCode::OK),
        ("erin", PODS, StatusCode::OK),
        ("fred", PODS, StatusCode::FORBIDDEN),
        ("skip", PODS, StatusCode::OK),
        ("hank", PODS, StatusCode::OK),
        ("hank", "/api/v1/nodes", StatusCode::FORBIDDEN),
    ];
    for (user, path, status) in expected {
        assert_eq!(
            status_of(&cluster, user, path).await,
            status,
            "{user} {path}"
        );
    }
    assert!(received_for(&server, "skip").is_empty(), "skipped");
    assert!(
        received_for(&server, "dora").is_empty(),
        "dora's server is down"
    );
    assert_eq!(
        received_for(&server, "erin").len(),
        1,
        "only garbage-open asked"
    );
    assert_eq!(
        received_for(&server, "hank").len(),
        1,
        "not asked about nodes"
    );
    let review = &received_for(&server, "alice")[0];
    assert_eq!(review["apiVersion"], "authorization.k8s.io/v1");
    assert_eq!(review["spec"]["groups"][0], "dev");
    let metrics = cluster
        .client(1)
        .expect("replica 1")
        .get("/metrics")
        .await
        .expect("metrics")
        .text();
    for series in [
        r#"apiserver_authorization_decisions_total{type="Webhook",name="main",decision="allowed"}"#,
        r#"apiserver_authorization_decisions_total{type="Webhook",name="down-closed",decision="denied"}"#,
        r#"apiserver_authorization_webhook_evaluations_total{name="down-closed",result="error"}"#,
        r#"apiserver_authorization_webhook_evaluations_total{name="main",result="success"}"#,
    ] {
        assert!(metrics.contains(series), "{series} missing");
    }
}

// R-ACC-164, R-ACC-165: a changed file is re-read: one that removes RBAC is refused (counted
// as a failure, the chain unchanged), one that adds a webhook (RBAC kept) is put in force.
#[tokio::test]
async fn reloads_add_a_webhook_but_never_remove_rbac() {
    let dir = tempfile::tempdir().expect("dir");
    let table = Table::from([("ivan".to_owned(), Answer::Deny("late".to_owned()))]);
    let server = authz_webhook::start(dir.path(), table)
        .await
        .expect("webhook");
    let up = dir.path().join("up.kubeconfig");
    let down = dir.path().join("down.kubeconfig");
    server.kubeconfig(&up).expect("kubeconfig");
    down_kubeconfig(&up, &down);
    let file = dir.path().join("authz.yaml");
    std::fs::write(&file, configuration(&up, &down, false, true)).expect("config");
    let cluster = start(
        dir.path(),
        &[format!("--authorization-config={}", file.display())],
    )
    .await;
    assert_eq!(status_of(&cluster, "ivan", PODS).await, StatusCode::OK);

    replace(&file, &configuration(&up, &down, true, false));
    eventually("a refused reload", async || {
        reloads(&cluster, "failure").await == Some(1.0)
    })
    .await;
    assert_eq!(
        status_of(&cluster, "ivan", PODS).await,
        StatusCode::OK,
        "unchanged"
    );
    assert!(received_for(&server, "ivan").is_empty());

    replace(&file, &configuration(&up, &down, true, true));
    eventually("the reload adding a webhook", async || {
        status_of(&cluster, "ivan", PODS).await == StatusCode::FORBIDDEN
    })
    .await;
    assert_eq!(reloads(&cluster, "success").await, Some(1.0));
    assert_eq!(received_for(&server, "ivan").len(), 1);
}
