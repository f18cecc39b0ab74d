//! A write through a follower is committed by the leader and seen everywhere at one revision.

use crate::harness::Cluster;
use crate::harness::put;
use crate::harness::read;

// R-HA-001, R-HA-002, R-HA-003, R-HA-004
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_through_a_follower_is_read_everywhere_at_one_revision() {
    let mut cluster = Cluster::founded(3, 1000).await;
    let leader = cluster.wait_leader().await;
    let follower = cluster.follower().await;

    tracing::info!("--- write through follower {follower}");
    let first = cluster
        .replica(follower)
        .write(put("/registry/pods/default/a", "v1"))
        .await
        .expect("write through a follower");
    assert!(first.succeeded);
    assert!(first.revision > 0);

    {
        tracing::info!("--- read-your-writes on the follower without a read index");
        let local = cluster
            .replica(follower)
            .with_store(|s| s.get("/registry/pods/default/a", None).unwrap());
        assert_eq!(Some(first.revision), local.map(|kv| kv.mod_revision));
    }

    tracing::info!("--- write through the leader");
    let second = cluster
        .replica(leader)
        .write(put("/registry/pods/default/b", "v1"))
        .await
        .expect("write through the leader");
    assert!(
        second.revision > first.revision,
        "revisions strictly increase"
    );

    tracing::info!("--- every replica reads both writes at the leader-assigned revisions");
    for id in cluster.running() {
        let replica = cluster.replica(id);
        let a = read(&replica, "/registry/pods/default/a").await.expect("a");
        let b = read(&replica, "/registry/pods/default/b").await.expect("b");
        assert_eq!(first.revision, a.mod_revision, "replica {id}");
        assert_eq!(second.revision, b.mod_revision, "replica {id}");
        assert_eq!(b"v1".as_slice(), a.value.as_ref());
    }
    cluster.stop_all().await;
}

// R-HA-002: a compare-and-swap sees the revision another replica's write was given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compare_on_mod_revision_uses_the_global_revision() {
    use apiary_raft::command::Compare;
    use apiary_raft::command::Op;
    use apiary_raft::command::Txn;

    let mut cluster = Cluster::founded(3, 1000).await;
    let ids = cluster.running();
    let created = cluster
        .replica(ids[0])
        .write(put("/k", "1"))
        .await
        .expect("create");
    let update = |expected: u64| Txn {
        compares: vec![Compare::mod_revision("/k", expected)],
        success: vec![Op::put("/k", b"2".to_vec())],
        failure: vec![],
    };
    let stale = cluster
        .replica(ids[1])
        .write(update(created.revision + 100))
        .await
        .expect("answered");
    assert!(!stale.succeeded, "a wrong revision must not match");
    let fresh = cluster
        .replica(ids[2])
        .write(update(created.revision))
        .await
        .expect("answered");
    assert!(
        fresh.succeeded,
        "the creating revision matches on another replica"
    );
    cluster.stop_all().await;
}
