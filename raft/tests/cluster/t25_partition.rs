//! A leader cut off from its followers must not serve "Most Recent" reads from its stale
//! state, nor acknowledge writes, while the majority elects a new leader and moves on.

use apiary_raft::replica::ReadError;

use crate::harness::Cluster;
use crate::harness::put;
use crate::harness::read;

// R-HA-004, R-HA-005, R-HA-011
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_isolated_leader_never_serves_stale_reads() {
    let mut cluster = Cluster::founded(3, 1000).await;
    let old_leader = cluster.wait_leader().await;
    let first = cluster
        .replica(old_leader)
        .write(put("/k", "1"))
        .await
        .expect("write before the partition");

    tracing::info!("--- isolate leader {old_leader}");
    cluster.isolate(old_leader);
    let majority: Vec<u64> = cluster
        .running()
        .into_iter()
        .filter(|id| *id != old_leader)
        .collect();
    let new_leader = cluster.wait_leader_among(&majority).await;
    assert_ne!(old_leader, new_leader);
    let second = cluster
        .replica(majority[0])
        .write(put("/k", "2"))
        .await
        .expect("the majority accepts writes");
    assert!(second.revision > first.revision);

    {
        tracing::info!("--- the isolated replica fails instead of answering with /k=1");
        let isolated = cluster.replica(old_leader);
        let answer = isolated.read_index().await;
        assert!(
            matches!(answer, Err(ReadError::Unavailable { .. })),
            "stale replica answered: {answer:?}"
        );
        let write = isolated.write(put("/k", "lost")).await;
        assert!(write.is_err(), "an isolated replica acknowledged {write:?}");
    }
    for id in &majority {
        let kv = read(&cluster.replica(*id), "/k").await.expect("/k");
        assert_eq!(second.revision, kv.mod_revision, "replica {id}");
    }

    tracing::info!("--- heal: the old leader catches up and serves the new value");
    cluster.heal();
    let isolated = cluster.replica(old_leader);
    let kv = read(&isolated, "/k").await.expect("/k after heal");
    assert_eq!(b"2".as_slice(), kv.value.as_ref());
    assert_eq!(second.revision, kv.mod_revision);
    cluster.stop_all().await;
}
