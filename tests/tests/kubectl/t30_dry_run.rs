//! `kubectl --dry-run=server` create, replace and delete answer as the real commands would and
//! leave the replicated store as it was, seen through another replica.

use apiary_tests::objects;
use http::StatusCode;
use serde_json::Value;

use crate::run::kubectl;
use crate::run::kubernetes_cluster;
use crate::run::write_file;

fn manifest(name: &str, value: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\n\
         data:\n  greeting: {value}\n"
    )
}

fn parse(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("kubectl -o json ({e}): {out}"))
}

// R-RES-192, R-RES-193, R-RES-194
#[tokio::test]
async fn kubectl_server_dry_runs_change_nothing() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    let node1 = cluster.client(1).unwrap();
    let file = |name: &str, body: String| write_file(&cluster, name, &body);

    // A dry-run create answers the would-be object, without resourceVersion, and stores nothing.
    let dry = file("dry.yaml", manifest("dry", "hello"));
    let out = kubectl(
        &kubeconfig,
        &["create", "--dry-run=server", "-f", &dry, "-o", "json"],
    )
    .await;
    let answered = parse(&out);
    assert_eq!(answered["data"]["greeting"], "hello");
    assert!(answered["metadata"]["uid"].is_string(), "{answered}");
    assert!(objects::resource_version(&answered).is_none(), "{answered}");
    let absent = node1.get(&objects::configmap_path("dry")).await.unwrap();
    assert_eq!(absent.status, StatusCode::NOT_FOUND, "{}", absent.text());

    // A real object, then a dry-run replace and delete of it through node-3.
    let kept = file("kept.yaml", manifest("kept", "hello"));
    kubectl(&kubeconfig, &["create", "-f", &kept]).await;
    let before = node1
        .get(&objects::configmap_path("kept"))
        .await
        .unwrap()
        .expect(StatusCode::OK, "get kept")
        .unwrap()
        .json("kept")
        .unwrap();
    let changed = file("changed.yaml", manifest("kept", "bonjour"));
    let out = kubectl(
        &kubeconfig,
        &[
            "--context",
            "node-3",
            "replace",
            "--dry-run=server",
            "-f",
            &changed,
            "-o",
            "json",
        ],
    )
    .await;
    let answered = parse(&out);
    assert_eq!(answered["data"]["greeting"], "bonjour");
    assert_eq!(
        objects::resource_version(&answered),
        objects::resource_version(&before)
    );
    let out = kubectl(
        &kubeconfig,
        &[
            "--context",
            "node-3",
            "delete",
            "configmap",
            "kept",
            "--dry-run=server",
        ],
    )
    .await;
    assert!(out.contains("(server dry run)"), "{out}");

    let after = node1
        .get(&objects::configmap_path("kept"))
        .await
        .unwrap()
        .expect(StatusCode::OK, "get kept after the dry runs")
        .unwrap()
        .json("kept")
        .unwrap();
    assert_eq!(after, before);
}
