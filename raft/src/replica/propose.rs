//! The write path: propose on the leader, or forward to it; retry while no leader can take
//! the write; then wait until this replica applied the write's revision.

use tokio::time::Instant;

use super::LeaderError;
use super::Replica;
use super::WriteError;
use super::leader_call::LeaderTarget;
use super::leader_call::Retry;
use crate::command::Command;
use crate::command::CommandResponse;
use crate::command::Txn;
use crate::mvcc::Revision;

/// The most attempts one write makes (each after a back-off) before giving up early.
const MAX_ATTEMPTS: u32 = 20;

impl Replica {
    /// Commits `txn` and returns its answer (its `revision` is the entry's log index). On a
    /// follower the write is forwarded to the leader. Returns only once this replica has
    /// applied the write, so a read here right after sees it (DESIGN.md §3).
    pub async fn write(&self, txn: Txn) -> Result<CommandResponse, WriteError> {
        self.propose(Command::txn(txn)).await
    }

    /// Commits a compaction of the history before `revision` (through the leader, like
    /// [`Replica::write`]); compacting beyond the newest revision is answered in
    /// `CommandResponse::error`.
    pub async fn compact(&self, revision: Revision) -> Result<CommandResponse, WriteError> {
        self.propose(Command::compact(revision)).await
    }

    async fn propose(&self, command: Command) -> Result<CommandResponse, WriteError> {
        let deadline = Instant::now() + self.timings.request_timeout;
        let retry = Retry {
            deadline,
            max_attempts: MAX_ATTEMPTS,
            // A write whose outcome is unknown must not be proposed twice.
            retryable: |e: &LeaderError| {
                matches!(
                    e,
                    LeaderError::NotLeader { .. } | LeaderError::Unavailable(_)
                )
            },
        };
        let command = &command;
        let response = self
            .at_leader(retry, |target| async move {
                match target {
                    LeaderTarget::Local => self.propose_local(command.clone(), deadline).await,
                    LeaderTarget::Remote(url) => {
                        self.forwards.forward(&url, command.clone(), deadline).await
                    }
                }
            })
            .await
            .map_err(write_error)?;
        self.await_applied(response, deadline).await
    }

    /// Proposes on this replica, which believes it is the leader; bounded by `deadline`
    /// because a leader that lost its quorum never commits.
    pub(crate) async fn propose_local(
        &self,
        command: Command,
        deadline: Instant,
    ) -> Result<CommandResponse, LeaderError> {
        match tokio::time::timeout_at(deadline, self.raft.client_write(command)).await {
            Ok(Ok(written)) => Ok(written.data),
            Ok(Err(e)) => Err(LeaderError::from_write(e)),
            Err(_) => Err(LeaderError::OutcomeUnknown(
                "proposed but not committed before the deadline".to_string(),
            )),
        }
    }

    async fn await_applied(
        &self,
        response: CommandResponse,
        deadline: Instant,
    ) -> Result<CommandResponse, WriteError> {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if self.shared.wait_applied(response.revision, remaining).await {
            Ok(response)
        } else {
            Err(WriteError::NotApplied {
                revision: response.revision,
            })
        }
    }
}

fn write_error(e: LeaderError) -> WriteError {
    match e {
        LeaderError::NotLeader {
            leader_id,
            leader_url,
        } => WriteError::ForwardToLeader {
            leader_id,
            leader_url,
        },
        LeaderError::Unavailable(reason) => WriteError::Unavailable { reason },
        LeaderError::OutcomeUnknown(reason) => WriteError::OutcomeUnknown { reason },
        LeaderError::Fatal(reason) => WriteError::Fatal { reason },
    }
}
