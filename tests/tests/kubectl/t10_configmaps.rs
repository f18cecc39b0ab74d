//! ConfigMaps created, read and deleted with kubectl, each step through a different replica.

use apiary_tests::objects;
use http::StatusCode;

use crate::run::kubectl;
use crate::run::kubernetes_cluster;
use crate::run::write_file;

fn manifest(name: &str, value: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\n\
         data:\n  greeting: {value}\n"
    )
}

// R-HA-016, R-HA-003
#[tokio::test]
async fn kubectl_applies_gets_and_deletes_configmaps_through_different_replicas() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    let applied = write_file(&cluster, "applied.yaml", &manifest("applied", "hello"));
    let created = write_file(&cluster, "created.yaml", &manifest("created", "bonjour"));

    // `apply` through the current context (node-1), `create` through node-3.
    let out = kubectl(&kubeconfig, &["apply", "-f", &applied]).await;
    assert!(out.contains("configmap/applied"), "{out}");
    let out = kubectl(
        &kubeconfig,
        &["--context", "node-3", "create", "-f", &created],
    )
    .await;
    assert!(out.contains("configmap/created"), "{out}");

    // `get` through node-2 sees both, with their data.
    for (name, value) in [("applied", "hello"), ("created", "bonjour")] {
        let out = kubectl(
            &kubeconfig,
            &[
                "--context",
                "node-2",
                "get",
                "configmap",
                name,
                "-o",
                "json",
            ],
        )
        .await;
        let object: serde_json::Value = serde_json::from_str(&out).expect("kubectl -o json");
        assert_eq!(object["kind"], "ConfigMap");
        assert_eq!(object["metadata"]["name"], name);
        assert_eq!(object["data"]["greeting"], value);
    }
    let out = kubectl(
        &kubeconfig,
        &["--context", "node-2", "get", "configmaps", "-o", "name"],
    )
    .await;
    assert!(out.lines().any(|l| l == "configmap/applied"), "{out}");
    assert!(out.lines().any(|l| l == "configmap/created"), "{out}");

    // `delete` through node-3; then it is gone on node-1.
    let out = kubectl(
        &kubeconfig,
        &["--context", "node-3", "delete", "configmap", "applied"],
    )
    .await;
    assert!(out.contains("deleted"), "{out}");
    let gone = cluster
        .client(1)
        .unwrap()
        .get(&objects::configmap_path("applied"))
        .await
        .unwrap();
    assert_eq!(gone.status, StatusCode::NOT_FOUND, "{}", gone.text());
    let kept = cluster
        .client(1)
        .unwrap()
        .get(&objects::configmap_path("created"))
        .await
        .unwrap();
    assert_eq!(kept.status, StatusCode::OK, "{}", kept.text());
}
