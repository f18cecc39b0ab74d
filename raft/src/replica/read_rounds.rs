//! Coalesced read-index rounds: concurrent callers share one round, and a caller that arrives
//! while a round is in flight waits for the next one, so the index it gets was confirmed after
//! its call began (R-HA-004) and at most one round runs at a time whatever the concurrency.

use std::future::Future;
use std::sync::Arc;
use std::sync::Mutex;

use tokio::sync::watch;

/// What the callers of one round see.
#[derive(Debug, Clone)]
enum Outcome<T> {
    /// Not started yet, or running.
    Waiting,
    /// The result every caller of the round gets.
    Done(T),
    /// The caller running the round was dropped before it finished; its callers join the next.
    Abandoned,
}

/// One round: its callers watch its outcome.
type Round<T> = Arc<watch::Sender<Outcome<T>>>;

/// Serialises rounds of an operation (a read-index request) and shares each round's result
/// between every caller that joined it before it started.
#[derive(Debug)]
pub(super) struct ReadRounds<T> {
    /// The round that has not started yet; arriving callers join it.
    next: Mutex<Option<Round<T>>>,
    /// Held by the caller running a round. Only a round's first caller (its runner) queues for
    /// it, so at most one runner waits, and the others of the round are never in the queue.
    turn: tokio::sync::Mutex<()>,
}

impl<T: Clone> ReadRounds<T> {
    /// No round yet.
    pub(super) fn new() -> Self {
        Self {
            next: Mutex::new(None),
            turn: tokio::sync::Mutex::new(()),
        }
    }

    /// The result of a round of `operation` that starts after this call: the caller joins the
    /// round not started yet, or creates it and runs it once the previous round finished.
    /// Cancel-safe: when a round's runner is dropped, its other callers join a later round.
    pub(super) async fn run<F, Fut>(&self, operation: F) -> T
    where
        F: Fn() -> Fut,
        Fut: Future<Output = T>,
    {
        loop {
            let (round, runner) = self.join();
            if runner {
                let abandon = AbandonOnDrop {
                    rounds: self,
                    round: &round,
                };
                let turn = self.turn.lock().await;
                self.start(&round);
                let value = operation().await;
                abandon.finish(value.clone());
                drop(turn);
                return value;
            }
            if let Some(value) = settled(&mut round.subscribe()).await {
                return value;
            }
        }
    }

    /// The round not started yet, and whether this caller created it (and so runs it).
    fn join(&self) -> (Round<T>, bool) {
        let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        match &*next {
            Some(pending) => (pending.clone(), false),
            None => {
                let round = Arc::new(watch::Sender::new(Outcome::Waiting));
                *next = Some(round.clone());
                (round, true)
            }
        }
    }

    /// Marks `round` started, if it was the round not started yet: later callers join a new one.
    fn start(&self, round: &Round<T>) {
        let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        if next
            .as_ref()
            .is_some_and(|pending| Arc::ptr_eq(pending, round))
        {
            *next = None;
        }
    }
}

/// The result of a round once it settled; `None` when it was abandoned.
async fn settled<T: Clone>(outcome: &mut watch::Receiver<Outcome<T>>) -> Option<T> {
    // The sender lives in the round, which the caller holds: waiting never fails.
    let seen = outcome
        .wait_for(|o| !matches!(o, Outcome::Waiting))
        .await
        .ok()?;
    match &*seen {
        Outcome::Done(value) => Some(value.clone()),
        _ => None,
    }
}

/// Tells a round's callers it was abandoned unless it finished; a round abandoned before it
/// started stops taking callers.
struct AbandonOnDrop<'a, T: Clone> {
    rounds: &'a ReadRounds<T>,
    round: &'a Round<T>,
}

impl<T: Clone> AbandonOnDrop<'_, T> {
    /// Gives every caller of the round its result.
    fn finish(self, value: T) {
        self.round.send_replace(Outcome::Done(value));
        std::mem::forget(self);
    }
}

impl<T: Clone> Drop for AbandonOnDrop<'_, T> {
    fn drop(&mut self) {
        self.rounds.start(self.round);
        self.round.send_replace(Outcome::Abandoned);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU64;
    use std::sync::atomic::Ordering;

    use tokio::sync::Semaphore;

    use super::*;

    /// Rounds numbered from 1 that each wait for a permit of `gate` before they finish.
    struct Counted {
        rounds: ReadRounds<u64>,
        started: AtomicU64,
        gate: Semaphore,
    }

    impl Counted {
        fn new() -> Arc<Self> {
            Arc::new(Self {
                rounds: ReadRounds::new(),
                started: AtomicU64::new(0),
                gate: Semaphore::new(0),
            })
        }

        async fn read(&self) -> u64 {
            self.rounds
                .run(|| async {
                    let number = self.started.fetch_add(1, Ordering::SeqCst) + 1;
                    self.gate.acquire().await.expect("gate open").forget();
                    number
                })
                .await
        }

        /// A caller of [`Counted::read`] on its own task.
        fn spawn_read(self: &Arc<Self>) -> tokio::task::JoinHandle<u64> {
            let counted = self.clone();
            tokio::spawn(async move { counted.read().await })
        }
    }

    async fn settle() {
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
    }

    // R-HA-004: a caller that arrives while a round is in flight gets a round that started
    // after its call, and every such caller shares that one round.
    #[tokio::test(flavor = "current_thread")]
    async fn a_caller_arriving_during_a_round_waits_for_the_next_one() {
        let counted = Counted::new();
        let first = counted.spawn_read();
        settle().await;
        assert_eq!(counted.started.load(Ordering::SeqCst), 1);
        let later: Vec<_> = (0..50).map(|_| counted.spawn_read()).collect();
        settle().await;
        // Round 1 is in flight: nobody started round 2 meanwhile.
        assert_eq!(counted.started.load(Ordering::SeqCst), 1);
        counted.gate.add_permits(1);
        assert_eq!(first.await.expect("first"), 1);
        settle().await;
        assert_eq!(counted.started.load(Ordering::SeqCst), 2);
        counted.gate.add_permits(1);
        for caller in later {
            assert_eq!(caller.await.expect("later"), 2);
        }
        assert_eq!(counted.started.load(Ordering::SeqCst), 2);
    }

    // R-HA-004: callers that joined a round whose runner was dropped get a later round.
    #[tokio::test(flavor = "current_thread")]
    async fn callers_of_an_abandoned_round_get_a_later_one() {
        let counted = Counted::new();
        let runner = counted.spawn_read();
        settle().await;
        let waiting: Vec<_> = (0..3).map(|_| counted.spawn_read()).collect();
        settle().await;
        // The runner of round 1 goes away; round 2 (the three waiting callers) starts.
        runner.abort();
        settle().await;
        assert_eq!(counted.started.load(Ordering::SeqCst), 2);
        counted.gate.add_permits(1);
        for caller in waiting {
            assert_eq!(caller.await.expect("waiting"), 2);
        }
    }

    // R-HA-004: a runner dropped while the others of its round wait hands the round on.
    #[tokio::test(flavor = "current_thread")]
    async fn a_round_whose_runner_is_dropped_is_run_again_for_its_callers() {
        let counted = Counted::new();
        let blocker = counted.spawn_read();
        settle().await;
        let runner = counted.spawn_read();
        settle().await;
        let other = counted.spawn_read();
        settle().await;
        counted.gate.add_permits(1);
        assert_eq!(blocker.await.expect("blocker"), 1);
        settle().await;
        // Round 2 (runner and other) is in flight; its runner is dropped.
        assert_eq!(counted.started.load(Ordering::SeqCst), 2);
        runner.abort();
        settle().await;
        assert_eq!(counted.started.load(Ordering::SeqCst), 3);
        counted.gate.add_permits(1);
        assert_eq!(other.await.expect("other"), 3);
    }

    // R-HA-004: a runner dropped while it waits for its turn takes its round with it; the
    // round's other callers get a round that starts later.
    #[tokio::test(flavor = "current_thread")]
    async fn a_runner_dropped_before_its_turn_hands_its_callers_to_a_new_round() {
        let counted = Counted::new();
        let blocker = counted.spawn_read();
        settle().await;
        let runner = counted.spawn_read();
        settle().await;
        let other = counted.spawn_read();
        settle().await;
        runner.abort();
        settle().await;
        counted.gate.add_permits(2);
        assert_eq!(blocker.await.expect("blocker"), 1);
        assert_eq!(other.await.expect("other"), 2);
        assert_eq!(counted.started.load(Ordering::SeqCst), 2);
    }
}
