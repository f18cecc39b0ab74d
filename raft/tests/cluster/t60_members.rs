//! Operator membership operations through any replica: listing members with their roles and
//! the leader's replication view, adding a learner, promoting it only once it caught up,
//! auto-promotion that survives a leader change, handing leadership to a named voter, removing
//! the leader (leadership moves first), refusing a removal that would lose the quorum, a new
//! member catching up by snapshot, and growing 3 -> 5 -> 3 voters with writes in between.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::time::Duration;

use apiary_raft::replica::Member;
use apiary_raft::replica::MemberChangeError;
use apiary_raft::replica::Refusal;
use apiary_raft::replica::RemoveMemberError;
use apiary_raft::replica::Role;
use apiary_raft::typ::NodeId;

use crate::harness::Cluster;
use crate::harness::put;
use crate::harness::read;

/// Long enough for the leader to see a stopped replica stop answering heartbeats, and for a
/// learner that would be promoted by mistake to have been.
const SEVERAL_ELECTION_TIMEOUTS: Duration = Duration::from_secs(2);

fn roles(members: &[Member]) -> BTreeMap<NodeId, Role> {
    members.iter().map(|m| (m.id, m.role)).collect()
}

/// Writes `count` keys under `prefix` through replica `via`; returns them with their revisions.
async fn write_keys(
    cluster: &Cluster,
    via: NodeId,
    prefix: &str,
    count: usize,
) -> Vec<(String, u64)> {
    let mut written = Vec::new();
    for i in 0..count {
        let key = format!("{prefix}/{i}");
        let r = cluster
            .replica(via)
            .write(put(&key, "v"))
            .await
            .expect("write");
        written.push((key, r.revision));
    }
    written
}

/// Waits until every running replica sees exactly `voters` as voters.
async fn wait_voters(cluster: &Cluster, voters: &BTreeSet<NodeId>) {
    cluster
        .eventually("every replica to see the voters", || {
            cluster
                .running()
                .iter()
                .all(|id| cluster.replica(*id).status().voters == *voters)
                .then_some(())
        })
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_learner_is_promoted_only_once_caught_up() {
    let mut cluster = Cluster::founded(3, 1_000).await;
    let leader = cluster.wait_leader().await;
    let follower = cluster.follower().await;
    cluster.reserve(4).await;
    let url = cluster.url(4);
    let asked = cluster.replica(follower);

    let index = asked
        .add_learner(4, url.clone(), false)
        .await
        .expect("learner added through a follower");
    assert_eq!(
        Ok(index),
        asked.add_learner(4, url.clone(), false).await,
        "adding the same learner again changes nothing"
    );
    assert_eq!(
        Err(MemberChangeError::Refused(Refusal::UrlInUse {
            node_id: 4,
            url: url.clone()
        })),
        asked.add_learner(5, url.clone(), false).await
    );
    assert_eq!(
        Err(MemberChangeError::Refused(Refusal::IdInUse {
            node_id: 4,
            url: url.clone()
        })),
        asked
            .add_learner(4, "http://127.0.0.1:9".to_string(), false)
            .await
    );
    assert!(
        matches!(
            asked
                .add_learner(leader, "http://127.0.0.1:9".to_string(), false)
                .await,
            Err(MemberChangeError::Refused(Refusal::IdInUse { .. }))
        ),
        "a voter's id is taken"
    );

    let members = asked.members_from_leader().await.expect("members");
    let expected: BTreeMap<NodeId, Role> = (1..=4)
        .map(|id| match id {
            4 => (id, Role::Learner),
            id if id == leader => (id, Role::Leader),
            id => (id, Role::Voter),
        })
        .collect();
    assert_eq!(expected, roles(&members));
    let learner = members.iter().find(|m| m.id == 4).expect("listed");
    assert_eq!(
        (url.as_str(), false),
        (learner.peer_url.as_str(), learner.auto_promote)
    );
    assert_eq!(
        (None, None),
        (learner.matched, learner.lag),
        "never reached"
    );
    let voter = members.iter().find(|m| m.id == follower).expect("listed");
    assert!(
        voter.matched.is_some(),
        "the leader's view, seen from a follower"
    );
    assert_eq!(expected, roles(&asked.members()), "the local view agrees");
    assert!(asked.members().iter().all(|m| m.matched.is_none()));

    // The learner's process is not running: it cannot vote, so it is not promoted.
    assert_eq!(
        Err(MemberChangeError::Refused(Refusal::NotCaughtUp {
            node_id: 4,
            lag: None
        })),
        asked.promote(4).await
    );

    let written = write_keys(&cluster, leader, "/k", 10).await;
    cluster.start(4, true).await;
    cluster
        .eventually("the learner to catch up", || {
            let members = cluster.replica(leader).members();
            let learner = members.iter().find(|m| m.id == 4)?;
            (learner.lag == Some(0)).then_some(())
        })
        .await;
    tokio::time::sleep(SEVERAL_ELECTION_TIMEOUTS).await;
    let learner = cluster.replica(4);
    assert_eq!(
        Some(Role::Learner),
        roles(&learner.members()).get(&4).copied(),
        "its join request did not promote it"
    );
    let last = written.last().expect("written").1;
    learner
        .wait_applied(last, Duration::from_secs(5))
        .await
        .expect("the learner applies the log");

    let promoted = asked.promote(4).await.expect("caught up: promoted");
    let four: BTreeSet<NodeId> = (1..=4).collect();
    wait_voters(&cluster, &four).await;
    assert_eq!(Ok(promoted), asked.promote(4).await, "a voter already");
    assert_eq!(
        Err(MemberChangeError::Refused(Refusal::UnknownMember {
            node_id: 9
        })),
        asked.promote(9).await
    );
    cluster.assert_written(&written).await;
    cluster.stop_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_promotion_survives_a_leader_change() {
    let mut cluster = Cluster::founded(3, 1_000).await;
    let leader = cluster.wait_leader().await;
    cluster.reserve(4).await;
    cluster
        .replica(leader)
        .add_learner(4, cluster.url(4), true)
        .await
        .expect("learner added");
    let mut others = cluster.running().into_iter().filter(|id| *id != leader);
    let (successor, asker) = (
        others.next().expect("a follower"),
        others.next().expect("another follower"),
    );

    // Asked of a replica that is neither the leader nor the successor: forwarded.
    let new_leader = cluster
        .replica(asker)
        .transfer_leadership_to(Some(successor))
        .await
        .expect("leadership handed over");
    assert_eq!(successor, new_leader);
    assert_eq!(successor, cluster.wait_leader().await);
    assert!(
        matches!(
            cluster.replica(asker).transfer_leadership_to(Some(4)).await,
            Err(MemberChangeError::Refused(Refusal::CannotLead {
                node_id: 4
            }))
        ),
        "a learner cannot lead"
    );
    let learner = cluster
        .replica(successor)
        .members()
        .into_iter()
        .find(|m| m.id == 4)
        .expect("listed");
    assert!(
        learner.auto_promote,
        "the intent is in the replicated membership"
    );

    write_keys(&cluster, asker, "/k", 5).await;
    cluster.start(4, true).await;
    let four: BTreeSet<NodeId> = (1..=4).collect();
    wait_voters(&cluster, &four).await;
    let members = cluster
        .replica(4)
        .members_from_leader()
        .await
        .expect("members");
    assert_eq!(Some(Role::Voter), roles(&members).get(&4).copied());
    cluster.stop_all().await;
}

// R-HA-011 (membership changes): asked to remove itself, the leader hands leadership over
// first and the new leader removes it; the two left keep taking writes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removing_the_leader_moves_leadership_first() {
    let cluster = Cluster::founded(3, 1_000).await;
    let leader = cluster.wait_leader().await;
    let asker = cluster.follower().await;
    cluster
        .replica(asker)
        .remove_member(leader)
        .await
        .expect("the leader is removed");
    let rest: Vec<NodeId> = cluster
        .running()
        .into_iter()
        .filter(|id| *id != leader)
        .collect();
    let new_leader = cluster.wait_leader_among(&rest).await;
    assert_ne!(leader, new_leader);
    assert_eq!(
        Some(new_leader),
        cluster.replica(leader).status().leader,
        "the old leader followed the new one before it was removed (a leader that removed \
         itself would never hear of the leader the others elect afterwards)"
    );
    let written = cluster
        .replica(asker)
        .write(put("/k/after", "v"))
        .await
        .expect("the two left take writes");
    for id in &rest {
        let kv = read(&cluster.replica(*id), "/k/after")
            .await
            .expect("written");
        assert_eq!(written.revision, kv.mod_revision);
        let voters = cluster.replica(*id).status().voters;
        assert_eq!(rest.iter().copied().collect::<BTreeSet<_>>(), voters);
    }
}

// R-HA-011 (membership changes): with one of three voters stopped, removing another would
// leave one answering voter of two: refused, for a follower and for the leader alike; the
// stopped voter itself can be removed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removal_that_would_lose_the_quorum_is_refused() {
    let mut cluster = Cluster::founded(3, 1_000).await;
    let leader = cluster.wait_leader().await;
    let mut followers = cluster.running().into_iter().filter(|id| *id != leader);
    let (stopped, other) = (
        followers.next().expect("a follower"),
        followers.next().expect("another follower"),
    );
    cluster.stop(stopped).await;
    tokio::time::sleep(SEVERAL_ELECTION_TIMEOUTS).await;

    for removed in [other, leader] {
        let refused = cluster.replica(other).remove_member(removed).await;
        assert_eq!(
            Err(RemoveMemberError::Refused(Refusal::WouldLoseQuorum {
                node_id: removed,
                answering: 1,
                quorum: 2
            })),
            refused
        );
        assert!(!refused.unwrap_err().is_retryable());
    }
    let three: BTreeSet<NodeId> = (1..=3).collect();
    assert_eq!(
        three,
        cluster.replica(leader).status().voters,
        "nothing changed"
    );

    cluster
        .replica(other)
        .remove_member(stopped)
        .await
        .expect("the stopped voter is removed");
    let two = BTreeSet::from([leader, other]);
    wait_voters(&cluster, &two).await;
    cluster
        .replica(other)
        .write(put("/k/after", "v"))
        .await
        .expect("the two left take writes");
}

// R-HA-001: a member added after the leader's log was compacted catches up from a snapshot
// and serves the same entries at the same revisions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_member_far_behind_catches_up_by_snapshot() {
    let mut cluster = Cluster::founded(3, 4).await;
    let leader = cluster.wait_leader().await;
    let written = write_keys(&cluster, leader, "/k", 20).await;
    let purged = cluster
        .eventually("the leader to compact its log", || {
            cluster.replica(leader).status().purged.filter(|p| *p > 0)
        })
        .await;
    assert!(
        purged > 0,
        "the first entries are gone from the leader's log"
    );

    cluster.reserve(4).await;
    cluster.start(4, true).await;
    let four: BTreeSet<NodeId> = (1..=4).collect();
    wait_voters(&cluster, &four).await;
    cluster.assert_written(&written).await;
    cluster.stop_all().await;
}

// R-HA-001: replicas joining and leaving one at a time all serve every acknowledged write at
// the revision it was acknowledged with.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_to_five_to_three_voters_with_writes_in_between() {
    let mut cluster = Cluster::founded(3, 1_000).await;
    let mut written = write_keys(&cluster, 1, "/a", 5).await;
    cluster.reserve(4).await;
    cluster.reserve(5).await;
    cluster.start(4, true).await;
    written.extend(write_keys(&cluster, 2, "/b", 5).await);
    cluster.start(5, true).await;
    let five: BTreeSet<NodeId> = (1..=5).collect();
    wait_voters(&cluster, &five).await;
    written.extend(write_keys(&cluster, 5, "/c", 5).await);
    cluster.assert_written(&written).await;

    for removed in [1, 2] {
        cluster
            .replica(5)
            .remove_member(removed)
            .await
            .expect("removed");
        cluster.stop(removed).await;
        written.extend(write_keys(&cluster, 3, &format!("/d{removed}"), 3).await);
    }
    let three: BTreeSet<NodeId> = (3..=5).collect();
    wait_voters(&cluster, &three).await;
    written.extend(write_keys(&cluster, 4, "/e", 5).await);
    cluster.assert_written(&written).await;
    cluster.stop_all().await;
}
