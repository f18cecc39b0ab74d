//! Auto-promotion: while a replica leads, it promotes every learner whose membership record
//! asks for it ([`crate::typ::Node::auto_promote`]) once that learner has caught up. The intent
//! lives in the replicated membership, so a leader elected halfway through a join finishes it.
//! The loop is level-triggered: every heartbeat interval it looks at the membership as it is.

use std::sync::Arc;
use std::sync::Weak;

use openraft::ServerState;
use openraft::async_runtime::watch::WatchReceiver;
use tokio::time::Instant;
use tokio::time::MissedTickBehavior;

use super::Replica;
use crate::typ::NodeId;

impl Replica {
    /// Starts the auto-promotion loop; it ends when the replica is dropped or shut down.
    pub(super) fn start_promoting(self: &Arc<Self>) {
        let replica: Weak<Replica> = Arc::downgrade(self);
        let period = self.timings.heartbeat_interval;
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(period);
            tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(replica) = replica.upgrade() else {
                    return;
                };
                replica.promote_a_ready_learner().await;
            }
        });
        *self.promote_task.lock().unwrap_or_else(|e| e.into_inner()) = Some(task);
    }

    /// On the leader, promotes one auto-promote learner that is ready to vote, if any.
    async fn promote_a_ready_learner(&self) {
        let Some(id) = self.ready_auto_promote_learner() else {
            return;
        };
        let deadline = Instant::now() + self.timings.request_timeout;
        if let Err(error) = self.promote_local(id, deadline).await {
            tracing::debug!(node_id = id, %error, "auto-promotion not done; trying again");
        }
    }

    /// The lowest-id learner marked for auto-promotion that could vote now; none off the
    /// leader or while a membership change is still uncommitted.
    fn ready_auto_promote_learner(&self) -> Option<NodeId> {
        let metrics = self.raft.metrics();
        let m = metrics.borrow_watched();
        if m.state != ServerState::Leader
            || m.membership_config.log_id() != m.committed_membership_config.log_id()
        {
            return None;
        }
        let membership = m.membership_config.membership();
        membership
            .learner_ids()
            .filter(|id| membership.get_node(id).is_some_and(|n| n.auto_promote))
            .find(|id| self.ready_to_vote(&m, *id).is_ok())
    }
}
