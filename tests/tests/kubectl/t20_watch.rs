//! `kubectl get configmaps -w` on one replica prints a config map created through another
//! replica while it watches.

use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

use apiary_tests::objects;
use http::StatusCode;
use tokio::io::AsyncBufReadExt;
use tokio::io::BufReader;
use tokio::io::Lines;
use tokio::process::ChildStdout;
use tokio::process::Command;

use crate::run::kubernetes_cluster;

/// How long kubectl may take to print an expected line.
const LINE_TIMEOUT: Duration = Duration::from_secs(30);

/// Reads lines of `out` until one equals `expected`; fails after [`LINE_TIMEOUT`] or at the end
/// of the output.
async fn read_until(out: &mut Lines<BufReader<ChildStdout>>, expected: &str) {
    let deadline = Instant::now() + LINE_TIMEOUT;
    let mut before = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = tokio::time::timeout(left, out.next_line())
            .await
            .unwrap_or_else(|_| panic!("no {expected:?} within {LINE_TIMEOUT:?}; saw {before:?}"))
            .expect("kubectl's output reads")
            .unwrap_or_else(|| panic!("kubectl ended before {expected:?}; saw {before:?}"));
        if line == expected {
            return;
        }
        before.push(line);
    }
}

// R-HA-016
#[tokio::test]
async fn kubectl_get_watch_prints_a_configmap_created_meanwhile() {
    let Some(cluster) = kubernetes_cluster().await else {
        return;
    };
    let path = objects::configmaps_path();
    let writer = cluster.client(2).unwrap();
    let before = writer
        .post(&path, &objects::configmap("before", &[("v", "1")]))
        .await
        .unwrap();
    assert_eq!(before.status, StatusCode::CREATED, "{}", before.text());

    let mut kubectl = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(cluster.kubeconfig())
        .args([
            "--context",
            "node-3",
            "--request-timeout=60s",
            "get",
            "configmaps",
            "--watch",
            "-o",
            "name",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("kubectl starts");
    let mut out = BufReader::new(kubectl.stdout.take().expect("stdout")).lines();

    // The initial list is printed first; only then is the second config map created, so only
    // the watch can report it.
    read_until(&mut out, "configmap/before").await;
    let during = writer
        .post(&path, &objects::configmap("during", &[("v", "1")]))
        .await
        .unwrap();
    assert_eq!(during.status, StatusCode::CREATED, "{}", during.text());
    read_until(&mut out, "configmap/during").await;
    kubectl.kill().await.expect("kubectl stops");
}
