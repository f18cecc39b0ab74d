//! ConfigMaps created, read and deleted with kubectl, each step through a different replica.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use apiary_tests::objects;
use http::StatusCode;
use tokio::process::Command;

/// How long one kubectl invocation may take.
const KUBECTL_TIMEOUT: Duration = Duration::from_secs(30);

/// Whether kubectl is installed; prints why the test is skipped when it is not.
pub(crate) fn kubectl_available() -> bool {
    let found = std::process::Command::new("kubectl")
        .args(["version", "--client"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        eprintln!("NOTICE: kubectl is not on PATH; skipping the kubectl tests");
    }
    found
}

/// Runs `kubectl --kubeconfig <kubeconfig> <args>` (optionally with `stdin`), returns stdout,
/// and fails the test with kubectl's stderr when it exits non-zero.
pub(crate) async fn kubectl(kubeconfig: &Path, args: &[&str]) -> String {
    let run = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--request-timeout=20s")
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(KUBECTL_TIMEOUT, run)
        .await
        .unwrap_or_else(|_| panic!("kubectl {args:?} took more than {KUBECTL_TIMEOUT:?}"))
        .expect("kubectl runs");
    assert!(
        output.status.success(),
        "kubectl {args:?} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn manifest(name: &str, value: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\n\
         data:\n  greeting: {value}\n"
    )
}

// R-HA-016, R-HA-003
#[tokio::test]
async fn kubectl_applies_gets_and_deletes_configmaps_through_different_replicas() {
    if !kubectl_available() {
        return;
    }
    let cluster = DevCluster::start(DevOptions::flavor(Flavor::Kubernetes))
        .await
        .unwrap();
    let kubeconfig = cluster.kubeconfig();
    let applied = cluster.dir().join("applied.yaml");
    std::fs::write(&applied, manifest("applied", "hello")).unwrap();
    let created = cluster.dir().join("created.yaml");
    std::fs::write(&created, manifest("created", "bonjour")).unwrap();

    // `apply` through the current context (node-1), `create` through node-3.
    let out = kubectl(
        &kubeconfig,
        &["apply", "--validate=false", "-f", applied.to_str().unwrap()],
    )
    .await;
    assert!(out.contains("configmap/applied"), "{out}");
    let out = kubectl(
        &kubeconfig,
        &[
            "--context",
            "node-3",
            "create",
            "--validate=false",
            "-f",
            created.to_str().unwrap(),
        ],
    )
    .await;
    assert!(out.contains("configmap/created"), "{out}");

    // `get` through node-2 sees both, with their data.
    for (name, value) in [("applied", "hello"), ("created", "bonjour")] {
        let out = kubectl(
            &kubeconfig,
            &[
                "--context",
                "node-2",
                "get",
                "configmap",
                name,
                "-o",
                "json",
            ],
        )
        .await;
        let object: serde_json::Value = serde_json::from_str(&out).expect("kubectl -o json");
        assert_eq!(object["kind"], "ConfigMap");
        assert_eq!(object["metadata"]["name"], name);
        assert_eq!(object["data"]["greeting"], value);
    }
    let out = kubectl(
        &kubeconfig,
        &["--context", "node-2", "get", "configmaps", "-o", "name"],
    )
    .await;
    assert!(out.lines().any(|l| l == "configmap/applied"), "{out}");
    assert!(out.lines().any(|l| l == "configmap/created"), "{out}");

    // `delete` through node-3; then it is gone on node-1.
    let out = kubectl(
        &kubeconfig,
        &["--context", "node-3", "delete", "configmap", "applied"],
    )
    .await;
    assert!(out.contains("deleted"), "{out}");
    let gone = cluster
        .client(1)
        .unwrap()
        .get(&objects::configmap_path("applied"))
        .await
        .unwrap();
    assert_eq!(gone.status, StatusCode::NOT_FOUND, "{}", gone.text());
    let kept = cluster
        .client(1)
        .unwrap()
        .get(&objects::configmap_path("created"))
        .await
        .unwrap();
    assert_eq!(kept.status, StatusCode::OK, "{}", kept.text());
}
