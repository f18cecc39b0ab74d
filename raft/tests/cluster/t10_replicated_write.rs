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

// R-HA-002, R-HA-003: the writes a follower's clients make at once travel to the leader in
// batches; each is committed once, at a revision of its own, and read so everywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writes_through_a_follower_each_commit_once_at_a_revision_of_their_own() {
    let mut cluster = Cluster::founded(3, 1000).await;
    let follower = cluster.follower().await;
    let replica = cluster.replica(follower);
    let key = |i: usize| format!("/registry/configmaps/default/c{i}");
    let writes = (0..200).map(|i| {
        let replica = replica.clone();
        let key = key(i);
        tokio::spawn(async move { replica.write(put(&key, "v")).await })
    });
    let mut revisions = Vec::new();
    for write in futures::future::join_all(writes).await {
        let answer = write.expect("task").expect("write through a follower");
        assert!(answer.succeeded);
        revisions.push(answer.revision);
    }
    let distinct: std::collections::BTreeSet<u64> = revisions.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        revisions.len(),
        "a revision of its own each"
    );

    for id in cluster.running() {
        let replica = cluster.replica(id);
        for (i, revision) in revisions.iter().enumerate() {
            let kv = read(&replica, &key(i)).await.expect("written");
            assert_eq!(*revision, kv.mod_revision, "replica {id}, write {i}");
            assert_eq!(1, kv.version, "replica {id}, write {i} applied once");
        }
    }
    cluster.stop_all().await;
}

// R-HA-003: a batch of forwarded writes is answered write by write, in order, by the leader;
// a follower that receives one names the leader for each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forwarded_batch_is_answered_write_by_write() {
    use apiary_raft::command::Command;
    use apiary_raft::command::Compare;
    use apiary_raft::command::Op;
    use apiary_raft::command::Txn;
    use apiary_raft::network::replica_message::ForwardWritesRequest;
    use apiary_raft::network::replica_message::ForwardWritesResponse;
    use apiary_raft::network::replica_message::forward_write_response::Outcome;
    use apiary_raft::network::rpc;
    use apiary_raft::replica::peer_router;
    use axum::body::Body;
    use axum::http::Request;
    use http_body_util::BodyExt;
    use prost::Message;
    use tower::ServiceExt;

    let mut cluster = Cluster::founded(3, 1000).await;
    let leader = cluster.wait_leader().await;
    let follower = cluster.follower().await;
    let created = |key: &str| Txn {
        compares: vec![Compare::exists(key, false)],
        success: vec![Op::put(key, b"v".to_vec())],
        failure: vec![],
    };
    let batch = ForwardWritesRequest {
        commands: vec![
            Command::txn(created("/a")),
            Command::txn(created("/b")),
            Command::txn(created("/a")),
        ],
    };
    let send = |id| {
        let router = peer_router(cluster.replica(id));
        let body = batch.encode_to_vec();
        async move {
            let request = Request::post(format!("{}{}", rpc::PATH_PREFIX, rpc::FORWARD_WRITES))
                .body(Body::from(body))
                .expect("request");
            let response = router.oneshot(request).await.expect("infallible");
            assert_eq!(200, response.status().as_u16());
            let body = response.into_body().collect().await.expect("body");
            ForwardWritesResponse::decode(body.to_bytes()).expect("decodes")
        }
    };

    let answer = send(leader).await;
    let outcomes: Vec<(u64, bool)> = answer
        .outcomes
        .into_iter()
        .map(|o| match o.outcome {
            Some(Outcome::Applied(r)) => (r.revision, r.succeeded),
            other => panic!("not applied: {other:?}"),
        })
        .collect();
    assert_eq!(3, outcomes.len());
    let created_a = outcomes.iter().filter(|(_, succeeded)| *succeeded).count();
    assert_eq!(2, created_a, "/a is created once, /b once: {outcomes:?}");
    assert!(
        outcomes[0].1 != outcomes[2].1,
        "one of the two creates of /a fails"
    );
    let kv = read(&cluster.replica(leader), "/b").await.expect("/b");
    assert_eq!(outcomes[1].0, kv.mod_revision, "the second outcome is /b's");

    let answer = send(follower).await;
    assert_eq!(3, answer.outcomes.len());
    for outcome in answer.outcomes {
        match outcome.outcome {
            Some(Outcome::NotLeader(n)) => assert_eq!(Some(leader), n.leader_id),
            other => panic!("a follower proposes nothing: {other:?}"),
        }
    }
    cluster.stop_all().await;
}
