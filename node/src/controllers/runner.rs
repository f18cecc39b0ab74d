//! The leader-only runner: follows raft leadership, starts every selected controller when the
//! replica becomes leader and, when it stops leading (or shuts down), cancels them and waits
//! for them to end before anything else may start them again. [`converge`] is the loop a
//! level-triggered controller runs: a pass, then the next on a store change, at the time the
//! pass asked for, or after a failure.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use apiary_raft::mvcc::Revision;
use apiary_raft::replica::Replica;
use chrono::DateTime;
use chrono::Utc;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::Controller;
use super::ControllerContext;
use super::changes::Interest;
use super::client::ControllerError;

/// After a change to the store, how long a controller waits for more before its next pass
/// (a burst of writes costs one pass, not one each).
pub const SETTLE: Duration = Duration::from_millis(200);

/// How long a controller waits after a failed pass before it tries again (changes of the
/// store meanwhile do not bring the retry forward).
pub const RETRY: Duration = Duration::from_secs(1);

/// How long a controller's passes may keep failing before it warns: failures while the
/// replica starts (the default RBAC policy not yet written, feature gates not yet checked)
/// pass without noise; a failure that lasts is a warning, at most once per this period.
pub const WARN_AFTER: Duration = Duration::from_secs(10);

/// Whether this replica leads.
#[async_trait::async_trait]
pub trait Leadership: Send + Sync + 'static {
    /// Waits until the replica leads (`leading`) or no longer does; `false` when it stopped
    /// (it will never lead again).
    async fn wait_until(&self, leading: bool) -> bool;
}

#[async_trait::async_trait]
impl Leadership for Replica {
    async fn wait_until(&self, leading: bool) -> bool {
        self.await_leadership(leading).await
    }
}

/// Runs `controllers` while the replica leads, until `stop` is cancelled; each term of
/// leadership starts them afresh and ends with all of them stopped and awaited.
pub async fn run_controllers(
    leadership: Arc<dyn Leadership>,
    controllers: Vec<Arc<dyn Controller>>,
    context: ControllerContext,
    stop: CancellationToken,
) {
    if controllers.is_empty() {
        return;
    }
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            leads = leadership.wait_until(true) => if !leads { return },
        }
        let names: Vec<&str> = controllers.iter().map(|c| c.name()).collect();
        tracing::info!(?names, "leading: controllers started");
        let term = stop.child_token();
        let running: Vec<_> = controllers
            .iter()
            .map(|controller| {
                let (controller, context, term) =
                    (controller.clone(), context.clone(), term.clone());
                tokio::spawn(async move { controller.run(context, term).await })
            })
            .collect();
        let replica_stopped = tokio::select! {
            () = stop.cancelled() => true,
            still = leadership.wait_until(false) => !still,
        };
        term.cancel();
        for task in running {
            if let Err(error) = task.await {
                tracing::warn!(%error, "a controller ended abnormally");
            }
        }
        tracing::info!(?names, "controllers stopped");
        if replica_stopped || stop.is_cancelled() {
            return;
        }
    }
}

/// Runs passes of a level-triggered controller until `stop` is cancelled: a pass returns
/// the time it must run again at the latest (an expiry), or `None`; the next pass runs
/// then, or after the store changed (settled for [`SETTLE`]), whichever is first; a failed
/// pass is logged and retried after [`RETRY`].
pub async fn converge<F, Fut>(
    name: &'static str,
    context: &ControllerContext,
    stop: &CancellationToken,
    pass: F,
) where
    F: FnMut() -> Fut + Send,
    Fut: Future<Output = Result<Option<DateTime<Utc>>, ControllerError>> + Send,
{
    converge_paced(name, context, stop, SETTLE, context.changes.all(), pass).await;
}

/// As [`converge`], with passes after the changes `interest` covers only.
pub async fn converge_on<F, Fut>(
    name: &'static str,
    context: &ControllerContext,
    stop: &CancellationToken,
    interest: Interest,
    pass: F,
) where
    F: FnMut() -> Fut + Send,
    Fut: Future<Output = Result<Option<DateTime<Utc>>, ControllerError>> + Send,
{
    let changes = context.changes.of(interest);
    converge_paced(name, context, stop, SETTLE, changes, pass).await;
}

/// As [`converge`], for a controller whose pass reads much of the store: after a change
/// (one that `changes` shows) the next pass waits `pace` (at least [`SETTLE`]), so a store
/// that changes without pause costs one pass per `pace`, not one per change.
pub async fn converge_paced<F, Fut>(
    name: &'static str,
    context: &ControllerContext,
    stop: &CancellationToken,
    pace: Duration,
    mut changes: watch::Receiver<Revision>,
    mut pass: F,
) where
    F: FnMut() -> Fut + Send,
    Fut: Future<Output = Result<Option<DateTime<Utc>>, ControllerError>> + Send,
{
    let settle = pace.max(SETTLE);
    let mut failing = Failing::default();
    loop {
        changes.mark_unchanged();
        let outcome = tokio::select! {
            () = stop.cancelled() => return,
            outcome = pass() => outcome,
        };
        let wait = match outcome {
            Ok(due) => {
                failing = Failing::default();
                match due {
                    Some(due) => (due - context.clock.now())
                        .to_std()
                        .unwrap_or(Duration::ZERO),
                    None => Duration::MAX,
                }
            }
            Err(error) => {
                failing.report(name, &error);
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(RETRY) => continue,
                }
            }
        };
        let changed = async {
            if changes.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
            tokio::time::sleep(settle).await;
        };
        tokio::select! {
            () = stop.cancelled() => return,
            () = changed => {}
            () = sleep_for(wait) => {}
        }
    }
}

/// How long a controller's passes have been failing, and when it last warned.
#[derive(Debug, Default)]
struct Failing {
    since: Option<tokio::time::Instant>,
    warned: Option<tokio::time::Instant>,
}

impl Failing {
    /// Logs a failed pass: at debug level until the passes have failed for [`WARN_AFTER`],
    /// then a warning at most once per [`WARN_AFTER`].
    fn report(&mut self, name: &str, error: &ControllerError) {
        let now = tokio::time::Instant::now();
        let since = *self.since.get_or_insert(now);
        let quiet = self.warned.is_some_and(|at| now - at < WARN_AFTER);
        if now - since >= WARN_AFTER && !quiet {
            self.warned = Some(now);
            let failing_for = (now - since).as_secs();
            tracing::warn!(controller = name, %error, failing_for, "passes keep failing; retrying");
        } else {
            tracing::debug!(controller = name, %error, "pass failed; retrying");
        }
    }
}

/// Sleeps for `wait`; forever for [`Duration::MAX`].
async fn sleep_for(wait: Duration) {
    match tokio::time::Instant::now().checked_add(wait) {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use apiary_api::SystemClock;

    use super::super::changes::Changes;
    use super::*;

    /// Leadership as a test sets it.
    struct Switch(watch::Receiver<bool>);

    #[async_trait::async_trait]
    impl Leadership for Switch {
        async fn wait_until(&self, leading: bool) -> bool {
            let mut receiver = self.0.clone();
            receiver.wait_for(|now| *now == leading).await.is_ok()
        }
    }

    /// Records its starts and stops; a stop is recorded only after the controller saw its
    /// cancellation, so the runner awaiting it is observable.
    struct Recorder(Arc<Mutex<Vec<&'static str>>>);

    #[async_trait::async_trait]
    impl Controller for Recorder {
        fn name(&self) -> &'static str {
            "recorder"
        }

        async fn run(&self, _context: ControllerContext, stop: CancellationToken) {
            self.0.lock().unwrap().push("start");
            stop.cancelled().await;
            tokio::task::yield_now().await;
            self.0.lock().unwrap().push("stop");
        }
    }

    fn context() -> ControllerContext {
        ControllerContext {
            api: axum::Router::new(),
            flavor: apiary_api::Flavor::Kubernetes,
            clock: Arc::new(SystemClock),
            changes: Changes::of_revisions(watch::channel(0).1),
        }
    }

    async fn until(log: &Arc<Mutex<Vec<&'static str>>>, want: &[&str]) {
        for _ in 0..500 {
            if log.lock().unwrap().as_slice() == want {
                return;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        panic!("log {:?}, wanted {want:?}", log.lock().unwrap());
    }

    // Controllers run only while the replica leads: started on gaining leadership, stopped
    // and awaited on losing it, started again on the next term, stopped on shutdown.
    #[tokio::test]
    async fn controllers_follow_leadership() {
        let (leading, follow) = watch::channel(false);
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = CancellationToken::new();
        let runner = tokio::spawn(run_controllers(
            Arc::new(Switch(follow)),
            vec![Arc::new(Recorder(log.clone()))],
            context(),
            stop.clone(),
        ));
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(
            log.lock().unwrap().is_empty(),
            "a follower runs no controller"
        );
        leading.send_replace(true);
        until(&log, &["start"]).await;
        leading.send_replace(false);
        until(&log, &["start", "stop"]).await;
        leading.send_replace(true);
        until(&log, &["start", "stop", "start"]).await;
        stop.cancel();
        runner.await.unwrap();
        assert_eq!(*log.lock().unwrap(), ["start", "stop", "start", "stop"]);
    }

    // A pass runs again when the store changes, and at the time the previous pass asked for.
    #[tokio::test]
    async fn passes_run_on_changes_and_when_due() {
        let (revision, changes) = watch::channel(0);
        let context = ControllerContext {
            changes: Changes::of_revisions(changes),
            ..context()
        };
        let passes = Arc::new(Mutex::new(0_u32));
        let stop = CancellationToken::new();
        let counted = passes.clone();
        let clock = context.clock.clone();
        let looping = {
            let (context, stop) = (context.clone(), stop.clone());
            tokio::spawn(async move {
                converge("test", &context, &stop, || {
                    let counted = counted.clone();
                    let clock = clock.clone();
                    async move {
                        let mut n = counted.lock().unwrap();
                        *n += 1;
                        // The second pass asks to run again shortly.
                        Ok((*n == 2).then(|| clock.now() + chrono::Duration::milliseconds(50)))
                    }
                })
                .await;
            })
        };
        let count = |n: u32| {
            let passes = passes.clone();
            async move {
                for _ in 0..500 {
                    if *passes.lock().unwrap() == n {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
                panic!("passes {}, wanted {n}", passes.lock().unwrap());
            }
        };
        count(1).await;
        revision.send_replace(1);
        count(2).await;
        count(3).await;
        stop.cancel();
        looping.await.unwrap();
        assert_eq!(*passes.lock().unwrap(), 3);
    }
    // A paced controller under a store that never stops changing runs one pass per pace,
    // not one per change.
    #[tokio::test]
    async fn a_paced_controller_runs_once_per_pace_under_constant_change() {
        let (revision, changes) = watch::channel(0);
        let context = ControllerContext {
            changes: Changes::of_revisions(changes),
            ..context()
        };
        let passes = Arc::new(Mutex::new(0_u32));
        let stop = CancellationToken::new();
        let counted = passes.clone();
        let looping = {
            let (context, stop) = (context.clone(), stop.clone());
            tokio::spawn(async move {
                let pace = Duration::from_millis(600);
                converge_paced("test", &context, &stop, pace, context.changes.all(), || {
                    let counted = counted.clone();
                    async move {
                        *counted.lock().unwrap() += 1;
                        Ok(None)
                    }
                })
                .await;
            })
        };
        let started = tokio::time::Instant::now();
        let mut next = 0;
        while started.elapsed() < Duration::from_millis(1500) {
            next += 1;
            revision.send_replace(next);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        stop.cancel();
        looping.await.unwrap();
        let passes = *passes.lock().unwrap();
        assert!(
            (2..=4).contains(&passes),
            "{passes} passes in 1.5 s at a 0.6 s pace"
        );
    }
}
