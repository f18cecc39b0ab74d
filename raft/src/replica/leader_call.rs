//! Running an operation at the leader: on this replica when it leads, else at the leader it
//! knows over a peer RPC; retried with back-off while no leader is known or the one asked
//! names another, until a deadline; a back-off ends early once this replica learns of another
//! leader, so an operation waiting out an election goes to the new leader as soon as it is
//! known. The write path, the read index and member removal share this loop and differ only in
//! the operation and in which failures are worth another try.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use openraft::async_runtime::watch::WatchReceiver;
use tokio::time::Instant;

use super::LeaderError;
use super::RemoveMemberError;
use super::Replica;
use crate::typ::NodeId;

/// The longest back-off between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// Where one attempt runs.
pub(super) enum LeaderTarget {
    /// Here: this replica believes it is the leader.
    Local,
    /// At the leader this replica knows, reached at this peer URL.
    Remote(String),
}

/// A failure at the leader, as the retry loop sees it.
pub(super) trait LeaderCallError: From<LeaderError> + fmt::Debug {
    /// The leader a refusal named, to try next.
    fn leader_hint(&self) -> Option<(NodeId, String)>;
}

impl LeaderCallError for LeaderError {
    fn leader_hint(&self) -> Option<(NodeId, String)> {
        match self {
            Self::NotLeader {
                leader_id: Some(id),
                leader_url: Some(url),
            } => Some((*id, url.clone())),
            _ => None,
        }
    }
}

impl LeaderCallError for RemoveMemberError {
    fn leader_hint(&self) -> Option<(NodeId, String)> {
        match self {
            Self::ForwardToLeader {
                leader_id: Some(id),
                leader_url: Some(url),
            } => Some((*id, url.clone())),
            _ => None,
        }
    }
}

/// How long and how often [`Replica::at_leader`] tries, and what it tries again.
pub(super) struct Retry<E> {
    /// No attempt starts after this.
    pub deadline: Instant,
    /// At most this many attempts.
    pub max_attempts: u32,
    /// Whether a failure may go away on another attempt (a non-idempotent operation must not
    /// retry one whose outcome is unknown).
    pub retryable: fn(&E) -> bool,
}

impl Replica {
    /// Runs `attempt` at the leader until it succeeds, fails for good, or `retry` gives up; the
    /// last failure is returned. The first back-off is one heartbeat interval, doubled after
    /// each attempt up to a second, and cut short when the leader this replica knows changes;
    /// a refusal that names the leader sends the next attempt there.
    pub(super) async fn at_leader<T, E, F, Fut>(&self, retry: Retry<E>, attempt: F) -> Result<T, E>
    where
        E: LeaderCallError,
        F: Fn(LeaderTarget) -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let mut backoff = self.timings.heartbeat_interval;
        let mut hint: Option<(NodeId, String)> = None;
        let mut attempts = 0;
        loop {
            attempts += 1;
            let known = self.raft.server_metrics().borrow_watched().current_leader;
            let result = match hint.take().or_else(|| self.leader()) {
                Some((id, _)) if id == self.id => attempt(LeaderTarget::Local).await,
                Some((_, url)) => attempt(LeaderTarget::Remote(url)).await,
                None => Err(E::from(LeaderError::Unavailable(
                    "no leader elected yet".to_string(),
                ))),
            };
            let error = match result {
                Ok(value) => return Ok(value),
                Err(error) => error,
            };
            if !(retry.retryable)(&error)
                || attempts >= retry.max_attempts
                || Instant::now() + backoff >= retry.deadline
            {
                return Err(error);
            }
            hint = error.leader_hint();
            tracing::debug!(attempts, ?error, "not taken at the leader; retrying");
            self.until_leader_changes(known, backoff).await;
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    /// Returns once the leader this replica knows is no longer `known`, or after `patience`.
    async fn until_leader_changes(&self, known: Option<NodeId>, patience: Duration) {
        let mut server = self.raft.server_metrics();
        let changed = async {
            while server.borrow_watched().current_leader == known {
                if server.changed().await.is_err() {
                    // raft stopped: the next attempt fails for good.
                    return;
                }
            }
        };
        let _ = tokio::time::timeout(patience, changed).await;
    }
}
