//! A ValidatingAdmissionPolicy's status (issue 22, item 3: type checking with the status
//! `typeChecking` warnings): applied with kubectl, a policy whose expression names a field a
//! Deployment does not have gets a warning naming the expression, the kind and the field, at
//! `observedGeneration` 1; once the expression is fixed, generation 2 is observed with no
//! warning.

use crate::run::kubectl;
use crate::run::kubernetes_cluster;
use crate::run::until;
use crate::run::write_file;

fn policy(expression: &str) -> String {
    format!(
        "apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: typed
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [deployments]
  validations:
  - expression: \"{expression}\"
"
    )
}

const STATUS: &str = "jsonpath={.status.observedGeneration} {.status.typeChecking}";

#[tokio::test]
async fn a_policy_is_type_checked_into_its_status_per_generation() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    let typo = write_file(&cluster, "typo.yaml", &policy("object.spec.replicaz <= 5"));
    let out = kubectl(&kubeconfig, &["apply", "-f", &typo]).await;
    assert!(
        out.contains("validatingadmissionpolicy.admissionregistration.k8s.io/typed created"),
        "{out}"
    );

    let args = ["get", "validatingadmissionpolicy", "typed", "-o", STATUS];
    let out = until(&kubeconfig, &args, |_, out| out.starts_with("1 ")).await;
    assert!(out.starts_with("1 "), "{out}");
    let out = kubectl(
        &kubeconfig,
        &["get", "validatingadmissionpolicy", "typed", "-o",
          "jsonpath={.status.typeChecking.expressionWarnings[0].fieldRef}|{.status.typeChecking.expressionWarnings[0].warning}"],
    )
    .await;
    assert!(
        out.starts_with("spec.validations[0].expression|apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicaz'"),
        "{out}"
    );

    let fixed = write_file(&cluster, "fixed.yaml", &policy("object.spec.replicas <= 5"));
    let out = kubectl(&kubeconfig, &["apply", "-f", &fixed]).await;
    assert!(
        out.contains("validatingadmissionpolicy.admissionregistration.k8s.io/typed configured"),
        "{out}"
    );
    let out = until(&kubeconfig, &args, |_, out| out.starts_with("2 ")).await;
    assert_eq!(out.trim(), "2 {}", "{out}");
}
