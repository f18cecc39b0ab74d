//! Snapshots: built every few entries, the log purged behind them, state restored from them on
//! restart, and a lagging replica brought back by installing one.

use crate::harness::Cluster;
use crate::harness::put;

const THRESHOLD: u64 = 5;

// R-RES-004: data survives restart when part of it lives only in snapshots.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn snapshot_purge_restart_and_install_on_a_lagging_replica() {
    let mut cluster = Cluster::founded(3, THRESHOLD).await;
    let leader = cluster.wait_leader().await;
    let lagging = cluster.follower().await;

    tracing::info!("--- stop follower {lagging}, then write well past the snapshot threshold");
    let lagging_applied = cluster.replica(lagging).status().applied;
    cluster.stop(lagging).await;
    let mut written = Vec::new();
    for i in 0..(THRESHOLD * 6) {
        let key = format!("/k/{i}");
        let r = cluster
            .replica(leader)
            .write(put(&key, "v"))
            .await
            .expect("write");
        written.push((key, r.revision));
    }
    let last = written.last().map_or(0, |w| w.1);
    cluster
        .eventually("the leader to snapshot and purge its log", || {
            let s = cluster.replica(leader).status();
            // Purged beyond what the stopped follower has: it can only catch up by snapshot.
            (s.snapshot.is_some() && s.purged.is_some_and(|p| p > lagging_applied + 1))
                .then_some(())
        })
        .await;

    tracing::info!("--- restart the lagging follower: its missing entries are purged");
    cluster.start(lagging, false).await;
    let replica = cluster.replica(lagging);
    replica
        .wait_applied(last, crate::harness::PATIENCE)
        .await
        .expect("the lagging replica catches up");
    cluster
        .eventually("the lagging replica to hold a snapshot", || {
            replica.status().snapshot.is_some().then_some(())
        })
        .await;
    // Its report dates the installed snapshot and the leader's built one; the store's size
    // counts every key written.
    for id in [leader, lagging] {
        let report = cluster.replica(id).report();
        assert!(report.snapshot_age_seconds.is_some(), "{id}: {report:?}");
        assert!(report.keys >= written.len() as u64, "{id}: {report:?}");
        assert!(report.store_bytes >= report.keys, "{id}: {report:?}");
    }
    for (key, revision) in &written {
        let kv = replica.with_store(|s| s.get(key, None).unwrap());
        assert_eq!(Some(*revision), kv.map(|kv| kv.mod_revision), "{key}");
    }

    tracing::info!("--- restart everything: state comes back from snapshot plus log");
    cluster.restart_all(3).await;
    cluster.assert_written(&written).await;
    cluster.stop_all().await;
}
