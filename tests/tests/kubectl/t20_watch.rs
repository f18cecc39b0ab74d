//! `kubectl get configmaps -w` on one replica prints a config map created through another
//! replica while it watches.

use apiary_tests::objects;
use http::StatusCode;

use crate::run::kubernetes_cluster;
use crate::watching::Output;
use crate::watching::read_line_where;
use crate::watching::watch_configmaps;

/// Reads lines of `out` until one equals `expected`.
async fn read_until(out: &mut Output, expected: &str) {
    read_line_where(out, &format!("{expected:?}"), |line| line == expected).await;
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

    let (mut kubectl, mut out) = watch_configmaps(&cluster.kubeconfig(), &["-o", "name"]);

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
