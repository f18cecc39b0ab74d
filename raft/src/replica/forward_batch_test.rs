//! Forwarded writes in batches, against a scripted leader: which calls carry which writes,
//! and what each write learns when a call fails.

use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use tokio::sync::Semaphore;

use super::*;
use crate::command::Op;
use crate::command::Txn;
use crate::command::command::Kind;
use crate::network::Transport;

/// How the scripted leader answers `forward-writes`.
#[derive(Clone, Copy)]
enum Batches {
    /// Each command's outcome, in order.
    Answered,
    /// 404: a build without the call.
    Unknown,
    /// The connection broke after the call was sent.
    Broken,
    /// No connection could be made.
    Unreachable,
}

/// A leader that answers each compaction command with its own revision, once a call is let
/// through, and records the writes each call carried.
struct Leader {
    batches: Batches,
    /// Calls wait for a permit here.
    gate: Semaphore,
    /// Each call: its RPC and the revisions of its commands.
    calls: Mutex<Vec<(String, Vec<u64>)>>,
}

impl Leader {
    fn new(batches: Batches, open: bool) -> Arc<Self> {
        let permits = if open { Semaphore::MAX_PERMITS } else { 0 };
        Arc::new(Self {
            batches,
            gate: Semaphore::new(permits),
            calls: Mutex::new(Vec::new()),
        })
    }

    fn calls(&self) -> Vec<(String, Vec<u64>)> {
        self.calls.lock().unwrap().clone()
    }

    async fn wait_for_calls(&self, count: usize) {
        while self.calls.lock().unwrap().len() < count {
            tokio::task::yield_now().await;
        }
    }
}

fn revision(command: &Command) -> u64 {
    match &command.kind {
        Some(Kind::Compact(c)) => c.revision,
        other => panic!("unexpected command {other:?}"),
    }
}

fn applied(command: &Command) -> ForwardWriteResponse {
    ForwardWriteResponse::applied(CommandResponse {
        revision: revision(command),
        ..CommandResponse::default()
    })
}

#[async_trait]
impl Transport for Arc<Leader> {
    async fn call(
        &self,
        target: &str,
        rpc: &str,
        body: Bytes,
        _deadline: Duration,
    ) -> Result<Bytes, TransportError> {
        let commands = match rpc {
            rpc::FORWARD_WRITE => vec![ForwardWriteRequest::decode(body).unwrap().command.unwrap()],
            rpc::FORWARD_WRITES => ForwardWritesRequest::decode(body).unwrap().commands,
            other => panic!("unexpected rpc {other}"),
        };
        let revisions = commands.iter().map(revision).collect();
        self.calls.lock().unwrap().push((rpc.to_owned(), revisions));
        self.gate.acquire().await.unwrap().forget();
        if rpc == rpc::FORWARD_WRITE {
            return Ok(applied(&commands[0]).encode_to_vec().into());
        }
        let source = || Box::new(std::io::Error::other("scripted")) as _;
        match self.batches {
            Batches::Answered => Ok(ForwardWritesResponse {
                outcomes: commands.iter().map(applied).collect(),
            }
            .encode_to_vec()
            .into()),
            Batches::Unknown => Err(TransportError::Rejected {
                target: target.to_owned(),
                rpc: rpc.to_owned(),
                status: 404,
                message: String::new(),
            }),
            Batches::Broken => Err(TransportError::Broken {
                target: target.to_owned(),
                rpc: rpc.to_owned(),
                source: source(),
            }),
            Batches::Unreachable => Err(TransportError::Unreachable {
                target: target.to_owned(),
                source: source(),
            }),
        }
    }
}

const URL: &str = "http://leader";

fn batches(leader: &Arc<Leader>) -> ForwardBatches {
    ForwardBatches::new(PeerClient::new(Arc::new(leader.clone())))
}

fn deadline() -> Instant {
    Instant::now() + Duration::from_secs(10)
}

/// Starts one forwarded write per revision of `revisions`.
fn forward_all(batches: &ForwardBatches, revisions: std::ops::Range<u64>) -> Vec<Write> {
    revisions
        .map(|r| {
            let batches = batches.clone();
            tokio::spawn(async move { batches.forward(URL, Command::compact(r), deadline()).await })
        })
        .collect()
}

/// A forwarded write's task.
type Write = tokio::task::JoinHandle<Result<CommandResponse, LeaderError>>;

/// Fills every call slot with a write of its own (revisions from `slots_from`), held by the
/// leader's gate once `earlier` calls were made, then starts the writes of `queued`, which wait
/// behind them for a batch: the writes in the slots, and the queued ones.
async fn behind_full_slots(
    leader: &Arc<Leader>,
    batches: &ForwardBatches,
    slots_from: u64,
    earlier: usize,
    queued: std::ops::Range<u64>,
) -> (Vec<Write>, Vec<Write>) {
    let alone = forward_all(batches, slots_from..slots_from + MAX_IN_FLIGHT as u64);
    leader.wait_for_calls(earlier + MAX_IN_FLIGHT).await;
    let waiting = queued.clone().count();
    let later = forward_all(batches, queued);
    batches.wait_for_queue(URL, waiting).await;
    (alone, later)
}

#[tokio::test]
async fn writes_made_while_every_call_is_out_travel_together_and_each_gets_its_own_answer() {
    let leader = Leader::new(Batches::Answered, false);
    let batches = batches(&leader);
    let (alone, later) = behind_full_slots(&leader, &batches, 1, 0, 100..110).await;
    leader.gate.add_permits(Semaphore::MAX_PERMITS);

    for (revision, write) in (1..).zip(alone).chain((100..).zip(later)) {
        assert_eq!(write.await.unwrap().unwrap().revision, revision);
    }
    let calls = leader.calls();
    let singles: Vec<_> = calls
        .iter()
        .filter(|(rpc, _)| rpc == rpc::FORWARD_WRITE)
        .collect();
    assert_eq!(singles.len(), MAX_IN_FLIGHT, "{calls:?}");
    let batched: Vec<u64> = calls
        .iter()
        .filter(|(rpc, _)| rpc == rpc::FORWARD_WRITES)
        .flat_map(|(_, revisions)| revisions.clone())
        .collect();
    assert_eq!(batched, (100..110).collect::<Vec<_>>(), "{calls:?}");
}

#[tokio::test]
async fn a_write_alone_goes_at_once_in_the_one_write_call() {
    let leader = Leader::new(Batches::Answered, true);
    let batches = batches(&leader);
    for revision in 1..4 {
        let answer = batches
            .forward(URL, Command::compact(revision), deadline())
            .await;
        assert_eq!(answer.unwrap().revision, revision);
    }
    let rpcs: Vec<String> = leader.calls().into_iter().map(|(rpc, _)| rpc).collect();
    assert_eq!(rpcs, vec![rpc::FORWARD_WRITE; 3]);
}

#[tokio::test]
async fn a_leader_without_the_batch_call_is_sent_the_writes_one_at_a_time_from_then_on() {
    let leader = Leader::new(Batches::Unknown, false);
    let batches = batches(&leader);
    let (alone, first) = behind_full_slots(&leader, &batches, 1, 0, 100..105).await;
    leader.gate.add_permits(Semaphore::MAX_PERMITS);
    for (revision, write) in (1..).zip(alone).chain((100..).zip(first)) {
        assert_eq!(write.await.unwrap().unwrap().revision, revision);
    }
    let refused = leader.calls().len();

    leader.gate.forget_permits(Semaphore::MAX_PERMITS);
    let (alone, second) = behind_full_slots(&leader, &batches, 300, refused, 200..205).await;
    leader.gate.add_permits(Semaphore::MAX_PERMITS);
    for (revision, write) in (300..).zip(alone).chain((200..).zip(second)) {
        assert_eq!(write.await.unwrap().unwrap().revision, revision);
    }

    let batch_calls = leader
        .calls()
        .into_iter()
        .filter(|(rpc, _)| rpc == rpc::FORWARD_WRITES)
        .count();
    assert_eq!(batch_calls, 1, "{:?}", leader.calls());
}

/// What each of three writes batched behind full call slots learns when the leader answers
/// their batch as `batches` says (the writes in the slots go alone and succeed).
async fn batched_errors(batches_answer: Batches) -> Vec<LeaderError> {
    let leader = Leader::new(batches_answer, false);
    let batches = batches(&leader);
    let (alone, later) = behind_full_slots(&leader, &batches, 1, 0, 100..103).await;
    leader.gate.add_permits(Semaphore::MAX_PERMITS);
    for write in alone {
        write.await.unwrap().unwrap();
    }
    let mut errors = Vec::new();
    for write in later {
        errors.push(write.await.unwrap().unwrap_err());
    }
    errors
}

#[tokio::test]
async fn a_batch_that_may_have_arrived_leaves_each_write_outcome_unknown() {
    for error in batched_errors(Batches::Broken).await {
        assert!(matches!(error, LeaderError::OutcomeUnknown(_)), "{error:?}");
    }
}

#[tokio::test]
async fn a_batch_that_never_left_leaves_each_write_retryable() {
    for error in batched_errors(Batches::Unreachable).await {
        assert!(matches!(error, LeaderError::Unavailable(_)), "{error:?}");
    }
}

#[tokio::test]
async fn a_caller_that_stops_waiting_leaves_its_batch_to_the_others() {
    let leader = Leader::new(Batches::Answered, false);
    let batches = batches(&leader);
    let (alone, later) = behind_full_slots(&leader, &batches, 1, 0, 100..104).await;
    // The caller of the first write stops waiting while its call is out.
    alone[0].abort();
    leader.gate.add_permits(Semaphore::MAX_PERMITS);
    for (revision, write) in (2..).zip(alone.into_iter().skip(1)) {
        assert_eq!(write.await.unwrap().unwrap().revision, revision);
    }
    for (revision, write) in (100..).zip(later) {
        assert_eq!(write.await.unwrap().unwrap().revision, revision);
    }
}

#[tokio::test]
async fn a_write_whose_caller_left_before_its_batch_was_sent_is_not_sent() {
    let leader = Leader::new(Batches::Answered, false);
    let batches = batches(&leader);
    let (alone, mut later) = behind_full_slots(&leader, &batches, 1, 0, 100..104).await;
    let gone = later.remove(1);
    gone.abort();
    assert!(gone.await.unwrap_err().is_cancelled());
    leader.gate.add_permits(Semaphore::MAX_PERMITS);
    for write in alone {
        write.await.unwrap().unwrap();
    }
    for write in later {
        write.await.unwrap().unwrap();
    }
    let sent: Vec<u64> = leader
        .calls()
        .into_iter()
        .skip(MAX_IN_FLIGHT)
        .flat_map(|(_, revisions)| revisions)
        .collect();
    assert_eq!(sent, vec![100, 102, 103]);
}

#[test]
fn a_call_slot_is_given_back_when_its_task_is_cancelled() {
    let leader = Leader::new(Batches::Answered, false);
    let batches = batches(&leader);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let _writes = forward_all(&batches, 1..MAX_IN_FLIGHT as u64 + 1);
        leader.wait_for_calls(MAX_IN_FLIGHT).await;
        assert_eq!(batches.in_flight(URL), MAX_IN_FLIGHT);
    });
    // Dropping the runtime drops the tasks of the calls, held at the leader's gate.
    drop(runtime);
    assert_eq!(batches.in_flight(URL), 0);
}

#[test]
fn a_batch_is_cut_at_its_byte_budget_but_always_takes_one_write() {
    let waiting = |value_bytes: usize| Waiting {
        command: Command::txn(Txn {
            success: vec![Op::put("key", vec![0u8; value_bytes])],
            ..Txn::default()
        }),
        deadline: Instant::now(),
        answer: oneshot::channel().0,
    };
    let mut queue: Vec<Waiting> = (0..3).map(|_| waiting(MAX_BATCH_BYTES / 3)).collect();
    assert_eq!(take_batch(&mut queue).len(), 2);
    assert_eq!(queue.len(), 1);

    let mut queue = vec![waiting(MAX_BATCH_BYTES + 1), waiting(1)];
    assert_eq!(take_batch(&mut queue).len(), 1);
    assert_eq!(queue.len(), 1);

    let mut queue: Vec<Waiting> = (0..MAX_BATCH_WRITES + 5).map(|_| waiting(1)).collect();
    assert_eq!(take_batch(&mut queue).len(), MAX_BATCH_WRITES);
    assert_eq!(queue.len(), 5);
}
