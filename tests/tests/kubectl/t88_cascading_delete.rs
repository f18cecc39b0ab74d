//! `kubectl delete deployment` with each `--cascade`: a Deployment owning a ReplicaSet
//! owning Pods (their ownerReferences written by hand, as the deployment and replica set
//! controllers would write them; Apiary has none). Background removes the Deployment, then
//! the garbage collector its ReplicaSet and Pods; foreground removes the blocking
//! dependents first, so once kubectl returns they are gone; orphan leaves the ReplicaSet
//! and its Pods, without the reference to the Deployment.

use std::path::Path;
use std::time::Duration;

use apiary_tests::DevCluster;
use serde_json::Value;
use tokio::time::Instant;

use crate::run::kubectl;
use crate::run::kubectl_status;
use crate::run::kubernetes_cluster;
use crate::run::write_file;

/// How long the garbage collector may take.
const CONVERGE: Duration = Duration::from_secs(40);

async fn uid(kubeconfig: &Path, kind: &str, name: &str) -> String {
    kubectl(
        kubeconfig,
        &["get", kind, name, "-o", "jsonpath={.metadata.uid}"],
    )
    .await
}

fn owner(kind: &str, api_version: &str, name: &str, uid: &str) -> String {
    format!(
        "  ownerReferences:\n  - apiVersion: {api_version}\n    kind: {kind}\n    name: {name}\n    \
         uid: {uid}\n    controller: true\n    blockOwnerDeletion: true\n"
    )
}

/// The Deployment `name`, its ReplicaSet `<name>-rs` and Pods `<name>-rs-0`, `<name>-rs-1`.
async fn deployment(cluster: &DevCluster, name: &str) {
    let kubeconfig = cluster.kubeconfig();
    let deployment = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  selector:\n    \
         matchLabels: {{app: {name}}}\n  template:\n    metadata:\n      labels: {{app: {name}}}\n    \
         spec:\n      containers:\n      - {{name: c, image: busybox}}\n"
    );
    let file = write_file(cluster, &format!("{name}.yaml"), &deployment);
    kubectl(&kubeconfig, &["create", "-f", &file]).await;
    let owner_uid = uid(&kubeconfig, "deployment", name).await;
    let replica_set = format!(
        "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: {name}-rs\n  labels: {{app: {name}}}\n{}\
         spec:\n  selector:\n    matchLabels: {{app: {name}}}\n  template:\n    metadata:\n      \
         labels: {{app: {name}}}\n    spec:\n      containers:\n      - {{name: c, image: busybox}}\n",
        owner("Deployment", "apps/v1", name, &owner_uid)
    );
    let file = write_file(cluster, &format!("{name}-rs.yaml"), &replica_set);
    kubectl(&kubeconfig, &["create", "-f", &file]).await;
    let rs_uid = uid(&kubeconfig, "replicaset", &format!("{name}-rs")).await;
    for i in 0..2 {
        let pod = format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}-rs-{i}\n  labels: {{app: {name}}}\n{}\
             spec:\n  containers:\n  - {{name: c, image: busybox}}\n",
            owner("ReplicaSet", "apps/v1", &format!("{name}-rs"), &rs_uid)
        );
        let file = write_file(cluster, &format!("{name}-pod-{i}.yaml"), &pod);
        kubectl(&kubeconfig, &["create", "-f", &file]).await;
    }
}

/// The names of the ReplicaSets and Pods labelled `app=<name>`.
async fn dependents(kubeconfig: &Path, name: &str) -> Vec<String> {
    let selector = format!("app={name}");
    let out = kubectl(
        kubeconfig,
        &["get", "replicasets,pods", "-l", &selector, "-o", "name"],
    )
    .await;
    out.lines().map(str::to_owned).collect()
}

async fn until_no_dependents(kubeconfig: &Path, name: &str) {
    let deadline = Instant::now() + CONVERGE;
    loop {
        let left = dependents(kubeconfig, name).await;
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "never collected: {left:?}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

// `kubectl delete deployment` (background), `--cascade=foreground`, `--cascade=orphan`.
#[tokio::test]
async fn kubectl_delete_cascades_as_asked() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    for name in ["bg", "fg", "or"] {
        deployment(&cluster, name).await;
    }

    let out = kubectl(&kubeconfig, &["delete", "deployment", "bg"]).await;
    assert!(out.contains("deployment.apps \"bg\" deleted"), "{out}");
    until_no_dependents(&kubeconfig, "bg").await;

    let out = kubectl(
        &kubeconfig,
        &["delete", "deployment", "fg", "--cascade=foreground"],
    )
    .await;
    assert!(out.contains("deployment.apps \"fg\" deleted"), "{out}");
    let (found, text) = kubectl_status(&kubeconfig, &["get", "deployment", "fg"]).await;
    assert!(!found && text.contains("NotFound"), "{text}");
    let left = dependents(&kubeconfig, "fg").await;
    assert!(
        left.is_empty(),
        "the blocking dependents went first: {left:?}"
    );

    let out = kubectl(
        &kubeconfig,
        &["delete", "deployment", "or", "--cascade=orphan"],
    )
    .await;
    assert!(out.contains("deployment.apps \"or\" deleted"), "{out}");
    let (found, text) = kubectl_status(&kubeconfig, &["get", "deployment", "or"]).await;
    assert!(!found && text.contains("NotFound"), "{text}");
    let out = kubectl(&kubeconfig, &["get", "replicaset", "or-rs", "-o", "json"]).await;
    let replica_set: Value = serde_json::from_str(&out).expect("kubectl -o json");
    assert!(
        replica_set["metadata"]["ownerReferences"].is_null(),
        "orphaned: {replica_set}"
    );
    assert_eq!(
        dependents(&kubeconfig, "or").await.len(),
        3,
        "nothing else is deleted"
    );
}
