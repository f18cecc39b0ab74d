//! The health checks of a replica, named as kube-apiserver names their analogues: `etcd` (raft
//! runs), `etcd-readiness` (a leader is known and everything known committed is applied; once
//! the replica was in that state, a lapse shorter than [`SETTLING`] is tolerated, as the
//! moments between a commit and its apply under steady writes, or a leadership hand-over,
//! are not a replica in trouble), one
//! `poststarthook/<name>` per start-up step ([`PostStartHook`], passed by `/livez` within the
//! `--livez-grace-period`) and `shutdown` (fails once shutdown began, so load balancers stop
//! sending requests before the listener closes).

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::time::Duration;

use apiary_api::health::CheckScope;
use apiary_api::health::HealthCheck;
use apiary_api::health::Readiness;
use apiary_raft::replica::Replica;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The start-up steps a replica reports as `poststarthook/<name>` checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostStartHook {
    /// The system namespaces exist (kube-apiserver's `start-system-namespaces-controller`).
    SystemNamespaces,
    /// The API servers' own Service exists (kube-apiserver's `bootstrap-controller`).
    ApiService,
    /// The bootstrap FlowSchemas and PriorityLevelConfigurations are in place
    /// (kube-apiserver's `priority-and-fairness-config-producer`).
    FlowControlObjects,
}

impl PostStartHook {
    const ALL: [Self; 3] = [
        Self::SystemNamespaces,
        Self::ApiService,
        Self::FlowControlObjects,
    ];

    /// The check's name.
    fn check_name(self) -> &'static str {
        match self {
            Self::SystemNamespaces => "poststarthook/start-system-namespaces-controller",
            Self::ApiService => "poststarthook/bootstrap-controller",
            Self::FlowControlObjects => "poststarthook/priority-and-fairness-config-producer",
        }
    }
}

/// The names of the checks that are not post-start hooks.
const ETCD: &str = "etcd";
const ETCD_READINESS: &str = "etcd-readiness";
const SHUTDOWN: &str = "shutdown";

/// How long a replica that was settled (knew a leader, had applied everything it knew
/// committed) may know no leader, or leave a known-committed index unapplied, before
/// `etcd-readiness` fails.
const SETTLING: Duration = Duration::from_secs(1);

/// What `etcd-readiness` remembers between two checks.
#[derive(Debug, Default)]
struct Settled {
    /// Whether the replica ever knew a leader; before that, knowing none fails at once.
    led: bool,
    /// Since when the replica knows no leader.
    leaderless: Option<Instant>,
    /// Whether the replica ever had applied everything it knew committed; before that, being
    /// behind fails at once (a replica still replaying its log would answer "Any" reads from
    /// an old state).
    caught_up: bool,
    /// The committed index seen unapplied, and since when.
    behind: Option<(u64, Instant)>,
}

/// The readiness of one replica. Clones share the state.
#[derive(Debug, Clone)]
pub struct ReplicaReadiness {
    replica: Arc<Replica>,
    settled: Arc<Mutex<Settled>>,
    hooks: Arc<[AtomicBool; PostStartHook::ALL.len()]>,
    shutting_down: CancellationToken,
    live_from: Instant,
}

impl ReplicaReadiness {
    /// Readiness of `replica`; not ready before every [`PostStartHook`] is marked done (a
    /// client sent here as soon as it is ready must find the `default` namespace), nor once
    /// `shutting_down` is cancelled. Until `live_from` (start plus `--livez-grace-period`),
    /// `/livez` passes the start-up steps not finished yet.
    pub fn new(
        replica: Arc<Replica>,
        shutting_down: CancellationToken,
        live_from: Instant,
    ) -> Self {
        Self {
            replica,
            settled: Arc::default(),
            hooks: Arc::new(PostStartHook::ALL.map(|_| AtomicBool::new(false))),
            shutting_down,
            live_from,
        }
    }

    /// Records that the start-up step `hook` completed.
    pub fn mark_done(&self, hook: PostStartHook) {
        self.hooks[hook as usize].store(true, Ordering::Release);
    }

    fn etcd(&self) -> Result<(), String> {
        let status = self.replica.status();
        if !status.running {
            return Err(format!("raft of replica {} has stopped", status.id));
        }
        Ok(())
    }

    fn etcd_readiness(&self) -> Result<(), String> {
        let status = self.replica.status();
        let now = Instant::now();
        let mut settled = self.settled.lock().unwrap_or_else(PoisonError::into_inner);
        let lapsed = |since: Instant| now.duration_since(since) >= SETTLING;
        if status.leader.is_some() {
            settled.led = true;
            settled.leaderless = None;
        } else {
            let since = *settled.leaderless.get_or_insert(now);
            if !settled.led || lapsed(since) {
                return Err(format!(
                    "replica {} knows no leader (term {}, applied {})",
                    status.id, status.term, status.applied
                ));
            }
        }
        if status.applied >= status.committed {
            settled.caught_up = true;
            settled.behind = None;
            return Ok(());
        }
        let since = match settled.behind {
            Some((target, since)) if target > status.applied => since,
            _ => {
                settled.behind = Some((status.committed, now));
                now
            }
        };
        if !settled.caught_up || lapsed(since) {
            return Err(format!(
                "replica {} has applied {} of {} committed",
                status.id, status.applied, status.committed
            ));
        }
        Ok(())
    }
}

impl Readiness for ReplicaReadiness {
    fn check(&self) -> Result<(), String> {
        self.checks()
            .into_iter()
            .try_for_each(|c| self.run(c.name).map_err(|e| format!("{}: {e}", c.name)))
    }

    fn checks(&self) -> Vec<HealthCheck> {
        let health = |name| HealthCheck {
            name,
            scope: CheckScope::Health,
        };
        let readiness = |name| HealthCheck {
            name,
            scope: CheckScope::Readiness,
        };
        let mut checks = vec![health(ETCD), readiness(ETCD_READINESS)];
        checks.extend(PostStartHook::ALL.map(|h| health(h.check_name())));
        checks.push(readiness(SHUTDOWN));
        checks
    }

    fn run(&self, name: &str) -> Result<(), String> {
        match name {
            ETCD => self.etcd(),
            ETCD_READINESS => self.etcd_readiness(),
            SHUTDOWN if self.shutting_down.is_cancelled() => Err("shutting down".to_owned()),
            SHUTDOWN => Ok(()),
            _ => match PostStartHook::ALL
                .into_iter()
                .find(|h| h.check_name() == name)
            {
                Some(hook) if self.hooks[hook as usize].load(Ordering::Acquire) => Ok(()),
                Some(_) => Err("not finished".to_owned()),
                None => Err(format!("no check named {name:?}")),
            },
        }
    }

    fn run_live(&self, name: &str) -> Result<(), String> {
        let hook = PostStartHook::ALL.iter().any(|h| h.check_name() == name);
        if hook && Instant::now() < self.live_from {
            return Ok(());
        }
        self.run(name)
    }
}
