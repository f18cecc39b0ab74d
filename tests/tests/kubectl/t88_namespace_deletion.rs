//! `kubectl delete namespace` against a real cluster: it returns once the namespace
//! controller has emptied the namespace and the namespace is gone, instead of waiting forever.

use crate::run::kubectl;
use crate::run::kubectl_status;
use crate::run::kubernetes_cluster;

// R-RES-015, R-RES-061: `kubectl delete namespace` (which waits for the namespace to be gone)
// returns, the namespace and its content are gone, and a system namespace cannot be deleted.
#[tokio::test]
async fn kubectl_delete_namespace_returns_and_the_namespace_is_gone() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    kubectl(&kubeconfig, &["create", "namespace", "scratch"]).await;
    kubectl(
        &kubeconfig,
        &[
            "-n",
            "scratch",
            "create",
            "configmap",
            "a",
            "--from-literal=k=v",
        ],
    )
    .await;
    kubectl(
        &kubeconfig,
        &[
            "-n",
            "scratch",
            "create",
            "secret",
            "generic",
            "s",
            "--from-literal=k=v",
        ],
    )
    .await;

    let out = kubectl(
        &kubeconfig,
        &["--context", "node-2", "delete", "namespace", "scratch"],
    )
    .await;
    assert!(out.contains("namespace \"scratch\" deleted"), "{out}");
    let (found, text) = kubectl_status(&kubeconfig, &["get", "namespace", "scratch"]).await;
    assert!(!found, "the namespace is still there: {text}");
    assert!(
        text.contains("NotFound") || text.contains("not found"),
        "{text}"
    );
    let out = kubectl(
        &kubeconfig,
        &["-n", "scratch", "get", "configmaps,secrets", "-o", "name"],
    )
    .await;
    assert!(
        out.trim().is_empty(),
        "content outlived its namespace: {out}"
    );

    let (deleted, text) = kubectl_status(&kubeconfig, &["delete", "namespace", "default"]).await;
    assert!(!deleted, "{text}");
    assert!(text.contains("this namespace may not be deleted"), "{text}");
}
