//! Losing the leader elects another; acknowledged writes survive; without a quorum, reads fail
//! rather than answer stale.

use apiary_raft::replica::ReadError;

use crate::harness::Cluster;
use crate::harness::put;
use crate::harness::read;

// R-HA-011
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_leader_keeps_acknowledged_writes_and_writes_continue() {
    let mut cluster = Cluster::founded(3, 1000).await;
    let mut acknowledged = Vec::new();
    for i in 0..5 {
        let id = cluster.running()[i % 3];
        let key = format!("/before/{i}");
        let r = cluster
            .replica(id)
            .write(put(&key, "x"))
            .await
            .expect("write");
        acknowledged.push((key, r.revision));
    }

    let old_leader = cluster.wait_leader().await;
    tracing::info!("--- stop leader {old_leader}");
    cluster.stop(old_leader).await;
    let new_leader = cluster.wait_leader().await;
    assert_ne!(old_leader, new_leader);

    tracing::info!("--- writes continue through both survivors");
    for i in 0..4 {
        let id = cluster.running()[i % 2];
        let key = format!("/after/{i}");
        let r = cluster
            .replica(id)
            .write(put(&key, "y"))
            .await
            .expect("write after failover");
        acknowledged.push((key, r.revision));
    }

    for id in cluster.running() {
        let replica = cluster.replica(id);
        for (key, revision) in &acknowledged {
            let kv = read(&replica, key)
                .await
                .unwrap_or_else(|| panic!("{key} lost on {id}"));
            assert_eq!(*revision, kv.mod_revision, "{key} on {id}");
        }
    }
    cluster.stop_all().await;
}

// R-HA-005
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_without_quorum_fails_reads_instead_of_answering() {
    let mut cluster = Cluster::founded(3, 1000).await;
    let survivor = cluster.running()[0];
    cluster
        .replica(survivor)
        .write(put("/k", "1"))
        .await
        .expect("write");
    for id in cluster.running() {
        if id != survivor {
            cluster.stop(id).await;
        }
    }
    let replica = cluster.replica(survivor);
    let started = tokio::time::Instant::now();
    let answer = replica.read_index().await;
    assert!(
        matches!(answer, Err(ReadError::Unavailable { .. })),
        "expected Unavailable, got {answer:?}"
    );
    assert!(started.elapsed() < crate::harness::PATIENCE);
    let write = replica.write(put("/k", "2")).await;
    assert!(
        write.is_err(),
        "a write without quorum must not be acknowledged"
    );
    cluster.stop_all().await;
}

// A leader about to stop hands leadership over: while it still runs and heartbeats (so no
// election timeout can fire), another voter becomes leader in the next term, and writes go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_hands_leadership_over_before_it_stops() {
    let mut cluster = Cluster::founded(3, 1000).await;
    let old_leader = cluster.wait_leader().await;
    let leader = cluster.replica(old_leader);
    let before = leader.status().term;

    let new_leader = leader
        .transfer_leadership(crate::harness::PATIENCE)
        .await
        .expect("another replica took over");
    assert_ne!(new_leader, old_leader);
    assert_eq!(cluster.wait_leader().await, new_leader);
    assert!(cluster.replica(new_leader).status().term > before);
    // Only a leader hands over.
    assert_eq!(
        leader.transfer_leadership(crate::harness::PATIENCE).await,
        None
    );

    cluster.stop(old_leader).await;
    let survivor = cluster.running()[0];
    cluster
        .replica(survivor)
        .write(put("/after-hand-over", "x"))
        .await
        .expect("write after the hand-over");
    cluster.stop_all().await;
}

// A leader whose voters stopped answering names no successor (none could take over), so its
// shutdown does not wait for a hand-over that cannot happen, and it stays the leader it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_without_answering_voters_hands_nothing_over() {
    let mut cluster = Cluster::founded(3, 1000).await;
    let leader_id = cluster.wait_leader().await;
    let leader = cluster.replica(leader_id);
    for id in cluster.running() {
        if id != leader_id {
            cluster.stop(id).await;
        }
    }
    // Let the followers' last heartbeat answers grow older than an election timeout.
    tokio::time::sleep(crate::harness::timings().election_timeout_max * 2).await;
    // Handing over to a stopped voter would wait the whole (here: hour-long) limit.
    let hand_over = leader.transfer_leadership(std::time::Duration::from_secs(3600));
    let answer = tokio::time::timeout(crate::harness::PATIENCE, hand_over)
        .await
        .expect("no hand-over to wait for");
    assert_eq!(answer, None);
    assert!(leader.status().is_leader);
    cluster.stop_all().await;
}

// A leader whose successor stops while it hands over (every replica stopping at once) gives up
// as soon as the successor no longer answers, instead of waiting the whole limit for a leader
// that cannot come.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_gives_up_the_hand_over_when_its_successor_stops_answering() {
    let mut cluster = Cluster::founded(3, 1000).await;
    let leader_id = cluster.wait_leader().await;
    let leader = cluster.replica(leader_id);
    for id in cluster.running() {
        if id != leader_id {
            cluster.stop(id).await;
        }
    }
    // Right after the stops the followers' last heartbeat answers are fresh, so one of them is
    // named; the hand-over's call to it fails.
    let hand_over = leader.transfer_leadership(std::time::Duration::from_secs(3600));
    let answer = tokio::time::timeout(crate::harness::PATIENCE, hand_over)
        .await
        .expect("the hand-over gives up");
    assert_eq!(answer, None);
    cluster.stop_all().await;
}
