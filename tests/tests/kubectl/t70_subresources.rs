//! kubectl through the subresources: `kubectl scale` reads, updates and patches a
//! deployment's `scale`, and a TokenRequest sent by kubectl gets a signed token for a
//! service account.

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;

use crate::run::kubectl;
use crate::run::kubernetes_cluster;
use crate::run::write_file;

const DEPLOYMENT: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  \
     namespace: default\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: web\n  \
     template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n      \
     - name: web\n        image: nginx\n";

/// The deployment `web`'s `spec.replicas`, as kubectl prints it.
async fn web_replicas(kubeconfig: &Path) -> String {
    kubectl(
        kubeconfig,
        &[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.spec.replicas}",
        ],
    )
    .await
}

// R-RES-078, R-RES-082, R-ACC-122, R-ACC-114
#[tokio::test]
async fn kubectl_scale_and_a_token_request() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    let manifest = write_file(&cluster, "web.yaml", DEPLOYMENT);
    kubectl(&kubeconfig, &["create", "-f", &manifest]).await;

    // With a precondition kubectl reads the Scale, checks it and writes it back (PUT).
    let out = kubectl(
        &kubeconfig,
        &[
            "scale",
            "deployment",
            "web",
            "--current-replicas=1",
            "--replicas=3",
        ],
    )
    .await;
    assert!(out.contains("scaled"), "{out}");
    let replicas = web_replicas(&kubeconfig).await;
    assert_eq!(replicas.trim(), "3");

    // Without one it patches the Scale (PATCH of the subresource).
    let out = kubectl(&kubeconfig, &["scale", "deployment", "web", "--replicas=2"]).await;
    assert!(out.contains("scaled"), "{out}");
    let replicas = web_replicas(&kubeconfig).await;
    assert_eq!(replicas.trim(), "2");

    // From a manifest (t12 runs `kubectl create serviceaccount` itself; `default` is the
    // serviceaccount controller's).
    let account = write_file(
        &cluster,
        "sa.yaml",
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: deployer\n  namespace: default\n",
    );
    kubectl(&kubeconfig, &["create", "-f", &account]).await;
    // The TokenRequest in JSON through `kubectl create --raw` (t12 runs `kubectl create
    // token` itself, which sends it as Protobuf).
    let request = write_file(
        &cluster,
        "token.json",
        r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest","spec":{}}"#,
    );
    let out = kubectl(
        &kubeconfig,
        &[
            "create",
            "--raw",
            "/api/v1/namespaces/default/serviceaccounts/deployer/token",
            "-f",
            &request,
        ],
    )
    .await;
    let answered: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(answered["kind"], "TokenRequest", "{out}");
    let token = answered["status"]["token"].as_str().unwrap().to_owned();
    let parts: Vec<&str> = token.trim().split('.').collect();
    assert_eq!(parts.len(), 3, "a JWT: {token}");
    let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
    assert_eq!(header["alg"], "RS256");
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
    assert_eq!(claims["sub"], "system:serviceaccount:default:deployer");
    assert_eq!(
        claims["kubernetes.io"]["serviceaccount"]["name"],
        "deployer"
    );
    assert_eq!(claims["kubernetes.io"]["namespace"], "default");
    assert_eq!(
        claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap(),
        3600
    );
}
