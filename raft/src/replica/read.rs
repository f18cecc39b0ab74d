//! Linearizable read index (DESIGN.md §3, "Most Recent" reads): the leader confirms its
//! leadership with a quorum (ReadIndex); a follower asks the leader over the peer RPC; then
//! the replica waits until it has applied that far. Concurrent reads share rounds on both
//! sides ([`super::read_rounds`]).

use openraft::ReadPolicy;
use tokio::time::Instant;

use super::LeaderError;
use super::ReadError;
use super::Replica;
use super::leader_call::LeaderTarget;
use super::leader_call::Retry;
use crate::mvcc::Revision;
use crate::network::replica_message::ReadIndexRequest;
use crate::network::replica_message::ReadIndexResponse;
use crate::network::replica_message::read_index_response::Outcome;
use crate::network::rpc;

impl Replica {
    /// Returns a revision at which this replica may serve a linearizable read: its applied
    /// revision, which is at least the read index a quorum-confirmed leader gave after this
    /// call began. Reads of the local store at that revision reflect every write acknowledged
    /// anywhere before the call (R-HA-004).
    ///
    /// A replica that cannot get a quorum-confirmed read index retries until the request
    /// timeout and then fails with [`ReadError::Unavailable`]; it never answers with a
    /// possibly stale revision (R-HA-005).
    pub async fn read_index(&self) -> Result<Revision, ReadError> {
        let started = Instant::now();
        let deadline = started + self.timings.request_timeout;
        let retry = Retry {
            deadline,
            max_attempts: u32::MAX,
            // Asking for a read index changes nothing: anything but a fatal failure may be
            // tried again.
            retryable: |e: &LeaderError| !matches!(e, LeaderError::Fatal(_)),
        };
        let index = self
            .at_leader(retry, |target| async move {
                match target {
                    LeaderTarget::Local => self.local_read_index(deadline).await,
                    LeaderTarget::Remote(url) => self.remote_read_index(&url, deadline).await,
                }
            })
            .await
            .map_err(|error| match error {
                LeaderError::Fatal(reason) => ReadError::Fatal { reason },
                other => ReadError::Unavailable {
                    reason: format!("{other:?}"),
                },
            })?;
        self.shared.metrics().read_index.observe(started.elapsed());
        let remaining = deadline.saturating_duration_since(Instant::now());
        self.wait_applied(index, remaining).await?;
        Ok(self.shared.applied())
    }

    /// The read index on this replica, which believes it is the leader: confirms leadership
    /// with a quorum of heartbeats sent after the call. Does not wait for the local apply.
    /// Concurrent callers share one confirmation round that started after their calls.
    pub(crate) async fn local_read_index(&self, deadline: Instant) -> Result<u64, LeaderError> {
        let round = self.leader_reads.run(|| self.leader_round());
        match tokio::time::timeout_at(deadline, round).await {
            Ok(outcome) => outcome,
            Err(_) => Err(unconfirmed()),
        }
    }

    /// One ReadIndex round: raft confirms its leadership with a quorum, within the request
    /// timeout.
    async fn leader_round(&self) -> Result<u64, LeaderError> {
        let read = self.raft.get_read_linearizer(ReadPolicy::ReadIndex);
        match tokio::time::timeout(self.timings.request_timeout, read).await {
            Ok(Ok(linearizer)) => Ok(linearizer.read_log_id().index()),
            Ok(Err(e)) => Err(LeaderError::from_read(e)),
            Err(_) => Err(unconfirmed()),
        }
    }

    /// The read index from the leader at `url`; concurrent callers share one request that
    /// started after their calls.
    async fn remote_read_index(&self, url: &str, deadline: Instant) -> Result<u64, LeaderError> {
        let round = self.remote_reads.run(|| self.remote_round(url));
        match tokio::time::timeout_at(deadline, round).await {
            Ok(outcome) => outcome,
            Err(_) => Err(LeaderError::Unavailable(
                "no read index from the leader before the deadline".to_string(),
            )),
        }
    }

    /// One read-index request to the leader at `url`, within the request timeout.
    async fn remote_round(&self, url: &str) -> Result<u64, LeaderError> {
        // Asking for a read index changes nothing, so every transport failure is retryable.
        let answer: ReadIndexResponse = self
            .peers
            .call(
                url,
                rpc::READ_INDEX,
                &ReadIndexRequest {},
                self.timings.request_timeout,
            )
            .await
            .map_err(|e| LeaderError::Unavailable(e.to_string()))?;
        match answer.outcome {
            Some(Outcome::Index(index)) => Ok(index),
            Some(Outcome::NotLeader(n)) => Err(n.into()),
            Some(Outcome::Failed(f)) => Err(f.into()),
            None => Err(LeaderError::Unavailable(
                "leader answered a read-index request with nothing".to_string(),
            )),
        }
    }
}

/// The failure of a read whose leadership round did not finish in time.
fn unconfirmed() -> LeaderError {
    LeaderError::Unavailable("leadership not confirmed before the deadline".to_string())
}
