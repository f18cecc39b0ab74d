//! `kubectl get --watch` with its default human-readable output, which asks for a watch of
//! Tables: the header and the first list's rows first, then one row per change made through
//! another replica while it watches, with `--output-watch-events` naming each event.

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

/// Reads lines of `out` until one whose cells (split on blanks) start with `expected`; fails
/// after [`LINE_TIMEOUT`] or at the end of the output. Answers that line's cells.
async fn read_row(out: &mut Lines<BufReader<ChildStdout>>, expected: &[&str]) -> Vec<String> {
    let deadline = Instant::now() + LINE_TIMEOUT;
    let mut before = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = tokio::time::timeout(left, out.next_line())
            .await
            .unwrap_or_else(|_| panic!("no {expected:?} within {LINE_TIMEOUT:?}; saw {before:?}"))
            .expect("kubectl's output reads")
            .unwrap_or_else(|| panic!("kubectl ended before {expected:?}; saw {before:?}"));
        let cells: Vec<String> = line.split_whitespace().map(str::to_owned).collect();
        if cells.len() >= expected.len() && cells.iter().zip(expected).all(|(c, e)| c == e) {
            return cells;
        }
        before.push(line);
    }
}

// R-HA-016, R-RES-131
#[tokio::test]
async fn kubectl_get_watch_prints_table_rows_for_each_event() {
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
            "--output-watch-events",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("kubectl starts");
    let mut out = BufReader::new(kubectl.stdout.take().expect("stdout")).lines();

    // The header and the first list come first; only then does another replica write, so only
    // the watch can report what follows.
    read_row(&mut out, &["EVENT", "NAME", "DATA", "AGE"]).await;
    let row = read_row(&mut out, &["ADDED", "before", "1"]).await;
    assert_eq!(row.len(), 4, "{row:?}");

    let during = writer
        .post(&path, &objects::configmap("during", &[("v", "1")]))
        .await
        .unwrap();
    assert_eq!(during.status, StatusCode::CREATED, "{}", during.text());
    read_row(&mut out, &["ADDED", "during", "1"]).await;
    let replaced = writer
        .put(
            &objects::configmap_path("during"),
            &objects::configmap("during", &[("v", "2"), ("w", "3")]),
        )
        .await
        .unwrap();
    assert_eq!(replaced.status, StatusCode::OK, "{}", replaced.text());
    read_row(&mut out, &["MODIFIED", "during", "2"]).await;
    let deleted = writer
        .delete(&objects::configmap_path("during"))
        .await
        .unwrap();
    assert_eq!(deleted.status, StatusCode::OK, "{}", deleted.text());
    read_row(&mut out, &["DELETED", "during", "2"]).await;
    kubectl.kill().await.expect("kubectl stops");
}
