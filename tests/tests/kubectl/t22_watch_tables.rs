//! `kubectl get --watch` with its default human-readable output, which asks for a watch of
//! Tables: the header and the first list's rows first, then one row per change made through
//! another replica while it watches, with `--output-watch-events` naming each event.

use apiary_tests::objects;
use http::StatusCode;

use crate::run::kubernetes_cluster;
use crate::watching::Output;
use crate::watching::read_line_where;
use crate::watching::watch_configmaps;

/// Reads lines of `out` until one whose cells (split on blanks) start with `expected`, and
/// answers that line's cells.
async fn read_row(out: &mut Output, expected: &[&str]) -> Vec<String> {
    let starts = |line: &str| {
        let cells: Vec<&str> = line.split_whitespace().collect();
        cells.len() >= expected.len() && cells.iter().zip(expected).all(|(c, e)| c == e)
    };
    let line = read_line_where(out, &format!("{expected:?}"), starts).await;
    line.split_whitespace().map(str::to_owned).collect()
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

    let (mut kubectl, mut out) =
        watch_configmaps(&cluster.kubeconfig(), &["--output-watch-events"]);

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
