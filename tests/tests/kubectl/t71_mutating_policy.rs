//! A MutatingAdmissionPolicy applied with kubectl (issue 22, item 3): a policy whose
//! ApplyConfiguration adds a label to every ConfigMap created in the namespace `team-a`
//! makes the label part of the stored object, as `kubectl get -o jsonpath` shows; a
//! ConfigMap created elsewhere is left alone.

use crate::run::kubectl;
use crate::run::kubernetes_cluster;
use crate::run::until;
use crate::run::write_file;

const POLICY: &str = "\
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata:
  name: team-label
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: ['']
      apiVersions: [v1]
      operations: [CREATE]
      resources: [configmaps]
  matchConditions:
  - name: in-team-a
    expression: request.namespace == 'team-a'
  reinvocationPolicy: Never
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration:
      expression: \"Object{metadata: Object.metadata{labels: {'team': 'a'}}}\"
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata:
  name: team-label-binding
spec:
  policyName: team-label
";

const LABEL: &str = "jsonpath={.metadata.labels.team}";

#[tokio::test]
async fn kubectl_creates_are_mutated_by_an_admission_policy() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    kubectl(&kubeconfig, &["create", "namespace", "team-a"]).await;
    let policy = write_file(&cluster, "policy.yaml", POLICY);
    let out = kubectl(&kubeconfig, &["apply", "-f", &policy]).await;
    assert!(
        out.contains("mutatingadmissionpolicy.admissionregistration.k8s.io/team-label created"),
        "{out}"
    );

    // Every replica follows the policies a moment behind the write: until this one does, the
    // ConfigMap is created without the label, and removed again.
    let mut label = String::new();
    for _ in 0..100 {
        kubectl(&kubeconfig, &["create", "configmap", "c1", "-n", "team-a"]).await;
        label = kubectl(
            &kubeconfig,
            &["get", "cm", "c1", "-n", "team-a", "-o", LABEL],
        )
        .await;
        if label == "a" {
            break;
        }
        kubectl(&kubeconfig, &["delete", "cm", "c1", "-n", "team-a"]).await;
        until(
            &kubeconfig,
            &["get", "cm", "c1", "-n", "team-a"],
            |ok, _| !ok,
        )
        .await;
    }
    assert_eq!(label, "a");

    kubectl(&kubeconfig, &["create", "configmap", "c2", "-n", "default"]).await;
    let other = kubectl(
        &kubeconfig,
        &["get", "cm", "c2", "-n", "default", "-o", LABEL],
    )
    .await;
    assert_eq!(other, "");
}
