//! ResourceQuota with kubectl against a real cluster: `kubectl create quota`, the
//! `resourcequota` controller's counts in `kubectl get quota` and `kubectl describe quota`,
//! the pod over the quota refused with Kubernetes' message, and a deleted pod's usage freed
//! for the next one.

use crate::run::kubectl;
use crate::run::kubectl_status;
use crate::run::kubernetes_cluster;
use crate::run::until;

/// Whether `describe` prints the row `resource used hard`.
fn described(describe: &str, row: [&str; 3]) -> bool {
    describe
        .lines()
        .any(|line| line.split_whitespace().eq(row.iter().copied()))
}

// No CHECKLIST ID (ResourceQuota admission and its controller).
#[tokio::test]
async fn kubectl_quota_counts_refuses_and_frees_pods() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    kubectl(&kubeconfig, &["create", "namespace", "quota"]).await;
    let ns = ["-n", "quota"];
    let with =
        |args: &[&'static str]| -> Vec<&'static str> { ns.iter().chain(args).copied().collect() };
    kubectl(
        &kubeconfig,
        &with(&["create", "quota", "q", "--hard=pods=2,count/configmaps=3"]),
    )
    .await;
    // The namespace's `kube-root-ca.crt` (published by its controller) counts, as in
    // Kubernetes.
    let describe = until(
        &kubeconfig,
        &with(&["describe", "quota", "q"]),
        |ok, out| {
            ok && described(out, ["pods", "0", "2"])
                && described(out, ["count/configmaps", "1", "3"])
        },
    )
    .await;
    assert!(
        describe.contains("Name:") && describe.contains("q"),
        "{describe}"
    );

    kubectl(&kubeconfig, &with(&["create", "configmap", "c1"])).await;
    for pod in ["p1", "p2"] {
        kubectl(
            &kubeconfig,
            &with(&["run", pod, "--image=busybox", "--restart=Never"]),
        )
        .await;
    }
    let table = until(&kubeconfig, &with(&["get", "quota", "q"]), |ok, out| {
        ok && out.contains("pods: 2/2") && out.contains("count/configmaps: 2/3")
    })
    .await;
    assert!(table.contains("pods: 2/2"), "{table}");

    let (created, out) = kubectl_status(
        &kubeconfig,
        &with(&["run", "p3", "--image=busybox", "--restart=Never"]),
    )
    .await;
    assert!(!created, "{out}");
    assert!(
        out.contains(
            "pods \"p3\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, \
             limited: pods=2"
        ),
        "{out}"
    );

    kubectl(&kubeconfig, &with(&["delete", "pod", "p1"])).await;
    let out = until(
        &kubeconfig,
        &with(&["run", "p3", "--image=busybox", "--restart=Never"]),
        |ok, _| ok,
    )
    .await;
    assert!(out.contains("pod/p3 created"), "{out}");
    let describe = until(
        &kubeconfig,
        &with(&["describe", "quota", "q"]),
        |ok, out| ok && described(out, ["pods", "2", "2"]),
    )
    .await;
    assert!(
        described(&describe, ["count/configmaps", "2", "3"]),
        "{describe}"
    );
}
