//! kubectl through the computed kinds: who am I, may I, and a TokenReview of a service
//! account token, plus `kubectl get componentstatuses`. The reviews go in JSON
//! through `kubectl create --raw` here; t12 runs `kubectl auth whoami` and `kubectl auth
//! can-i` themselves, which send them as Protobuf.

use std::path::Path;

use serde_json::Value;
use serde_json::json;

use crate::run::kubectl;
use crate::run::kubernetes_cluster;

/// POSTs `body` to `path` through `kubectl create --raw` and answers the reply.
async fn create_raw(kubeconfig: &Path, dir: &Path, path: &str, body: &Value) -> Value {
    let file = dir.join("review.json");
    std::fs::write(&file, body.to_string()).expect("review written");
    let out = kubectl(
        kubeconfig,
        &[
            "create",
            "--raw",
            path,
            "-f",
            file.to_str().expect("a UTF-8 path"),
        ],
    )
    .await;
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

// R-ACC-016 (whoami), R-RES-007, R-ACC-095 (can-i), R-ACC-012, R-ACC-013 (TokenReview),
// R-RES-010 (componentstatuses)
#[tokio::test]
async fn kubectl_whoami_can_i_token_review_and_component_statuses() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    let dir = cluster.dir();

    let whoami = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let me = create_raw(
        &kubeconfig,
        dir,
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        &whoami,
    )
    .await;
    let groups = &me["status"]["userInfo"]["groups"];
    assert!(
        groups
            .as_array()
            .is_some_and(|g| g.iter().any(|g| g == "system:masters")),
        "{me}"
    );

    let can_i = json!({
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "create", "resource": "pods", "namespace": "default"}},
    });
    let review = create_raw(
        &kubeconfig,
        dir,
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        &can_i,
    )
    .await;
    assert_eq!(review["status"]["allowed"], true, "{review}");
    let can_bob = json!({
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {"user": "bob", "resourceAttributes": {"verb": "create", "resource": "pods"}},
    });
    let review = create_raw(
        &kubeconfig,
        dir,
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        &can_bob,
    )
    .await;
    assert_eq!(review["status"]["allowed"], false, "{review}");

    let account = dir.join("robot.yaml");
    std::fs::write(
        &account,
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: robot\n  namespace: default\n",
    )
    .unwrap();
    kubectl(&kubeconfig, &["create", "-f", account.to_str().unwrap()]).await;
    let request =
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}});
    let issued = create_raw(
        &kubeconfig,
        dir,
        "/api/v1/namespaces/default/serviceaccounts/robot/token",
        &request,
    )
    .await;
    let token = issued["status"]["token"].as_str().unwrap();
    let review = json!({
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenReview",
        "spec": {"token": token},
    });
    let path = "/apis/authentication.k8s.io/v1/tokenreviews";
    let reviewed = create_raw(&kubeconfig, dir, path, &review).await;
    assert_eq!(reviewed["status"]["authenticated"], true, "{reviewed}");
    assert_eq!(
        reviewed["status"]["user"]["username"],
        "system:serviceaccount:default:robot"
    );
    let garbage = json!({
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenReview",
        "spec": {"token": "garbage"},
    });
    let reviewed = create_raw(&kubeconfig, dir, path, &garbage).await;
    assert_eq!(reviewed["status"]["authenticated"], false, "{reviewed}");
    assert!(reviewed["status"]["error"].is_string(), "{reviewed}");

    let out = kubectl(&kubeconfig, &["get", "componentstatuses", "-o", "json"]).await;
    let list: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(list["items"][0]["metadata"]["name"], "store", "{out}");
    assert_eq!(list["items"][0]["conditions"][0]["status"], "True", "{out}");
    let out = kubectl(&kubeconfig, &["get", "cs", "store", "-o", "name"]).await;
    assert_eq!(out.trim(), "componentstatus/store");
}
