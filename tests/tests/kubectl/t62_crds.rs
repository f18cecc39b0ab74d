//! `kubectl apply` of CustomResourceDefinitions: a valid one is created with its stored
//! version and Kubernetes' defaults, and read from a follower; an invalid one is refused with
//! the field and reason kube-apiserver names (a schema field without a type, a validation
//! rule that does not compile), in the words kubectl prints, and nothing is stored.
//! CHECKLIST: R-VER-129.

use serde_json::Value;

use crate::run::kubectl;
use crate::run::kubectl_status;
use crate::run::kubernetes_cluster;
use crate::run::write_file;

fn crd(plural: &str, replicas_schema: &str, rule: &str) -> String {
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
         metadata:\n  name: {plural}.example.com\nspec:\n  group: example.com\n  \
         names: {{kind: Widget, plural: {plural}}}\n  scope: Namespaced\n  versions:\n  \
         - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        \
         type: object\n        properties:\n          spec:\n            type: object\n            \
         properties:\n              replicas: {replicas_schema}\n            \
         x-kubernetes-validations:\n            - rule: \"{rule}\"\n              \
         message: at most ten replicas\n"
    )
}

#[tokio::test]
async fn kubectl_applies_a_valid_crd_and_is_refused_an_invalid_one() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    let valid = write_file(
        &cluster,
        "widgets.yaml",
        &crd("widgets", "{type: integer}", "self.replicas <= 10"),
    );
    let out = kubectl(&kubeconfig, &["apply", "-f", &valid]).await;
    assert!(
        out.contains("customresourcedefinition.apiextensions.k8s.io/widgets.example.com created"),
        "{out}"
    );
    let got: Value = serde_json::from_str(
        &kubectl(
            &kubeconfig,
            &[
                "--context",
                "node-2",
                "get",
                "crd",
                "widgets.example.com",
                "-o",
                "json",
            ],
        )
        .await,
    )
    .expect("JSON");
    assert_eq!(got["status"]["storedVersions"], serde_json::json!(["v1"]));
    assert_eq!(got["spec"]["names"]["listKind"], "WidgetList");

    let untyped = write_file(
        &cluster,
        "gadgets.yaml",
        &crd("gadgets", "{description: no type}", "self.replicas <= 10"),
    );
    let (ok, out) = kubectl_status(&kubeconfig, &["apply", "-f", &untyped]).await;
    assert!(!ok, "{out}");
    assert!(
        out.contains(
            "The CustomResourceDefinition \"gadgets.example.com\" is invalid: \
             spec.validation.openAPIV3Schema.properties[spec].properties[replicas].type: \
             Required value: must not be empty for specified object fields"
        ),
        "{out}"
    );
    let broken = write_file(
        &cluster,
        "gizmos.yaml",
        &crd("gizmos", "{type: integer}", "self.replicas <="),
    );
    let (ok, out) = kubectl_status(&kubeconfig, &["apply", "-f", &broken]).await;
    assert!(!ok, "{out}");
    assert!(
        out.contains(
            "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: \
             Invalid value:"
        ) && out.contains("compilation failed"),
        "{out}"
    );
    let (ok, out) = kubectl_status(
        &kubeconfig,
        &["get", "crd", "gadgets.example.com", "gizmos.example.com"],
    )
    .await;
    assert!(!ok && out.matches("NotFound").count() == 2, "{out}");
}
