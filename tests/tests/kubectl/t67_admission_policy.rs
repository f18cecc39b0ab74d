//! A ValidatingAdmissionPolicy applied with kubectl (issue 22, item 3): a policy whose param
//! ConfigMap holds the most replicas a Deployment may have, bound with `Deny`, makes
//! `kubectl apply` of a Deployment with more refused with the policy's message, and one with
//! fewer accepted.

use crate::run::kubectl;
use crate::run::kubectl_status;
use crate::run::kubernetes_cluster;
use crate::run::until;
use crate::run::write_file;

const POLICY: &str = "\
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: replica-limit
spec:
  failurePolicy: Fail
  paramKind:
    apiVersion: v1
    kind: ConfigMap
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [deployments]
  validations:
  - expression: object.spec.replicas <= int(params.data.maxReplicas)
    messageExpression: \"'replicas must be no greater than ' + params.data.maxReplicas\"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: replica-limit
  namespace: default
data:
  maxReplicas: \"5\"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: replica-limit-binding
spec:
  policyName: replica-limit
  validationActions: [Deny]
  paramRef:
    name: replica-limit
    namespace: default
    parameterNotFoundAction: Deny
";

fn deployment(replicas: u32) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: default\n\
         spec:\n  replicas: {replicas}\n  selector:\n    matchLabels:\n      app: web\n  \
         template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      \
         containers:\n      - name: web\n        image: nginx\n"
    )
}

#[tokio::test]
async fn kubectl_apply_is_judged_by_an_admission_policy_with_params() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    let policy = write_file(&cluster, "policy.yaml", POLICY);
    let out = kubectl(&kubeconfig, &["apply", "-f", &policy]).await;
    assert!(
        out.contains(
            "validatingadmissionpolicy.admissionregistration.k8s.io/replica-limit created"
        ),
        "{out}"
    );

    let six = write_file(&cluster, "six.yaml", &deployment(6));
    let message = "ValidatingAdmissionPolicy 'replica-limit' with binding 'replica-limit-binding' \
                   denied request: replicas must be no greater than 5";
    // Every replica follows the policies a moment behind the write: until this one does,
    // the Deployment is created, and removed again.
    let mut out = String::new();
    for _ in 0..100 {
        let (ok, text) = kubectl_status(&kubeconfig, &["apply", "-f", &six]).await;
        out = text;
        if !ok {
            break;
        }
        kubectl(
            &kubeconfig,
            &["delete", "deployment", "web", "--wait=false"],
        )
        .await;
        until(&kubeconfig, &["get", "deployment", "web"], |ok, _| !ok).await;
    }
    assert!(out.contains(message), "{out}");
    // The validation gives no reason, so the refusal is Invalid (422), which kubectl prints
    // as kube-apiserver's: the message as the one cause, with no field.
    assert!(
        out.contains("The deployments \"web\" is invalid: : ValidatingAdmissionPolicy"),
        "{out}"
    );

    let three = write_file(&cluster, "three.yaml", &deployment(3));
    let out = kubectl(&kubeconfig, &["apply", "-f", &three]).await;
    assert!(out.contains("deployment.apps/web created"), "{out}");
}
