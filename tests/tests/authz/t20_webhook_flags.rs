//! The webhook of `--authorization-mode=Webhook,...` and `--authorization-webhook-*`: its
//! reviews (v1beta1 by default), allow, deny, no opinion passed to the next mode, and its
//! answers kept for the cache TTLs.

use apiary_tests::authz_webhook;
use apiary_tests::authz_webhook::Answer;
use apiary_tests::authz_webhook::Table;
use apiary_tests::authz_webhook::received_for;
use http::StatusCode;
use serde_json::json;

use crate::PODS;
use crate::start;
use crate::status_of;

// R-ACC-163, R-ACC-198, R-ACC-199: Webhook before AlwaysAllow: the webhook's allow and deny
// decide, its no opinion leaves it to AlwaysAllow; the review is a v1beta1
// SubjectAccessReview with the user (groups as `group`) and the resource attributes; an
// identical request within the TTLs is not sent again, allowed or denied.
#[tokio::test]
async fn the_flag_webhook_decides_first_and_keeps_its_answers() {
    let dir = tempfile::tempdir().expect("dir");
    let table = Table::from([
        ("alice".to_owned(), Answer::Allow),
        ("bob".to_owned(), Answer::Deny("bob is out".to_owned())),
        ("carl".to_owned(), Answer::NoOpinion),
    ]);
    let webhook = authz_webhook::start(dir.path(), table)
        .await
        .expect("webhook");
    let kubeconfig = dir.path().join("webhook.kubeconfig");
    webhook.kubeconfig(&kubeconfig).expect("kubeconfig");
    let cluster = start(
        dir.path(),
        &[
            "--authorization-mode=Webhook,AlwaysAllow".to_owned(),
            format!(
                "--authorization-webhook-config-file={}",
                kubeconfig.display()
            ),
            "--authorization-webhook-cache-authorized-ttl=1h".to_owned(),
            "--authorization-webhook-cache-unauthorized-ttl=1h".to_owned(),
        ],
    )
    .await;
    for _ in 0..2 {
        assert_eq!(status_of(&cluster, "alice", PODS).await, StatusCode::OK);
        assert_eq!(
            status_of(&cluster, "bob", PODS).await,
            StatusCode::FORBIDDEN
        );
        assert_eq!(status_of(&cluster, "carl", PODS).await, StatusCode::OK);
    }
    assert_eq!(
        received_for(&webhook, "alice").len(),
        1,
        "the allow was kept"
    );
    assert_eq!(received_for(&webhook, "bob").len(), 1, "the deny was kept");
    assert_eq!(
        received_for(&webhook, "carl").len(),
        1,
        "the no opinion was kept"
    );
    let review = &received_for(&webhook, "alice")[0];
    assert_eq!(review["apiVersion"], "authorization.k8s.io/v1beta1");
    assert_eq!(review["kind"], "SubjectAccessReview");
    assert_eq!(review["spec"]["uid"], "1");
    assert_eq!(
        review["spec"]["group"],
        json!(["dev", "system:authenticated"])
    );
    assert_eq!(
        review["spec"]["resourceAttributes"],
        json!({"namespace": "default", "verb": "list", "version": "v1", "resource": "pods"})
    );
    assert_eq!(
        status_of(&cluster, "alice", "/api/v1/namespaces/default/configmaps").await,
        StatusCode::OK
    );
    assert_eq!(
        received_for(&webhook, "alice").len(),
        2,
        "another request is asked"
    );
}
