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
    /// Held by the caller running a round; the callers of the next round queue for it.
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
    /// round not started yet, and whichever of its callers first gets the turn runs it.
    /// Cancel-safe: when the caller running a round is dropped, the round's other callers join
    /// a later one.
    pub(super) async fn run<F, Fut>(&self, operation: F) -> T
    where
        F: Fn() -> Fut,
        Fut: Future<Output = T>,
    {
        loop {
            let round = self.join();
            let mut outcome = round.subscribe();
            tokio::select! {
                biased;
                done = settled(&mut outcome) => {
                    if let Some(value) = done {
                        return value;
                    }
                }
                turn = self.turn.lock() => {
                    if self.start(&round) {
                        let abandon = AbandonOnDrop(&round);
                        let value = operation().await;
                        abandon.finish(value.clone());
                        drop(turn);
                        return value;
                    }
                    // Another caller started this round and, as it released the turn, finished it.
                    drop(turn);
                    if let Outcome::Done(value) = &*round.borrow() {
                        return value.clone();
                    }
                }
            }
        }
    }

    /// The round not started yet, created when there is none.
    fn join(&self) -> Round<T> {
        let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        next.get_or_insert_with(|| Arc::new(watch::Sender::new(Outcome::Waiting)))
            .clone()
    }

    /// Marks `round` started if it has not been: later callers join a new round.
    fn start(&self, round: &Round<T>) -> bool {
        let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        match &*next {
            Some(pending) if Arc::ptr_eq(pending, round) => {
                *next = None;
                true
            }
            _ => false,
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

/// Tells a round's callers it was abandoned unless it finished.
struct AbandonOnDrop<'a, T>(&'a Round<T>);

impl<T> AbandonOnDrop<'_, T> {
    /// Gives every caller of the round its result.
    fn finish(self, value: T) {
        self.0.send_replace(Outcome::Done(value));
        std::mem::forget(self);
    }
}

impl<T> Drop for AbandonOnDrop<'_, T> {
    fn drop(&mut self) {
        self.0.send_replace(Outcome::Abandoned);
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
        let first = tokio::spawn({
            let c = counted.clone();
            async move { c.read().await }
        });
        settle().await;
        assert_eq!(counted.started.load(Ordering::SeqCst), 1);
        let later: Vec<_> = (0..50)
            .map(|_| {
                let c = counted.clone();
                tokio::spawn(async move { c.read().await })
            })
            .collect();
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
        let runner = tokio::spawn({
            let c = counted.clone();
            async move { c.read().await }
        });
        settle().await;
        let waiting: Vec<_> = (0..3)
            .map(|_| {
                let c = counted.clone();
                tokio::spawn(async move { c.read().await })
            })
            .collect();
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
        let blocker = tokio::spawn({
            let c = counted.clone();
            async move { c.read().await }
        });
        settle().await;
        let runner = tokio::spawn({
            let c = counted.clone();
            async move { c.read().await }
        });
        settle().await;
        let other = tokio::spawn({
            let c = counted.clone();
            async move { c.read().await }
        });
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
}
