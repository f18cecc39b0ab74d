//! Leadership hand-over before a planned stop, before the leader is removed, or when an
//! operator asks: the leader names a successor (by default the most up-to-date voter;
//! openraft's TransferLeader), which stands for election at once, so the cluster does not wait
//! an election timeout for a new leader.

use std::time::Duration;

use openraft::ServerState;
use openraft::async_runtime::watch::WatchReceiver;
use openraft::metrics::WaitError;
use tokio::time::Instant;

use super::Replica;
use crate::typ::NodeId;

/// How often a hand-over in progress looks whether its successor still answers.
const ANSWER_POLL: Duration = Duration::from_millis(20);

impl Replica {
    /// If this replica leads, hands leadership to the voter that has replicated the most of
    /// its log among those answering heartbeats, and waits up to `limit` for another leader.
    /// Returns the new leader; `None` when this replica did not lead, no other voter answers,
    /// the successor stops answering while it is waited for (every replica stopping at once),
    /// or it saw no new leader in time (the
    /// cluster then elects one after the election timeout, as after a crash).
    pub async fn transfer_leadership(&self, limit: Duration) -> Option<NodeId> {
        let successor = {
            let metrics = self.raft.metrics();
            let m = metrics.borrow_watched();
            if m.state != ServerState::Leader {
                return None;
            }
            let voters: Vec<NodeId> = m.membership_config.membership().voter_ids().collect();
            let matched = m.replication.clone().unwrap_or_default();
            // A voter that has not answered a heartbeat within an election timeout is
            // probably down: it could not take over.
            voters
                .into_iter()
                .filter(|id| *id != self.id && self.answers(&m, *id))
                .max_by_key(|id| matched.get(id).copied().flatten().map(|l| l.index))
        }?;
        self.hand_over(successor, limit).await
    }

    /// Hands leadership to `successor` (a voter) and waits up to `limit` for another leader;
    /// returns it, or `None` as [`Replica::transfer_leadership`] explains.
    pub(super) async fn hand_over(&self, successor: NodeId, limit: Duration) -> Option<NodeId> {
        tracing::info!(
            from = self.id,
            to = successor,
            "handing raft leadership over"
        );
        // Taken before the trigger: the call naming the successor may fail (a stopped peer
        // refuses at once) before the trigger's answer arrives, and that failure counts.
        let started = Instant::now();
        if let Err(error) = self.raft.trigger().transfer_leader(successor).await {
            tracing::warn!(%error, "raft stopped before the leadership hand-over");
            return None;
        }
        let me = self.id;
        let deadline = started + limit;
        // The successor's answers are watched as the wait goes: one that stopped answering
        // (a whole cluster stopping at once) cannot take over, so waiting longer is pointless.
        loop {
            let slice = ANSWER_POLL.min(deadline.saturating_duration_since(Instant::now()));
            let waited = self
                .raft
                .wait(Some(slice))
                .metrics(
                    |m| m.current_leader.is_some_and(|leader| leader != me),
                    "another leader",
                )
                .await;
            match waited {
                Ok(m) => return m.current_leader,
                Err(WaitError::Timeout(..)) if self.stopped_answering(successor, started) => {
                    tracing::warn!(
                        to = successor,
                        "the successor stopped answering; no hand-over"
                    );
                    return None;
                }
                Err(WaitError::Timeout(..)) if Instant::now() < deadline => {}
                Err(error) => {
                    tracing::warn!(%error, to = successor, "no new leader after the hand-over");
                    return None;
                }
            }
        }
    }

    /// Whether a raft call to `peer` failed since `at` and none was answered after it.
    fn stopped_answering(&self, peer: NodeId, at: Instant) -> bool {
        let health = self.peer_health.lock().unwrap_or_else(|e| e.into_inner());
        health.get(&peer).is_some_and(|peer| peer.failing_since(at))
    }
}
