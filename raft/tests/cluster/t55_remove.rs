//! Members are removed through any replica: a follower forwards the removal to the leader, the
//! leader may remove itself, a removed replica that keeps running disturbs nobody, and the last
//! voter is never removed.

use std::collections::BTreeSet;
use std::time::Duration;

use apiary_raft::replica::RemoveMemberError;

use crate::harness::Cluster;
use crate::harness::put;
use crate::harness::read;

/// Long enough for a removed replica to time out and campaign several times over.
const SEVERAL_ELECTION_TIMEOUTS: Duration = Duration::from_secs(2);

// R-HA-011 (membership changes): a removal asked of a follower reaches the leader; the two
// remaining voters keep taking writes; the removed replica keeps running without disturbing
// them (no new term, same leader) and fails its quorum reads rather than serve stale data
// (R-HA-005); removing it again answers at once with the same membership.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follower_forwards_a_removal_and_the_removed_replica_disturbs_nobody() {
    let cluster = Cluster::founded(3, 1_000).await;
    let leader = cluster.wait_leader().await;
    let mut followers = cluster.running().into_iter().filter(|id| *id != leader);
    let (asker, removed) = (
        followers.next().expect("a follower"),
        followers.next().expect("another follower"),
    );
    let index = cluster
        .replica(asker)
        .remove_member(removed)
        .await
        .expect("removal through a follower");
    let remaining = BTreeSet::from([leader, asker]);
    cluster
        .eventually("the remaining replicas to see two voters", || {
            remaining
                .iter()
                .all(|id| cluster.replica(*id).status().voters == remaining)
                .then_some(())
        })
        .await;
    let term = cluster.replica(leader).status().term;

    tokio::time::sleep(SEVERAL_ELECTION_TIMEOUTS).await;
    let written = cluster
        .replica(asker)
        .write(put("/k/after", "v"))
        .await
        .expect("two voters take writes");
    for id in &remaining {
        let status = cluster.replica(*id).status();
        assert_eq!(
            (Some(leader), term),
            (status.leader, status.term),
            "on {id}"
        );
        let kv = read(&cluster.replica(*id), "/k/after")
            .await
            .expect("written");
        assert_eq!(written.revision, kv.mod_revision);
    }
    assert!(
        cluster.replica(removed).read_index().await.is_err(),
        "a removed replica cannot reach a fresh read index"
    );
    let again = cluster
        .replica(leader)
        .remove_member(removed)
        .await
        .expect("idempotent");
    assert_eq!(index, again, "nothing changed the second time");
}

// R-HA-011 (membership changes): the leader removes itself; it steps down once the change
// commits, the other two elect a leader among themselves and keep taking writes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leader_removes_itself_and_the_others_elect() {
    let cluster = Cluster::founded(3, 1_000).await;
    let leader = cluster.wait_leader().await;
    cluster
        .replica(leader)
        .remove_member(leader)
        .await
        .expect("the leader removes itself");
    let rest: Vec<u64> = cluster
        .running()
        .into_iter()
        .filter(|id| *id != leader)
        .collect();
    let new_leader = cluster.wait_leader_among(&rest).await;
    assert_ne!(leader, new_leader);
    let written = cluster
        .replica(rest[0])
        .write(put("/k/new-leader", "v"))
        .await
        .expect("the remaining two take writes");
    for id in &rest {
        let kv = read(&cluster.replica(*id), "/k/new-leader")
            .await
            .expect("written");
        assert_eq!(written.revision, kv.mod_revision);
        assert!(!cluster.replica(*id).status().voters.contains(&leader));
    }
}

// R-HA-011 (membership changes): removing the last voter would leave a cluster that can never
// elect or commit again, so it is refused; removing a node that was never a member answers
// at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_voter_is_refused_and_a_stranger_is_already_gone() {
    let cluster = Cluster::founded(1, 1_000).await;
    let only = cluster.replica(1);
    assert_eq!(
        Err(RemoveMemberError::LastVoter { node_id: 1 }),
        only.remove_member(1).await
    );
    assert!(only.remove_member(9).await.is_ok(), "not a member: done");
    assert_eq!(BTreeSet::from([1]), only.status().voters);
}
