//! AlwaysDeny and AlwaysAllow: every request denied (but `system:masters`), every request
//! allowed (and anonymous access off).

use http::Method;
use http::StatusCode;

use crate::PODS;
use crate::client;
use crate::start;
use crate::status_of;

// R-ACC-161, R-ACC-168: with AlwaysDeny a user is forbidden, with its reason, while the
// admin in system:masters still lists pods.
#[tokio::test]
async fn always_deny_forbids_all_but_system_masters() {
    let dir = tempfile::tempdir().expect("dir");
    let cluster = start(dir.path(), &["--authorization-mode=AlwaysDeny".to_owned()]).await;
    let reply = client(&cluster, Some("alice-token"))
        .await
        .send(Method::GET, PODS, None)
        .await
        .expect("an answer");
    assert_eq!(reply.status, StatusCode::FORBIDDEN, "{}", reply.text());
    assert!(
        reply.text().contains(
            r#"User \"alice\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\": Everything is forbidden."#
        ),
        "{}",
        reply.text()
    );
    let admin = cluster.client(1).expect("replica 1");
    let reply = admin.get(PODS).await.expect("an answer");
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
}

// R-ACC-160, R-ACC-146: with AlwaysAllow any authenticated user may do anything, and a request
// without credentials is not let in as anonymous.
#[tokio::test]
async fn always_allow_allows_everyone_and_turns_anonymous_off() {
    let dir = tempfile::tempdir().expect("dir");
    let cluster = start(dir.path(), &["--authorization-mode=AlwaysAllow".to_owned()]).await;
    assert_eq!(status_of(&cluster, "alice", PODS).await, StatusCode::OK);
    assert_eq!(
        status_of(&cluster, "bob", "/api/v1/namespaces/kube-system/secrets").await,
        StatusCode::OK
    );
    let anonymous = client(&cluster, None)
        .await
        .send(Method::GET, PODS, None)
        .await
        .expect("an answer");
    assert_eq!(
        anonymous.status,
        StatusCode::UNAUTHORIZED,
        "{}",
        anonymous.text()
    );
}
