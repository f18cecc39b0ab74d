//! Forwarded writes in batches: the writes a follower's clients make while earlier ones are on
//! their way to the leader travel together in one `forward-writes` call, so a busy follower
//! pays one peer request (its HTTP exchange, TLS records, system calls and wake-ups) for many
//! writes, as etcd's followers send proposals to the leader in batches on their peer streams.
//!
//! A write alone (one client, or a quiet cluster) still goes at once, in the one-write
//! `forward-write` call. Every write keeps its own outcome, deadline and error class: a batch
//! that may have reached the leader but was not answered leaves each of its writes' outcome
//! unknown (never retried), one refused before it was sent leaves them all retryable.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;

use prost::Message;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::LeaderError;
use crate::command::Command;
use crate::command::CommandResponse;
use crate::network::PeerCallError;
use crate::network::PeerClient;
use crate::network::TransportError;
use crate::network::replica_message::ForwardWriteRequest;
use crate::network::replica_message::ForwardWriteResponse;
use crate::network::replica_message::ForwardWritesRequest;
use crate::network::replica_message::ForwardWritesResponse;
use crate::network::replica_message::MAX_FORWARD_WRITES;
use crate::network::replica_message::forward_write_response::Outcome;
use crate::network::rpc;

/// Calls in flight to one leader at a time; writes arriving while all are out wait for the
/// next batch. Enough to keep the leader's group commit fed while a batch is answered.
pub(crate) const MAX_IN_FLIGHT: usize = 4;

/// The most writes in one batch: what the leader accepts in one call.
pub(crate) const MAX_BATCH_WRITES: usize = MAX_FORWARD_WRITES;

/// The most encoded command bytes in one batch, after its first write: a batch of large
/// objects is cut short so one call's body stays small beside a snapshot's.
pub(crate) const MAX_BATCH_BYTES: usize = 4 << 20;

/// One write waiting for its batch.
struct Waiting {
    command: Command,
    deadline: Instant,
    answer: oneshot::Sender<Result<CommandResponse, LeaderError>>,
}

/// Writes that go in one call, and whether they must go one write per call instead.
struct Batch {
    writes: Vec<Waiting>,
    one_at_a_time: bool,
}

/// The writes on their way to one leader.
#[derive(Default)]
struct Lane {
    /// Writes not sent yet, oldest first.
    queue: Vec<Waiting>,
    /// Calls in flight.
    in_flight: usize,
    /// The leader answered `forward-writes` with 404 (a build before it): send one at a time.
    one_at_a_time: bool,
}

/// The batches of forwarded writes of one replica, per leader URL.
#[derive(Clone)]
pub(crate) struct ForwardBatches {
    lanes: Arc<Mutex<HashMap<String, Lane>>>,
    peers: PeerClient,
}

impl ForwardBatches {
    pub(crate) fn new(peers: PeerClient) -> Self {
        Self {
            lanes: Arc::new(Mutex::new(HashMap::new())),
            peers,
        }
    }

    /// Forwards `command` to the leader at `url` and waits, at most until `deadline`, for its
    /// outcome there. The call carrying it runs on a task of its own, so a caller that stops
    /// waiting does not take the other writes of its batch with it.
    pub(crate) async fn forward(
        &self,
        url: &str,
        command: Command,
        deadline: Instant,
    ) -> Result<CommandResponse, LeaderError> {
        let (answer, outcome) = oneshot::channel();
        let waiting = Waiting {
            command,
            deadline,
            answer,
        };
        if let Some(batch) = self.enqueue(url, waiting) {
            let batches = self.clone();
            let url = url.to_owned();
            tokio::spawn(async move { batches.send_until_drained(url, batch).await });
        }
        match tokio::time::timeout_at(deadline, outcome).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(LeaderError::OutcomeUnknown(
                "the forwarded write's batch ended without an answer".to_string(),
            )),
            Err(_) => Err(LeaderError::OutcomeUnknown(
                "forwarded but not answered before the deadline".to_string(),
            )),
        }
    }

    /// Queues `waiting`; when a call may start, takes the batch it sends.
    fn enqueue(&self, url: &str, waiting: Waiting) -> Option<Batch> {
        let mut lanes = self.lanes.lock().unwrap_or_else(|e| e.into_inner());
        let lane = lanes.entry(url.to_owned()).or_default();
        lane.queue.push(waiting);
        if lane.in_flight >= MAX_IN_FLIGHT {
            return None;
        }
        lane.in_flight += 1;
        Some(lane.take_batch())
    }

    /// After a call: the next batch to send, or `None` (and one call fewer in flight) when
    /// nothing waits.
    fn next(&self, url: &str, leader_lacks_batches: bool) -> Option<Batch> {
        let mut lanes = self.lanes.lock().unwrap_or_else(|e| e.into_inner());
        let lane = lanes.entry(url.to_owned()).or_default();
        lane.one_at_a_time |= leader_lacks_batches;
        if lane.queue.is_empty() {
            lane.in_flight -= 1;
            return None;
        }
        Some(lane.take_batch())
    }

    async fn send_until_drained(&self, url: String, first: Batch) {
        let mut slot = Slot {
            batches: self,
            url: &url,
            held: true,
        };
        let mut batch = first;
        loop {
            let lacks = self.send(&url, batch).await;
            match self.next(&url, lacks) {
                Some(next) => batch = next,
                None => {
                    slot.held = false;
                    return;
                }
            }
        }
    }

    /// Sends `batch` and answers each of its writes; whether the leader lacks `forward-writes`.
    /// The call's deadline is the latest of its writes'; each write still waits only until its
    /// own.
    async fn send(&self, url: &str, batch: Batch) -> bool {
        let one_at_a_time = batch.one_at_a_time;
        let batch: Vec<Waiting> = batch
            .writes
            .into_iter()
            .filter(|w| !w.answer.is_closed())
            .collect();
        if batch.is_empty() {
            return false;
        }
        if batch.len() == 1 || one_at_a_time {
            let sends = batch.into_iter().map(|w| self.send_one(url, w));
            futures::future::join_all(sends).await;
            return false;
        }
        let deadline = batch
            .iter()
            .map(|w| w.deadline)
            .max()
            .unwrap_or_else(Instant::now);
        let request = ForwardWritesRequest {
            commands: batch.iter().map(|w| w.command.clone()).collect(),
        };
        let remaining = deadline.saturating_duration_since(Instant::now());
        let answer: Result<ForwardWritesResponse, PeerCallError> = self
            .peers
            .call(url, rpc::FORWARD_WRITES, &request, remaining)
            .await;
        match answer {
            Ok(answer) if answer.outcomes.len() == batch.len() => {
                for (waiting, outcome) in batch.into_iter().zip(answer.outcomes) {
                    let _ = waiting.answer.send(outcome_of(outcome));
                }
                false
            }
            Ok(answer) => {
                let error = LeaderError::OutcomeUnknown(format!(
                    "leader answered {} forwarded writes with {} outcomes",
                    batch.len(),
                    answer.outcomes.len()
                ));
                answer_all(batch, &error);
                false
            }
            Err(PeerCallError::Transport(TransportError::Rejected { status: 404, .. })) => {
                let sends = batch.into_iter().map(|w| self.send_one(url, w));
                futures::future::join_all(sends).await;
                true
            }
            Err(e) => {
                answer_all(batch, &call_error(&e));
                false
            }
        }
    }

    async fn send_one(&self, url: &str, waiting: Waiting) {
        let request = ForwardWriteRequest {
            command: Some(waiting.command),
        };
        let remaining = waiting.deadline.saturating_duration_since(Instant::now());
        let answer: Result<ForwardWriteResponse, PeerCallError> = self
            .peers
            .call(url, rpc::FORWARD_WRITE, &request, remaining)
            .await;
        let result = match answer {
            Ok(answer) => outcome_of(answer),
            Err(e) => Err(call_error(&e)),
        };
        let _ = waiting.answer.send(result);
    }
}

#[cfg(test)]
impl ForwardBatches {
    /// Waits until `count` writes to `url` wait for a batch.
    async fn wait_for_queue(&self, url: &str, count: usize) {
        loop {
            let queued = {
                let lanes = self.lanes.lock().unwrap_or_else(|e| e.into_inner());
                lanes.get(url).map_or(0, |lane| lane.queue.len())
            };
            if queued >= count {
                return;
            }
            tokio::task::yield_now().await;
        }
    }

    /// The calls to `url` in flight.
    fn in_flight(&self, url: &str) -> usize {
        let lanes = self.lanes.lock().unwrap_or_else(|e| e.into_inner());
        lanes.get(url).map_or(0, |lane| lane.in_flight)
    }
}

/// A call slot of a lane, given back if its task ends without [`ForwardBatches::next`] having
/// done so (the task was cancelled), so the lane does not stay full.
struct Slot<'a> {
    batches: &'a ForwardBatches,
    url: &'a str,
    held: bool,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if self.held {
            let mut lanes = self.batches.lanes.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(lane) = lanes.get_mut(self.url) {
                lane.in_flight -= 1;
            }
        }
    }
}

impl Lane {
    /// The oldest waiting writes that fit one batch.
    fn take_batch(&mut self) -> Batch {
        Batch {
            writes: take_batch(&mut self.queue),
            one_at_a_time: self.one_at_a_time,
        }
    }
}

/// The oldest writes of `queue` that fit one batch.
fn take_batch(queue: &mut Vec<Waiting>) -> Vec<Waiting> {
    let mut bytes = 0;
    let mut count = 0;
    for waiting in queue.iter() {
        bytes += waiting.command.encoded_len();
        if count > 0 && (count == MAX_BATCH_WRITES || bytes > MAX_BATCH_BYTES) {
            break;
        }
        count += 1;
    }
    let rest = queue.split_off(count);
    std::mem::replace(queue, rest)
}

fn answer_all(batch: Vec<Waiting>, error: &LeaderError) {
    for waiting in batch {
        let _ = waiting.answer.send(Err(error.clone()));
    }
}

/// A call that certainly did not reach the leader may be sent again; any other failure leaves
/// the outcome unknown.
fn call_error(e: &PeerCallError) -> LeaderError {
    if e.not_delivered() {
        LeaderError::Unavailable(e.to_string())
    } else {
        LeaderError::OutcomeUnknown(e.to_string())
    }
}

/// The caller's view of the leader's answer for one write.
fn outcome_of(answer: ForwardWriteResponse) -> Result<CommandResponse, LeaderError> {
    match answer.outcome {
        Some(Outcome::Applied(response)) => Ok(response),
        Some(Outcome::NotLeader(n)) => Err(n.into()),
        Some(Outcome::Failed(f)) => Err(f.into()),
        None => Err(LeaderError::OutcomeUnknown(
            "leader answered a forwarded write with nothing".to_string(),
        )),
    }
}

#[cfg(test)]
#[path = "forward_batch_test.rs"]
mod forward_batch_test;
