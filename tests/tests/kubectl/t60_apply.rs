//! `kubectl apply` creates and then updates a Deployment through a strategic merge patch
//! (containers merged by name, so a container added outside the manifest is kept), and
//! `kubectl patch --type merge|json`, `kubectl label` and `kubectl annotate` change it
//! through PATCH, all with kubectl's default validation (done by the server).

use serde_json::Value;

use crate::run::kubectl;
use crate::run::kubernetes_cluster;
use crate::run::write_file;

fn manifest(image: &str, env: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: default\n\
         spec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: web\n  template:\n    \
         metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n      \
         - name: web\n        image: {image}\n        env:\n{env}      \
         - name: side\n        image: busybox\n"
    )
}

fn env(vars: &[(&str, &str)]) -> String {
    vars.iter()
        .map(|(n, v)| format!("        - name: {n}\n          value: \"{v}\"\n"))
        .collect()
}

fn parse(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("kubectl -o json ({e}): {out}"))
}

fn container<'a>(deployment: &'a Value, name: &str) -> &'a Value {
    deployment["spec"]["template"]["spec"]["containers"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no container {name}: {deployment}"))
}

// R-RES-001, R-RES-090, R-RES-114, R-RES-116, R-RES-117
#[tokio::test]
async fn kubectl_apply_patch_label_and_annotate_update_a_deployment() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let kubeconfig = cluster.kubeconfig();
    let file = |name: &str, body: String| write_file(&cluster, name, &body);
    let get = || async {
        parse(&kubectl(&kubeconfig, &["get", "deployment", "web", "-o", "json"]).await)
    };

    // First apply: GET 404, then a create carrying the last-applied annotation.
    let v1 = file("v1.yaml", manifest("nginx:1", &env(&[("A", "1")])));
    let out = kubectl(&kubeconfig, &["apply", "-f", &v1]).await;
    assert!(out.contains("deployment.apps/web created"), "{out}");

    // A container added outside the manifest: apply must keep it (strategic merge by name).
    let extra =
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"extra","image":"redis"}]}}}}"#;
    kubectl(&kubeconfig, &["patch", "deployment", "web", "-p", extra]).await;

    // Second apply: a new image and an added env var, sent as a three-way strategic patch.
    let v2 = file(
        "v2.yaml",
        manifest("nginx:2", &env(&[("A", "1"), ("B", "2")])),
    );
    let out = kubectl(&kubeconfig, &["apply", "-f", &v2]).await;
    assert!(out.contains("deployment.apps/web configured"), "{out}");
    let applied = get().await;
    let web = container(&applied, "web");
    assert_eq!(web["image"], "nginx:2", "{applied}");
    let vars: Vec<&str> = web["env"]
        .as_array()
        .expect("env")
        .iter()
        .map(|e| e["name"].as_str().expect("name"))
        .collect();
    assert_eq!(vars, ["A", "B"], "{applied}");
    assert_eq!(container(&applied, "side")["image"], "busybox");
    assert_eq!(container(&applied, "extra")["image"], "redis");
    assert_eq!(applied["metadata"]["generation"], 3, "{applied}");

    // JSON merge patch and JSON Patch.
    kubectl(
        &kubeconfig,
        &[
            "patch",
            "deployment",
            "web",
            "--type",
            "merge",
            "-p",
            r#"{"spec":{"replicas":3}}"#,
        ],
    )
    .await;
    assert_eq!(get().await["spec"]["replicas"], 3);
    let ops = r#"[{"op":"test","path":"/spec/replicas","value":3},
                  {"op":"replace","path":"/spec/replicas","value":2}]"#;
    kubectl(
        &kubeconfig,
        &["patch", "deployment", "web", "--type", "json", "-p", ops],
    )
    .await;
    assert_eq!(get().await["spec"]["replicas"], 2);

    // label and annotate patch metadata.
    kubectl(&kubeconfig, &["label", "deployment", "web", "tier=front"]).await;
    kubectl(
        &kubeconfig,
        &["annotate", "deployment", "web", "note=hello"],
    )
    .await;
    let labelled = get().await;
    assert_eq!(
        labelled["metadata"]["labels"]["tier"], "front",
        "{labelled}"
    );
    assert_eq!(labelled["metadata"]["annotations"]["note"], "hello");
    assert!(
        labelled["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
            .is_string(),
        "{labelled}"
    );
    kubectl(&kubeconfig, &["label", "deployment", "web", "tier-"]).await;
    assert!(get().await["metadata"]["labels"].get("tier").is_none());
}
