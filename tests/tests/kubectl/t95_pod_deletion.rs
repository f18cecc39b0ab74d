//! `kubectl delete pod` and graceful deletion: a bound pod deleted with `--wait=false` stays
//! Terminating for its grace period; `--grace-period=0 --force` removes it at once.

use crate::run::kubectl;
use crate::run::kubectl_status;
use crate::run::kubernetes_cluster;
use crate::run::write_file;

/// A Ready Node `n1` and a pod bound to it with a 30 s grace period.
const OBJECTS: &str = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\nstatus:\n  \
     conditions:\n  - type: Ready\n    status: \"True\"\n---\napiVersion: v1\nkind: Pod\n\
     metadata:\n  name: bound\n  namespace: default\nspec:\n  nodeName: n1\n  \
     terminationGracePeriodSeconds: 30\n  containers:\n  - name: main\n    image: busybox\n";

// R-RES-052, R-RES-062
#[tokio::test]
async fn kubectl_delete_pod_leaves_it_terminating_until_forced() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    let manifest = write_file(&cluster, "bound.yaml", OBJECTS);
    kubectl(&kubeconfig, &["create", "-f", &manifest]).await;

    let out = kubectl(&kubeconfig, &["delete", "pod", "bound", "--wait=false"]).await;
    assert!(out.contains("pod \"bound\" deleted"), "{out}");
    let grace = kubectl(
        &kubeconfig,
        &[
            "get",
            "pod",
            "bound",
            "-o",
            "jsonpath={.metadata.deletionGracePeriodSeconds} {.metadata.deletionTimestamp}",
        ],
    )
    .await;
    let (seconds, at) = grace.split_once(' ').expect("two fields");
    assert_eq!(seconds, "30", "{grace}");
    assert!(!at.is_empty(), "a deletionTimestamp: {grace}");
    let table = kubectl(&kubeconfig, &["get", "pod", "bound"]).await;
    assert!(table.contains("Terminating"), "{table}");

    let (forced, out) = kubectl_status(
        &kubeconfig,
        &["delete", "pod", "bound", "--grace-period=0", "--force"],
    )
    .await;
    assert!(forced, "{out}");
    assert!(out.contains("force deleted"), "{out}");
    let (found, out) = kubectl_status(&kubeconfig, &["get", "pod", "bound"]).await;
    assert!(!found, "the pod is gone: {out}");
    assert!(out.contains("NotFound"), "{out}");
}
