//! A fourth replica joins a running cluster as a learner, catches up, and becomes a voter.

use std::collections::BTreeSet;

use crate::harness::Cluster;
use crate::harness::put;
use crate::harness::read;

// R-HA-001: the new replica applies the same entries at the same revisions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fourth_replica_joins_as_learner_then_voter() {
    let mut cluster = Cluster::founded(3, 4).await;
    let mut written = Vec::new();
    for i in 0..12 {
        let key = format!("/k/{i}");
        let r = cluster
            .replica(1)
            .write(put(&key, "v"))
            .await
            .expect("write");
        written.push((key, r.revision));
    }

    tracing::info!("--- start replica 4 with join_existing");
    cluster.reserve(4).await;
    cluster.start(4, true).await;
    let all: BTreeSet<u64> = (1..=4).collect();
    cluster
        .eventually("every replica to see four voters", || {
            cluster
                .running()
                .iter()
                .all(|id| cluster.replica(*id).status().voters == all)
                .then_some(())
        })
        .await;

    let joined = cluster.replica(4);
    for (key, revision) in &written {
        let kv = read(&joined, key)
            .await
            .unwrap_or_else(|| panic!("{key} missing"));
        assert_eq!(*revision, kv.mod_revision);
    }
    let through_new = joined
        .write(put("/k/new", "v"))
        .await
        .expect("write via new voter");
    for id in cluster.running() {
        let kv = read(&cluster.replica(id), "/k/new").await.expect("new key");
        assert_eq!(through_new.revision, kv.mod_revision);
    }

    tracing::info!("--- restart the joined replica: it rejoins idempotently and keeps its data");
    cluster.stop(4).await;
    cluster.start(4, true).await;
    let restarted = cluster.replica(4);
    let kv = read(&restarted, "/k/new")
        .await
        .expect("kept across restart");
    assert_eq!(through_new.revision, kv.mod_revision);
    assert_eq!(all, restarted.status().voters);
    cluster.stop_all().await;
}
