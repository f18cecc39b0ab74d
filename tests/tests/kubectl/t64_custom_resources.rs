//! kubectl and custom resources on a three-replica cluster: `apply -f` of a CRD, which the
//! CRD controllers establish; custom resources applied client- and server-side, defaulted,
//! pruned, refused by their schema and their CEL rule, printed with the definition's columns
//! on a follower, explained, scaled; deleted with their namespace; and gone with their
//! definition. CHECKLIST: R-RES-188 (unknown fields pruned), R-VER-003 (`self` in a rule).

use serde_json::Value;

use crate::run::kubectl;
use crate::run::kubectl_status;
use crate::run::kubernetes_cluster;
use crate::run::until;
use crate::run::write_file;

const CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab, shortNames: [ct]}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "self.replicas <= 10"
              message: at most ten replicas
            properties:
              cronSpec: {type: string, description: when it runs}
              image: {type: string}
              replicas: {type: integer, minimum: 0, default: 1}
          status:
            type: object
            properties:
              replicas: {type: integer}
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    additionalPrinterColumns:
    - {name: Spec, type: string, jsonPath: .spec.cronSpec}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
"#;

fn crontab(name: &str, namespace: &str, extra: &str) -> String {
    format!(
        "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: {name}\n  \
         namespace: {namespace}\nspec:\n  cronSpec: \"* * * * */5\"\n  image: cron:1\n{extra}"
    )
}

#[tokio::test]
async fn kubectl_serves_custom_resources_through_their_lifecycle() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    let crd = write_file(&cluster, "crontabs.yaml", CRD);
    let out = kubectl(&kubeconfig, &["apply", "-f", &crd]).await;
    assert!(out.contains("created"), "{out}");
    let established = until(
        &kubeconfig,
        &[
            "get",
            "crd",
            "crontabs.stable.example.com",
            "-o",
            "jsonpath={.status.conditions[?(@.type==\"Established\")].status}",
        ],
        |_, out| out == "True",
    )
    .await;
    assert_eq!(established, "True");
    for node in ["node-1", "node-2", "node-3"] {
        let out = until(
            &kubeconfig,
            &["--context", node, "get", "crontabs"],
            |ok, _| ok,
        )
        .await;
        assert!(out.contains("No resources found"), "{node}: {out}");
    }

    // kubectl validates strictly: the unknown field is refused; with `--validate=warn` it is
    // pruned with a warning, and the default fills replicas.
    let one = write_file(
        &cluster,
        "one.yaml",
        &crontab("one", "default", "  bogus: 1\n"),
    );
    let (ok, out) = kubectl_status(&kubeconfig, &["apply", "-f", &one]).await;
    assert!(
        !ok && out.contains("strict decoding error: unknown field \"spec.bogus\""),
        "{out}"
    );
    let (ok, out) = kubectl_status(&kubeconfig, &["apply", "--validate=warn", "-f", &one]).await;
    assert!(
        ok && out.contains("crontab.stable.example.com/one created"),
        "{out}"
    );
    assert!(out.contains("unknown field \"spec.bogus\""), "{out}");
    let got: Value = serde_json::from_str(
        &kubectl(
            &kubeconfig,
            &["--context", "node-2", "get", "ct", "one", "-o", "json"],
        )
        .await,
    )
    .expect("JSON");
    assert_eq!(got["spec"]["replicas"], 1, "{got}");
    assert!(got["spec"].get("bogus").is_none(), "{got}");

    // The schema's minimum and the CEL rule refuse what they forbid.
    let negative = write_file(
        &cluster,
        "neg.yaml",
        &crontab("neg", "default", "  replicas: -1\n"),
    );
    let (ok, out) = kubectl_status(&kubeconfig, &["apply", "-f", &negative]).await;
    assert!(
        !ok && out.contains("spec.replicas: Invalid value: -1"),
        "{out}"
    );
    let many = write_file(
        &cluster,
        "many.yaml",
        &crontab("many", "default", "  replicas: 11\n"),
    );
    let (ok, out) = kubectl_status(&kubeconfig, &["apply", "-f", &many]).await;
    assert!(!ok && out.contains("at most ten replicas"), "{out}");

    // Server-side apply, printer columns on a follower, explain, scale.
    let two = write_file(
        &cluster,
        "two.yaml",
        &crontab("two", "default", "  replicas: 2\n"),
    );
    let out = kubectl(&kubeconfig, &["apply", "--server-side", "-f", &two]).await;
    assert!(out.contains("serverside-applied"), "{out}");
    let table = until(
        &kubeconfig,
        &["--context", "node-3", "get", "ct"],
        |_, out| out.contains("two"),
    )
    .await;
    let header: Vec<&str> = table
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(header, ["NAME", "SPEC", "REPLICAS", "AGE"], "{table}");
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("two") && l.contains(" 2 ")),
        "{table}"
    );
    let explained = kubectl(&kubeconfig, &["explain", "crontab.spec"]).await;
    assert!(
        explained.contains("cronSpec") && explained.contains("when it runs"),
        "{explained}"
    );
    kubectl(&kubeconfig, &["scale", "ct", "two", "--replicas=4"]).await;
    let replicas = kubectl(
        &kubeconfig,
        &["get", "ct", "two", "-o", "jsonpath={.spec.replicas}"],
    )
    .await;
    assert_eq!(replicas, "4");

    // A namespace's deletion takes its custom resources along.
    kubectl(&kubeconfig, &["create", "namespace", "crons"]).await;
    let three = write_file(&cluster, "three.yaml", &crontab("three", "crons", ""));
    kubectl(&kubeconfig, &["apply", "-f", &three]).await;
    kubectl(
        &kubeconfig,
        &["delete", "namespace", "crons", "--wait=false"],
    )
    .await;
    let gone = until(&kubeconfig, &["get", "namespace", "crons"], |ok, _| !ok).await;
    assert!(gone.contains("NotFound"), "{gone}");

    // Deleting the definition deletes its objects, then the definition.
    let out = kubectl(
        &kubeconfig,
        &["delete", "crd", "crontabs.stable.example.com"],
    )
    .await;
    assert!(out.contains("deleted"), "{out}");
    let gone = until(
        &kubeconfig,
        &["get", "crd", "crontabs.stable.example.com"],
        |ok, _| !ok,
    )
    .await;
    assert!(gone.contains("NotFound"), "{gone}");
    let (ok, out) = kubectl_status(&kubeconfig, &["get", "crontabs"]).await;
    assert!(!ok, "{out}");
}
