//! Tests of the authorization webhook against a scripted server (the real TLS server is in
//! the black-box tests): the reviews sent, the answers, the caches, the failure policies and
//! the match conditions.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use apiary_api::auth::UserInfo;
use apiary_api::request::QueryParams;
use apiary_api::request::RequestInfo;
use http::Method;
use http::StatusCode;

use super::*;

/// Answers every post with the next of its answers (the last one again when they run out) and
/// records the bodies.
struct Script {
    answers: Vec<Result<(StatusCode, Vec<u8>), String>>,
    posted: Mutex<Vec<Value>>,
}

impl Script {
    fn new(answers: Vec<Result<(StatusCode, Vec<u8>), String>>) -> Arc<Self> {
        Arc::new(Self {
            answers,
            posted: Mutex::default(),
        })
    }

    fn posted(&self) -> Vec<Value> {
        self.posted.lock().expect("lock").clone()
    }
}

#[async_trait::async_trait]
impl ReviewPoster for Script {
    async fn post(&self, body: Vec<u8>) -> Result<(StatusCode, Vec<u8>), String> {
        let mut posted = self.posted.lock().expect("lock");
        posted.push(serde_json::from_slice(&body).expect("JSON"));
        let index = (posted.len() - 1).min(self.answers.len() - 1);
        self.answers[index].clone()
    }
}

fn status(status: &Value) -> Result<(StatusCode, Vec<u8>), String> {
    Ok((
        StatusCode::OK,
        json!({"kind": "SubjectAccessReview", "status": status})
            .to_string()
            .into_bytes(),
    ))
}

fn mode(version: SarVersion, policy: FailurePolicy, conditions: &[&str]) -> WebhookMode {
    WebhookMode {
        name: "hook".to_owned(),
        timeout: Duration::from_secs(5),
        authorized_ttl: Duration::from_secs(300),
        unauthorized_ttl: Duration::from_secs(30),
        version,
        failure_policy: policy,
        kubeconfig: PathBuf::new(),
        match_conditions: conditions.iter().map(|c| (*c).to_owned()).collect(),
    }
}

fn webhook(mode: &WebhookMode, script: &Arc<Script>) -> WebhookAuthorizer {
    WebhookAuthorizer::new(
        mode,
        script.clone(),
        Flavor::Kubernetes,
        WebhookMetrics::default(),
    )
    .expect("compiles")
    .with_first_backoff(Duration::from_millis(1))
}

fn alice() -> UserInfo {
    UserInfo {
        name: "alice".to_owned(),
        uid: "42".to_owned(),
        groups: vec!["dev".to_owned(), "system:authenticated".to_owned()],
        extra: BTreeMap::from([("scopes".to_owned(), vec!["a".to_owned()])]),
    }
}

async fn ask(hook: &WebhookAuthorizer, method: Method, path: &str, query: &str) -> Decision {
    let user = alice();
    let query = QueryParams::parse(Some(query));
    let request = RequestInfo::parse(&method, path, &query);
    hook.authorize(&Attributes {
        user: &user,
        request: &request,
    })
    .await
}

// R-ACC-198: a v1 review carries the user and the resource attributes with the selectors'
// requirements; allowed allows, denied denies with the reason, neither is no opinion.
#[tokio::test]
async fn v1_reviews_and_their_answers() {
    let script = Script::new(vec![
        status(&json!({"allowed": true})),
        status(&json!({"allowed": false, "denied": true, "reason": "no way"})),
        status(&json!({"allowed": false, "reason": "not mine"})),
    ]);
    let hook = webhook(&mode(SarVersion::V1, FailurePolicy::Deny, &[]), &script);
    let path = "/api/v1/namespaces/ns/pods";
    let query = "fieldSelector=spec.nodeName%3Dn1&labelSelector=app%20in%20(a),tier!%3Dx";
    assert_eq!(ask(&hook, Method::GET, path, query).await, Decision::Allow);
    assert_eq!(
        ask(&hook, Method::POST, path, "").await,
        Decision::Deny("no way".to_owned())
    );
    assert_eq!(
        ask(&hook, Method::DELETE, "/api/v1/namespaces/ns/pods/p", "").await,
        Decision::NoOpinion("not mine".to_owned())
    );
    let posted = script.posted();
    assert_eq!(posted[0]["apiVersion"], "authorization.k8s.io/v1");
    assert_eq!(posted[0]["kind"], "SubjectAccessReview");
    assert_eq!(
        posted[0]["spec"],
        json!({
            "user": "alice",
            "uid": "42",
            "groups": ["dev", "system:authenticated"],
            "extra": {"scopes": ["a"]},
            "resourceAttributes": {
                "namespace": "ns",
                "verb": "list",
                "version": "v1",
                "resource": "pods",
                "fieldSelector": {"requirements": [
                    {"key": "spec.nodeName", "operator": "In", "values": ["n1"]}
                ]},
                "labelSelector": {"requirements": [
                    {"key": "app", "operator": "In", "values": ["a"]},
                    {"key": "tier", "operator": "NotIn", "values": ["x"]}
                ]},
            },
        })
    );
    assert_eq!(posted[2]["spec"]["resourceAttributes"]["name"], "p");
}

// R-ACC-198: v1beta1 spells the groups `group`; a non-resource request carries the path.
#[tokio::test]
async fn v1beta1_reviews_of_paths() {
    let script = Script::new(vec![status(&json!({"allowed": true}))]);
    let hook = webhook(
        &mode(SarVersion::V1beta1, FailurePolicy::Deny, &[]),
        &script,
    );
    assert_eq!(
        ask(&hook, Method::GET, "/healthz", "").await,
        Decision::Allow
    );
    let posted = script.posted();
    assert_eq!(posted[0]["apiVersion"], "authorization.k8s.io/v1beta1");
    assert_eq!(
        posted[0]["spec"]["group"],
        json!(["dev", "system:authenticated"])
    );
    assert!(posted[0]["spec"].get("groups").is_none());
    assert_eq!(
        posted[0]["spec"]["nonResourceAttributes"],
        json!({"path": "/healthz", "verb": "get"})
    );
}

// R-ACC-199: an allow is kept for authorizedTTL and a deny for unauthorizedTTL, per the
// whole review; a different request is asked again.
#[tokio::test]
async fn answers_are_kept_for_their_ttls() {
    let script = Script::new(vec![
        status(&json!({"allowed": true})),
        status(&json!({"denied": true})),
        status(&json!({"denied": true})),
        status(&json!({"allowed": true})),
    ]);
    let mut short = mode(SarVersion::V1, FailurePolicy::Deny, &[]);
    short.authorized_ttl = Duration::from_secs(4);
    short.unauthorized_ttl = Duration::from_secs(1);
    let hook = webhook(&short, &script);
    let pods = "/api/v1/namespaces/ns/pods";
    assert_eq!(ask(&hook, Method::GET, pods, "").await, Decision::Allow);
    assert_eq!(ask(&hook, Method::GET, pods, "").await, Decision::Allow);
    assert_eq!(script.posted().len(), 1, "the allow was kept");
    assert!(matches!(
        ask(&hook, Method::POST, pods, "").await,
        Decision::Deny(_)
    ));
    assert!(matches!(
        ask(&hook, Method::POST, pods, "").await,
        Decision::Deny(_)
    ));
    assert_eq!(script.posted().len(), 2, "the deny was kept");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert!(matches!(
        ask(&hook, Method::POST, pods, "").await,
        Decision::Deny(_)
    ));
    assert_eq!(script.posted().len(), 3, "the deny expired after its TTL");
    assert_eq!(ask(&hook, Method::GET, pods, "").await, Decision::Allow);
    assert_eq!(script.posted().len(), 3, "the allow is kept longer");
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(ask(&hook, Method::GET, pods, "").await, Decision::Allow);
    assert_eq!(script.posted().len(), 4, "the allow expired after its TTL");
}

// R-ACC-089, R-ACC-090: a failed call (after its retries) or a malformed answer denies with
// failurePolicy Deny and passes on with NoOpinion; failures are not kept.
#[tokio::test]
async fn failures_follow_the_failure_policy() {
    let failures = [
        Err("connect: refused".to_owned()),
        Ok((StatusCode::OK, b"<html>".to_vec())),
        Ok((StatusCode::FORBIDDEN, Vec::new())),
        Ok((StatusCode::OK, b"{}".to_vec())),
    ];
    for failure in failures {
        for (policy, expected) in [
            (FailurePolicy::Deny, Decision::Deny(String::new())),
            (FailurePolicy::NoOpinion, Decision::NoOpinion(String::new())),
        ] {
            let script = Script::new(vec![failure.clone()]);
            let hook = webhook(&mode(SarVersion::V1, policy, &[]), &script);
            let path = "/api/v1/namespaces/ns/pods";
            assert_eq!(
                ask(&hook, Method::GET, path, "").await,
                expected,
                "{failure:?}"
            );
            let first = script.posted().len();
            assert_eq!(ask(&hook, Method::GET, path, "").await, expected);
            assert_eq!(script.posted().len(), 2 * first, "{failure:?} was not kept");
        }
    }
}

// R-ACC-091, R-ACC-092, R-ACC-093: any false condition skips the webhook (no opinion, not
// called), all true call it, an error with none false follows the failure policy, a false
// one wins over an error.
#[tokio::test]
async fn match_conditions_decide_whether_the_webhook_is_asked() {
    let conditions = [
        "has(request.resourceAttributes)",
        "request.resourceAttributes.namespace != 'kube-system'",
    ];
    let script = Script::new(vec![status(&json!({"allowed": true}))]);
    let hook = webhook(
        &mode(SarVersion::V1, FailurePolicy::Deny, &conditions),
        &script,
    );
    assert_eq!(
        ask(
            &hook,
            Method::GET,
            "/api/v1/namespaces/kube-system/pods",
            ""
        )
        .await,
        Decision::NoOpinion(String::new())
    );
    assert_eq!(
        ask(&hook, Method::GET, "/healthz", "").await,
        Decision::NoOpinion(String::new())
    );
    assert!(script.posted().is_empty(), "skipped");
    assert_eq!(
        ask(&hook, Method::GET, "/api/v1/namespaces/ns/pods", "").await,
        Decision::Allow
    );
    assert_eq!(script.posted().len(), 1, "called");

    // Cluster-scoped: no namespace, so the second condition fails to evaluate.
    for (policy, expected) in [
        (FailurePolicy::Deny, Decision::Deny(String::new())),
        (FailurePolicy::NoOpinion, Decision::NoOpinion(String::new())),
    ] {
        let script = Script::new(vec![status(&json!({"allowed": true}))]);
        let hook = webhook(&mode(SarVersion::V1, policy, &conditions), &script);
        assert_eq!(ask(&hook, Method::GET, "/api/v1/nodes", "").await, expected);
        assert!(script.posted().is_empty());
    }
    let script = Script::new(vec![status(&json!({"allowed": true}))]);
    let hook = webhook(
        &mode(
            SarVersion::V1,
            FailurePolicy::Deny,
            &[
                "request.resourceAttributes.namespace == 'x'",
                "request.user == 'bob'",
            ],
        ),
        &script,
    );
    assert_eq!(
        ask(&hook, Method::GET, "/api/v1/nodes", "").await,
        Decision::NoOpinion(String::new()),
        "a false condition wins over an error"
    );
    let not_bool = webhook(
        &mode(SarVersion::V1, FailurePolicy::Deny, &["request.user"]),
        &script,
    );
    assert_eq!(
        ask(&not_bool, Method::GET, "/api/v1/nodes", "").await,
        Decision::Deny(String::new()),
        "a result that is not a bool is an error"
    );
}
