//! PodSecurity with kubectl against a real cluster: a namespace labelled
//! `pod-security.kubernetes.io/enforce=restricted` refuses a privileged pod with Kubernetes'
//! message, and one labelled `warn=baseline` creates it with kubectl printing the warning.

use crate::run::kubectl;
use crate::run::kubectl_status;
use crate::run::kubernetes_cluster;
use crate::run::write_file;

const PRIVILEGED_POD: &str = "apiVersion: v1
kind: Pod
metadata:
  name: root
spec:
  containers:
  - name: c
    image: busybox
    securityContext:
      privileged: true
";

// No CHECKLIST ID (PodSecurity admission): enforce refuses with the standard's reasons, warn
// lets the pod in with kubectl's `Warning:` line.
#[tokio::test]
async fn restricted_namespaces_refuse_privileged_pods_and_baseline_warns() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    let pod = write_file(&cluster, "privileged-pod.yaml", PRIVILEGED_POD);
    for (namespace, label) in [
        ("locked", "pod-security.kubernetes.io/enforce=restricted"),
        ("watched", "pod-security.kubernetes.io/warn=baseline"),
    ] {
        kubectl(&kubeconfig, &["create", "namespace", namespace]).await;
        kubectl(&kubeconfig, &["label", "namespace", namespace, label]).await;
    }

    let (created, text) =
        kubectl_status(&kubeconfig, &["-n", "locked", "create", "-f", &pod]).await;
    assert!(!created, "{text}");
    assert!(
        text.contains(
            "pods \"root\" is forbidden: violates PodSecurity \"restricted:latest\": privileged \
             (container \"c\" must not set securityContext.privileged=true), \
             allowPrivilegeEscalation != false (container \"c\" must set \
             securityContext.allowPrivilegeEscalation=false)"
        ),
        "{text}"
    );

    let (created, text) =
        kubectl_status(&kubeconfig, &["-n", "watched", "create", "-f", &pod]).await;
    assert!(created, "{text}");
    assert!(
        text.contains(
            "Warning: would violate PodSecurity \"baseline:latest\": privileged (container \"c\" \
             must not set securityContext.privileged=true)"
        ),
        "{text}"
    );
    let out = kubectl(
        &kubeconfig,
        &["-n", "watched", "get", "pod", "root", "-o", "name"],
    )
    .await;
    assert_eq!(out.trim(), "pod/root");
}
