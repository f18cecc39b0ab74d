//! Scenarios `mixed_faults_three_replicas` and `mixed_faults_five_replicas` (R-HA-004..010,
//! R-HA-011, R-HA-013, R-HA-014, R-RES-167): two writers create, update (unconditionally and
//! conditionally on the revision they last saw) and delete ConfigMaps, a reader makes quorum
//! gets, gets at `resourceVersion=0`, read-your-writes gets at the revision of the newest
//! acknowledged write, and paged lists whose pages go to different replicas, and two watchers
//! watch and resume across replicas, all through random replicas, while the seed draws 3–6
//! fault events, one at a time, each healed before the next: the leader cut off from the other
//! replicas, a random replica cut off, a random replica cut off in one direction only, slow
//! links around a random replica, a random replica's host crashed and restarted, the links
//! around a random replica held and released. Afterwards a fence write is acknowledged and the
//! watchers must reach it, every replica is read, and every checker of the history runs.
//!
//! Scenario `rolling_upgrade_three_replicas` (R-HA-015) runs the same workload and checks
//! around the script of [`crate::scenario::rolling_upgrade`] instead: replicas of an older
//! protocol upgraded one by one, the fault mix while the versions are mixed.

use std::time::Duration;

use crate::client::SimClient;
use crate::client::now;
use crate::cluster::ClusterOptions;
use crate::fault::Faults;
use crate::history::History;
use crate::history::ReadAt;
use crate::history::ReadOutcome;
use crate::history::WriteOp;
use crate::history::WriteOutcome;
use crate::scenario::Report;
use crate::scenario::ScenarioError;
use crate::scenario::ScenarioFailure;
use crate::scenario::fault_script::faults_script;
use crate::scenario::phases::agreed_leader;
use crate::scenario::phases::final_views;
use crate::scenario::phases::watchers_caught_up;
use crate::scenario::phases::write_acked;
use crate::scenario::reader::read_until;
use crate::scenario::rolling_upgrade::OLD_PROTOCOL;
use crate::scenario::rolling_upgrade::upgrade_script;
use crate::scenario::runner::actor_rng as rng;
use crate::scenario::runner::run_with_client;
use crate::scenario::verdict::judge;
use crate::scenario::workload::StopSignal;
use crate::scenario::workload::WriterOptions;
use crate::scenario::workload::write_until;
use crate::watch::WatchGoal;
use crate::watch::Watcher;
use crate::watch::WatcherOptions;
use crate::watch_history::WatchLog;

/// The three-replica scenario's name, as its test is named.
pub const MIXED_FAULTS_3: &str = "mixed_faults_three_replicas";
/// The five-replica scenario's name, as its test is named.
pub const MIXED_FAULTS_5: &str = "mixed_faults_five_replicas";
/// The rolling upgrade scenario's name, as its test is named.
pub const ROLLING_UPGRADE: &str = "rolling_upgrade_three_replicas";

/// What happens to the cluster while the workload runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    /// The seeded fault mix.
    Faults,
    /// A rolling upgrade from an older protocol, with the fault mix while versions are mixed.
    RollingUpgrade,
}

/// How long the first election, and the agreement on a leader after each heal, may take.
const ELECTION_BOUND: Duration = Duration::from_secs(10);
/// How long the final reads may take.
const CONVERGE_BOUND: Duration = Duration::from_secs(15);
/// A client call's deadline.
const CALL_DEADLINE: Duration = Duration::from_secs(2);
const WRITERS: u64 = 2;
const WATCHERS: u64 = 2;
/// The shortest and longest pause of a writer, and of the reader, between two requests.
const PAUSE: (Duration, Duration) = (Duration::from_millis(50), Duration::from_millis(250));

fn watcher_options() -> WatcherOptions {
    WatcherOptions {
        // Three bookmark intervals: a healthy quiet stream is never taken for a dead one.
        idle: Duration::from_secs(3),
        min_session: Duration::from_secs(1),
        max_session: Duration::from_secs(4),
        open_deadline: CALL_DEADLINE,
        away: Duration::ZERO,
    }
}

/// Runs the three-replica scenario with `seed`.
pub fn mixed_faults_three_replicas(seed: u64) -> Result<Report, ScenarioFailure> {
    run(MIXED_FAULTS_3, seed, 3, Plan::Faults)
}

/// Runs the five-replica scenario with `seed`.
pub fn mixed_faults_five_replicas(seed: u64) -> Result<Report, ScenarioFailure> {
    run(MIXED_FAULTS_5, seed, 5, Plan::Faults)
}

/// Runs the rolling upgrade scenario with `seed`.
pub fn rolling_upgrade_three_replicas(seed: u64) -> Result<Report, ScenarioFailure> {
    run(ROLLING_UPGRADE, seed, 3, Plan::RollingUpgrade)
}

fn run(
    scenario: &'static str,
    seed: u64,
    replicas: u64,
    plan: Plan,
) -> Result<Report, ScenarioFailure> {
    let mut options = ClusterOptions {
        replicas,
        ..ClusterOptions::new(seed)
    };
    if plan == Plan::RollingUpgrade {
        options.protocol = OLD_PROTOCOL;
    }
    let normal_latency = options.max_latency;
    run_with_client(&options, move |hosts, faults| {
        drive(scenario, seed, plan, hosts, faults, normal_latency)
    })
    .map_err(|error| ScenarioFailure {
        scenario,
        seed,
        error,
    })
}

async fn drive(
    scenario: &'static str,
    seed: u64,
    plan: Plan,
    hosts: Vec<String>,
    faults: Faults,
    normal_latency: Duration,
) -> Result<Report, ScenarioError> {
    let client = &SimClient::new(CALL_DEADLINE);
    let mut notes = Vec::new();

    tracing::info!(seed, "phase: elect, start writers, a reader and watchers");
    agreed_leader(client, &hosts, None, ELECTION_BOUND).await?;
    let stop = StopSignal::default();
    let goal = WatchGoal::default();
    let watchers = (0..WATCHERS).map(|i| {
        let watcher = Watcher::new(
            &format!("watcher-{i}"),
            client,
            &hosts,
            watcher_options(),
            goal.clone(),
            rng(seed, 400 + i),
        );
        watcher.run()
    });
    let writers = (0..WRITERS).map(|i| {
        let name = format!("writer-{i}");
        let stop = stop.clone();
        let hosts = &hosts;
        let options = WriterOptions {
            min_pause: PAUSE.0,
            max_pause: PAUSE.1,
            deletes: true,
        };
        async move { write_until(client, &name, hosts, options, stop, rng(seed, 100 + i)).await }
    });
    let reader = read_until(client, &hosts, PAUSE, stop.clone(), rng(seed, 200));
    let script = async {
        let (hosts, rng, notes) = (&hosts, rng(seed, 300), &mut notes);
        let script = match plan {
            Plan::Faults => faults_script(client, hosts, &faults, normal_latency, rng, notes).await,
            Plan::RollingUpgrade => {
                upgrade_script(client, hosts, &faults, normal_latency, rng, notes).await
            }
        };
        stop.stop();
        script
    };
    let workload_then_fence = async {
        let (isolations, (), ()) = tokio::join!(
            script,
            async {
                futures::future::join_all(writers).await;
            },
            reader
        );
        let fence = match isolations {
            Ok(isolations) => write_acked(client, &hosts[0], "fence", CONVERGE_BOUND)
                .await
                .map(|fence| (isolations, fence.acked_revision().unwrap_or(0))),
            Err(error) => Err(error),
        };
        // Without a fence, the watchers stop at once.
        let target = fence.as_ref().map(|(_, target)| *target).unwrap_or(0);
        goal.set(target, CONVERGE_BOUND);
        fence
    };
    let (logs, fence) = tokio::join!(futures::future::join_all(watchers), workload_then_fence);
    let (isolations, target) = fence?;
    watchers_caught_up(&logs, target, CONVERGE_BOUND)?;

    tracing::info!(seed, "phase: read every replica");
    let views = final_views(client, &hosts, CONVERGE_BOUND).await?;
    let mut history = client.take_history();
    history.final_views = views;
    history.watches = logs;

    let linearizability = judge(&history, &isolations)?;
    notes.push(linearizability.note());
    notes.push(describe(&history, hosts.len()));
    Ok(Report {
        scenario,
        seed,
        notes,
        elapsed: now(),
        history_hash: history.fingerprint(),
        relists: history.watches.iter().map(WatchLog::relists).sum(),
    })
}

/// One line for the run's notes: what the workload did.
fn describe(history: &History, replicas: usize) -> String {
    let count = |at: fn(&ReadAt) -> bool| {
        let reads = || history.reads.iter().filter(|r| at(&r.at));
        let served = reads()
            .filter(|r| matches!(r.outcome, ReadOutcome::Served(_)))
            .count();
        format!("{served}/{}", reads().count())
    };
    let conditional = || {
        history
            .writes
            .iter()
            .filter(|w| matches!(w.op, WriteOp::UpdateIf { .. }))
    };
    let conflicts = conditional()
        .filter(|w| matches!(w.outcome, WriteOutcome::Rejected { status: 409, .. }))
        .count();
    let deletes = history.acked().filter(|w| w.op == WriteOp::Delete).count();
    let pages: usize = history.lists.iter().map(|l| l.pages.len()).sum();
    let events: usize = history.watches.iter().map(WatchLog::events).sum();
    format!(
        "{} of {} writes acknowledged ({} conditional, {conflicts} of them 409; {deletes} \
         deletes acknowledged); reads served/sent: quorum {}, any {}, not-older-than {}; {} paged \
         lists ({pages} pages); {events} watch events; every acknowledged write durable and \
         identical on {replicas} replicas",
        history.acked().count(),
        history.writes.len(),
        conditional().count(),
        count(|at| *at == ReadAt::Quorum),
        count(|at| *at == ReadAt::Any),
        count(|at| matches!(at, ReadAt::NotOlderThan(_))),
        history.lists.len(),
    )
}
