//! `apiary status` as the real binary against a real cluster (every replica's own figures and
//! versions, as text and as JSON), and the operating API's authorization: anonymous requests get
//! 403, unaccepted credentials 401, a user without RBAC 403, a service account granted `nonResourceURLs: ["/apiary/v1/*"]`
//! through a ClusterRole may read it.

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;

use crate::t100_members::apiary_ok;

// R-ACC-066 (a `*` suffix in nonResourceURLs), R-ACC-098 (the verb is the lowercase method)
#[tokio::test]
async fn status_shows_every_replica_with_its_own_figures() {
    let cluster = DevCluster::start(DevOptions::flavor(Flavor::Kubernetes))
        .await
        .unwrap();

    let out = apiary_ok(&cluster, &["status", "-o", "json"]).await;
    let status: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(status["kind"], "ClusterStatus", "{status}");
    assert_eq!(status["leaderView"], true, "{status}");
    assert!(status["effectiveVersion"].as_u64() >= Some(1), "{status}");
    let members = status["members"].as_array().expect("members");
    assert_eq!(members.len(), 3, "{status}");
    let leader = status["leader"].as_u64().expect("a leader");
    for m in members {
        assert_eq!(m["reachable"], true, "{m}");
        assert!(m["term"].as_u64() >= Some(1), "{m}");
        assert!(m["applied"].as_u64() >= Some(1), "{m}");
        assert!(m["committed"].as_u64() >= Some(1), "{m}");
        assert!(m["logEntries"].as_u64() >= Some(1), "{m}");
        assert!(m["keys"].as_u64() >= Some(1), "{m}");
        assert!(m["storeBytes"].as_u64() > m["keys"].as_u64(), "{m}");
        assert_eq!(m["leader"], leader, "{m}");
        assert!(m["lag"].is_u64(), "the leader's view has each lag: {m}");
        let role = if m["id"] == leader { "leader" } else { "voter" };
        assert_eq!(m["role"], role, "{m}");
        let versions = &m["versions"];
        assert!(
            versions["binary"].as_str().is_some_and(|b| !b.is_empty()),
            "{m}"
        );
        assert!(
            versions["newestProtocol"].as_u64() >= versions["oldestProtocol"].as_u64(),
            "{m}"
        );
    }

    let text = apiary_ok(&cluster, &["status"]).await;
    assert!(text.starts_with(&format!("leader: {leader} ")), "{text}");
    assert!(text.contains("| REACHABLE |"), "{text}");
    assert_eq!(text.matches("| yes ").count(), 3, "{text}");

    // Nothing of it without credentials (an anonymous request is system:anonymous, which no
    // rule grants it; a token no authenticator accepts is 401); with credentials, only as
    // RBAC allows.
    let anonymous = cluster.anonymous_client(1).await.unwrap();
    let denied = anonymous.get("/apiary/v1/status").await.unwrap();
    assert_eq!(denied.status, StatusCode::FORBIDDEN, "{}", denied.text());
    let bad_token = anonymous
        .clone()
        .with_header("authorization", "Bearer not-a-token")
        .unwrap();
    let denied = bad_token.get("/apiary/v1/members").await.unwrap();
    assert_eq!(denied.status, StatusCode::UNAUTHORIZED, "{}", denied.text());

    let admin = cluster.client(1).unwrap();
    let account = json!({"apiVersion": "v1", "kind": "ServiceAccount",
                         "metadata": {"name": "operator", "namespace": "default"}});
    admin
        .post("/api/v1/namespaces/default/serviceaccounts", &account)
        .await
        .unwrap()
        .expect(StatusCode::CREATED, "service account")
        .unwrap();
    let request = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                         "spec": {}});
    let issued = admin
        .post(
            "/api/v1/namespaces/default/serviceaccounts/operator/token",
            &request,
        )
        .await
        .unwrap()
        .expect(StatusCode::CREATED, "token")
        .unwrap();
    let issued: Value = serde_json::from_slice(&issued.body).unwrap();
    let token = issued["status"]["token"].as_str().expect("a token");
    let operator = anonymous
        .with_header("authorization", &format!("Bearer {token}"))
        .unwrap();
    let forbidden = operator.get("/apiary/v1/status").await.unwrap();
    assert_eq!(
        forbidden.status,
        StatusCode::FORBIDDEN,
        "{}",
        forbidden.text()
    );

    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "apiary-reader"},
        "rules": [{"nonResourceURLs": ["/apiary/v1/*"], "verbs": ["get"]}]});
    admin
        .post("/apis/rbac.authorization.k8s.io/v1/clusterroles", &role)
        .await
        .unwrap()
        .expect(StatusCode::CREATED, "cluster role")
        .unwrap();
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding", "metadata": {"name": "apiary-reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "apiary-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "operator", "namespace": "default"}]});
    admin
        .post(
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            &binding,
        )
        .await
        .unwrap()
        .expect(StatusCode::CREATED, "binding")
        .unwrap();
    let mut allowed = operator.get("/apiary/v1/members").await.unwrap();
    for _ in 0..50 {
        if allowed.status == StatusCode::OK {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        allowed = operator.get("/apiary/v1/members").await.unwrap();
    }
    assert_eq!(allowed.status, StatusCode::OK, "{}", allowed.text());
    // `get` only: adding a member stays forbidden.
    let add = json!({"peerURL": "https://127.0.0.1:1"});
    let write = operator.post("/apiary/v1/members", &add).await.unwrap();
    assert_eq!(write.status, StatusCode::FORBIDDEN, "{}", write.text());
}
