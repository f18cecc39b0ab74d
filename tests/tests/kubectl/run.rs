//! What every kubectl test shares: a `--flavor kubernetes` cluster when kubectl is installed,
//! running kubectl against it, and reading a replica's audit log.

use std::path::Path;
use std::process::Output;
use std::process::Stdio;
use std::time::Duration;

use apiary_tests::DevCluster;
use apiary_tests::DevOptions;
use apiary_tests::Flavor;
use serde_json::Value;
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

/// Runs `kubectl --kubeconfig <kubeconfig> <args>` and answers how it ended; fails the test
/// when kubectl cannot be started or takes longer than [`KUBECTL_TIMEOUT`].
async fn run_kubectl(kubeconfig: &Path, args: &[&str]) -> Output {
    let run = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--request-timeout=20s")
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    tokio::time::timeout(KUBECTL_TIMEOUT, run)
        .await
        .unwrap_or_else(|_| panic!("kubectl {args:?} took more than {KUBECTL_TIMEOUT:?}"))
        .expect("kubectl runs")
}

/// Runs `kubectl --kubeconfig <kubeconfig> <args>`, returns stdout, and fails the test with
/// kubectl's stderr when it exits non-zero.
pub(crate) async fn kubectl(kubeconfig: &Path, args: &[&str]) -> String {
    let output = run_kubectl(kubeconfig, args).await;
    assert!(
        output.status.success(),
        "kubectl {args:?} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// kubectl's stdout and stderr together, and whether it succeeded (for the runs that must
/// fail).
pub(crate) async fn kubectl_status(kubeconfig: &Path, args: &[&str]) -> (bool, String) {
    let output = run_kubectl(kubeconfig, args).await;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

/// Runs kubectl with `args` until its output satisfies `done` (the controllers and every
/// replica's table act asynchronously), for at most 20 seconds; the last output.
pub(crate) async fn until(
    kubeconfig: &std::path::Path,
    args: &[&str],
    done: impl Fn(bool, &str) -> bool,
) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (ok, out) = kubectl_status(kubeconfig, args).await;
        if done(ok, &out) || tokio::time::Instant::now() > deadline {
            return out;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Writes `body` to the file `name` in the cluster's directory and answers its path, for
/// kubectl's `-f`.
pub(crate) fn write_file(cluster: &DevCluster, name: &str, body: &str) -> String {
    let path = cluster.dir().join(name);
    std::fs::write(&path, body).expect("the file is written");
    path.to_str().expect("a UTF-8 path").to_owned()
}

/// A three-replica `apiary dev --flavor kubernetes` cluster, or `None` (the test passes with a
/// notice) when kubectl is not installed.
pub(crate) async fn kubernetes_cluster() -> Option<DevCluster> {
    if !kubectl_available() {
        return None;
    }
    let cluster = DevCluster::start(DevOptions::flavor(Flavor::Kubernetes))
        .await
        .expect("the cluster starts");
    Some(cluster)
}

/// The events of the audit log at `path`, once one satisfies `wanted` (or after a few seconds).
pub(crate) async fn events_until(path: &Path, wanted: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut events = Vec::new();
    for _ in 0..100 {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        events = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("each line is a JSON event"))
            .collect();
        if events.iter().any(&wanted) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    events
}

/// A one-replica `--flavor kubernetes` cluster auditing by `policy` into `node-1/audit.log`,
/// and the directory holding the policy file (kept as long as the cluster runs).
pub(crate) async fn audited_cluster(policy: &str) -> (tempfile::TempDir, DevCluster) {
    let files = tempfile::tempdir().expect("dir");
    let path = files.path().join("policy.yaml");
    std::fs::write(&path, policy).expect("policy");
    let mut options = DevOptions::flavor(Flavor::Kubernetes)
        .flag(&format!("--audit-policy-file={}", path.display()))
        .flag("--audit-log-path=audit.log");
    options.nodes = 1;
    let cluster = DevCluster::start(options)
        .await
        .expect("the cluster starts");
    (files, cluster)
}
