//! Tests of the authentication webhook against a scripted server (the real TLS server is in
//! the black-box tests).

use std::sync::Mutex;

use serde_json::Value;
use serde_json::json;

use super::*;

/// Answers each post with the next scripted answer (the last one repeats) and records the
/// bodies it received.
#[derive(Default)]
struct Scripted {
    answers: Mutex<Vec<(StatusCode, Value)>>,
    received: Mutex<Vec<Value>>,
}

impl Scripted {
    fn answering(answers: Vec<(StatusCode, Value)>) -> Arc<Self> {
        Arc::new(Self {
            answers: Mutex::new(answers),
            received: Mutex::default(),
        })
    }

    fn received(&self) -> Vec<Value> {
        self.received.lock().expect("lock").clone()
    }
}

#[async_trait::async_trait]
impl ReviewPoster for Scripted {
    async fn post(&self, body: Vec<u8>) -> Result<(StatusCode, Vec<u8>), String> {
        let body: Value = serde_json::from_slice(&body).expect("JSON");
        self.received.lock().expect("lock").push(body);
        let mut answers = self.answers.lock().expect("lock");
        let (status, answer) = if answers.len() > 1 {
            answers.remove(0)
        } else {
            answers[0].clone()
        };
        Ok((status, answer.to_string().into_bytes()))
    }
}

/// A webhook keeping answers for two minutes, retrying after a millisecond.
fn webhook(poster: Arc<Scripted>, version: ReviewVersion, audiences: &[&str]) -> TokenWebhook {
    let mut hook = TokenWebhook::new(
        poster,
        Flavor::Kubernetes,
        version,
        audiences.iter().map(|a| (*a).to_owned()).collect(),
        Duration::from_secs(120),
    );
    hook.first_backoff = Duration::from_millis(1);
    hook
}

fn reply(version: &str, status: Value) -> (StatusCode, Value) {
    (
        StatusCode::OK,
        json!({
            "apiVersion": format!("authentication.k8s.io/{version}"),
            "kind": "TokenReview",
            "spec": {"token": "ignored"},
            "status": status,
        }),
    )
}

fn alice() -> Value {
    json!({"authenticated": true, "user": {
        "username": "alice", "uid": "u-1", "groups": ["dev", "ops"],
        "extra": {"scopes": ["a", "b"]}
    }})
}

// R-ACC-008, R-ACC-094, R-ACC-010, R-ACC-012, R-ACC-013, R-ACC-015: the default version
// v1beta1 is posted as JSON with the opaque token and no audiences; the answer's user, uid,
// groups and extra become the user's, its spec is ignored.
#[tokio::test]
async fn an_authenticated_answer_gives_the_user() {
    let server = Scripted::answering(vec![reply("v1beta1", alice())]);
    let hook = webhook(server.clone(), ReviewVersion::default(), &[]);
    let TokenOutcome::Authenticated(found) = hook.decide("opaque-token", &[]).await else {
        panic!("not authenticated")
    };
    assert_eq!(found.user.name, "alice");
    assert_eq!(found.user.uid, "u-1");
    assert_eq!(found.user.groups, ["dev", "ops"]);
    assert_eq!(found.user.extra["scopes"], ["a", "b"]);
    assert_eq!(
        server.received(),
        [json!({
            "apiVersion": "authentication.k8s.io/v1beta1",
            "kind": "TokenReview",
            "spec": {"token": "opaque-token"},
        })]
    );
}

// R-ACC-009: the answer is decoded in the version sent; another version is a failure.
#[tokio::test]
async fn the_answer_must_be_in_the_version_sent() {
    let server = Scripted::answering(vec![reply("v1", alice())]);
    let hook = webhook(server.clone(), ReviewVersion::V1, &[]);
    assert!(matches!(
        hook.decide("t", &[]).await,
        TokenOutcome::Authenticated(_)
    ));
    assert_eq!(
        server.received()[0]["apiVersion"],
        "authentication.k8s.io/v1"
    );
    let server = Scripted::answering(vec![reply("v1beta1", alice())]);
    let hook = webhook(server, ReviewVersion::V1, &[]);
    assert_eq!(
        hook.decide("t", &[]).await,
        TokenOutcome::Rejected("the authentication webhook failed".to_owned())
    );
}

// R-ACC-010, R-ACC-011: the API's audiences are sent; the token is accepted only for the
// intersection with the answer's audiences (the API's when the answer names none).
#[tokio::test]
async fn audiences_are_sent_and_intersected() {
    let mut with = alice();
    with["audiences"] = json!(["other", "api"]);
    let server = Scripted::answering(vec![reply("v1beta1", with)]);
    let hook = webhook(server.clone(), ReviewVersion::default(), &["api", "extra"]);
    let TokenOutcome::Authenticated(found) = hook.decide("t", &[]).await else {
        panic!("not authenticated")
    };
    assert_eq!(found.audiences, ["api"]);
    assert_eq!(
        server.received()[0]["spec"]["audiences"],
        json!(["api", "extra"])
    );

    let server = Scripted::answering(vec![reply("v1beta1", alice())]);
    let hook = webhook(server, ReviewVersion::default(), &["api"]);
    let TokenOutcome::Authenticated(found) = hook.decide("t", &[]).await else {
        panic!("not authenticated")
    };
    assert_eq!(found.audiences, ["api"]);

    let mut elsewhere = alice();
    elsewhere["audiences"] = json!(["other"]);
    let server = Scripted::answering(vec![reply("v1beta1", elsewhere)]);
    let hook = webhook(server, ReviewVersion::default(), &["api"]);
    assert_eq!(hook.decide("t", &[]).await, TokenOutcome::NotMine);
}

// R-ACC-012, R-ACC-014: a refusal with status.error is a rejection whose reason is the error
// (kept for the log, any quote of the token masked), one without is no opinion; an authenticated answer without a username
// is refused, and status.error is ignored when authenticated.
#[tokio::test]
async fn refusals_and_answers_without_a_username() {
    let cases = [
        (
            json!({"authenticated": false, "error": "token opaque-secret expired"}),
            TokenOutcome::Rejected("the authentication webhook: token [token] expired".to_owned()),
        ),
        (json!({"authenticated": false}), TokenOutcome::NotMine),
        (
            json!({"authenticated": true, "user": {"groups": ["g"]}}),
            TokenOutcome::Rejected(
                "the authentication webhook authenticated a token without a username".to_owned(),
            ),
        ),
    ];
    for (status, expected) in cases {
        let hook = webhook(
            Scripted::answering(vec![reply("v1beta1", status)]),
            ReviewVersion::default(),
            &[],
        );
        assert_eq!(hook.decide("opaque-secret", &[]).await, expected);
    }
    let mut ignored = alice();
    ignored["error"] = json!("ignored");
    let hook = webhook(
        Scripted::answering(vec![reply("v1beta1", ignored)]),
        ReviewVersion::default(),
        &[],
    );
    assert!(matches!(
        hook.decide("t", &[]).await,
        TokenOutcome::Authenticated(_)
    ));
}

// R-ACC-127: answers are cached per token and audiences for the TTL, then asked again.
#[tokio::test]
async fn answers_are_cached_for_the_ttl() {
    let server = Scripted::answering(vec![reply("v1beta1", alice())]);
    let hook = webhook(server.clone(), ReviewVersion::default(), &[]);
    for _ in 0..3 {
        assert!(matches!(
            hook.decide("t", &[]).await,
            TokenOutcome::Authenticated(_)
        ));
    }
    assert_eq!(server.received().len(), 1);
    hook.decide("t", &["other".to_owned()]).await;
    hook.decide("u", &[]).await;
    assert_eq!(
        server.received().len(),
        3,
        "another token or audience is asked"
    );

    let server = Scripted::answering(vec![reply("v1beta1", alice())]);
    let mut hook = webhook(server.clone(), ReviewVersion::default(), &[]);
    hook.ttl = Duration::from_millis(50);
    hook.decide("t", &[]).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    hook.decide("t", &[]).await;
    assert_eq!(server.received().len(), 2, "asked again after the TTL");

    let server = Scripted::answering(vec![reply("v1beta1", alice())]);
    let mut hook = webhook(server.clone(), ReviewVersion::default(), &[]);
    hook.ttl = Duration::ZERO;
    hook.decide("t", &[]).await;
    hook.decide("t", &[]).await;
    assert_eq!(server.received().len(), 2, "a zero TTL keeps nothing");
}

// R-ACC-127: failures of the server are retried with backoff, then give up uncached; an
// answer that is not worth retrying (403) is not retried.
#[tokio::test]
async fn failures_are_retried_then_not_cached() {
    let unavailable = (StatusCode::SERVICE_UNAVAILABLE, json!({}));
    let server = Scripted::answering(vec![
        unavailable.clone(),
        unavailable,
        reply("v1beta1", alice()),
    ]);
    let hook = webhook(server.clone(), ReviewVersion::default(), &[]);
    assert!(matches!(
        hook.decide("t", &[]).await,
        TokenOutcome::Authenticated(_)
    ));
    assert_eq!(server.received().len(), 3);

    let server = Scripted::answering(vec![(StatusCode::INTERNAL_SERVER_ERROR, json!({}))]);
    let hook = webhook(server.clone(), ReviewVersion::default(), &[]);
    let failed = TokenOutcome::Rejected("the authentication webhook failed".to_owned());
    assert_eq!(hook.decide("t", &[]).await, failed);
    assert_eq!(server.received().len(), 5);
    assert_eq!(hook.decide("t", &[]).await, failed);
    assert_eq!(server.received().len(), 10, "a failure is not cached");

    let server = Scripted::answering(vec![(StatusCode::FORBIDDEN, json!({}))]);
    let hook = webhook(server.clone(), ReviewVersion::default(), &[]);
    assert_eq!(hook.decide("t", &[]).await, failed);
    assert_eq!(server.received().len(), 1);
}
