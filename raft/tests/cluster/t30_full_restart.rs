//! Stopping and restarting every replica keeps every acknowledged write.

use crate::harness::Cluster;
use crate::harness::put;

// R-RES-004
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_restart_keeps_all_data() {
    let mut cluster = Cluster::founded(3, 1000).await;
    let mut written = Vec::new();
    for i in 0..10 {
        let id = cluster.running()[i % 3];
        let key = format!("/k/{i}");
        let r = cluster
            .replica(id)
            .write(put(&key, "v"))
            .await
            .expect("write");
        written.push((key, r.revision));
    }

    tracing::info!("--- stop every replica, then start them again");
    cluster.restart_all(3).await;

    cluster.assert_written(&written).await;
    let after = cluster
        .replica(1)
        .write(put("/k/after", "v"))
        .await
        .expect("write");
    assert!(after.revision > written.last().map_or(0, |w| w.1));
    cluster.stop_all().await;
}
