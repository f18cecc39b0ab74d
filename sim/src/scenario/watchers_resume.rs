//! Scenario `watchers_resume_across_partition_and_crash` (R-HA-010, R-HA-014, R-RES-175,
//! R-RES-229, R-RES-232): three replicas; two writers create, update and delete ConfigMaps
//! through random replicas; three watchers, starting one after another (during the partition
//! and about when it heals), list, then watch with bookmarks, switching replicas every few seconds and
//! whenever their stream goes silent. Meanwhile the leader is cut off
//! from everyone (the other replicas and the clients) and healed, then the leader's host
//! crashes and restarts. Finally a fence write is acknowledged and every watcher must reach
//! its revision; then every watcher's log is checked for the six watch guarantees (ordered,
//! unique, atomic, reliable, resumable, bookmarkable) against the writes and the other
//! watchers.
//!
//! Its variant `watchers_relist_after_compaction` (R-RES-072, R-RES-176, R-RES-231)
//! runs the same with replicas that keep only [`SHORT_HISTORY`] of history, and the first
//! watcher stays away for [`AWAY`] after each deliberate switch, as a paused client would: it
//! (and any watcher whose stream went silent long enough, its replica cut off or crashed)
//! resumes from a revision already compacted, gets a 410, lists again and watches on; the six
//! guarantees still hold, each relist starting afresh.
//!
//! Its variant `watchers_resume_after_server_timeouts` (R-RES-175) runs the same with
//! replicas whose shortest server-side watch timeout ([`SHORT_WATCH_TIMEOUT`]) is shorter than
//! a watcher's longest session: watches (none sends `timeoutSeconds`) also end because the
//! server's randomised timeout passed, and the watchers resume from there.

use std::time::Duration;

use crate::client::SimClient;
use crate::client::now;
use crate::cluster::ClusterOptions;
use crate::cluster::replica_host;
use crate::fault::Faults;
use crate::fault::HostFault;
use crate::scenario::Report;
use crate::scenario::ScenarioError;
use crate::scenario::ScenarioFailure;
use crate::scenario::phases::agreed_leader;
use crate::scenario::phases::final_views;
use crate::scenario::phases::watchers_caught_up;
use crate::scenario::phases::write_acked;
use crate::scenario::runner::CLIENT_HOST;
use crate::scenario::runner::actor_rng as rng;
use crate::scenario::runner::run_with_client;
use crate::scenario::verdict::judge;
use crate::scenario::workload::StopSignal;
use crate::scenario::workload::WriterOptions;
use crate::scenario::workload::write_until;
use crate::watch::SERVER_ENDED;
use crate::watch::WatchGoal;
use crate::watch::Watcher;
use crate::watch::WatcherOptions;
use crate::watch_history::WatchEntry;
use crate::watch_history::WatchLog;

/// The scenario's name, as its test is named.
pub const WATCHERS_RESUME: &str = "watchers_resume_across_partition_and_crash";
/// The short-history variant's name, as its test is named.
pub const WATCHERS_RELIST: &str = "watchers_relist_after_compaction";
/// The server-timeout variant's name, as its test is named.
pub const WATCHERS_TIME_OUT: &str = "watchers_resume_after_server_timeouts";

/// The server-timeout variant's `--min-request-timeout`: a watch ends after one to two
/// seconds, within the watchers' sessions of one to four.
const SHORT_WATCH_TIMEOUT: Duration = Duration::from_secs(1);

/// The variant's `--watch-history`: shorter than the silence after which a watcher leaves its
/// replica (`idle`), so a watcher cut off by the partition or the crash resumes from a revision
/// the leader has compacted meanwhile (the compactor lags by up to a second more).
const SHORT_HISTORY: Duration = Duration::from_secs(2);
/// How long the variant's first watcher stays away after a deliberate switch: the history and
/// two compactor samples, so that the leader has compacted past the revision it resumes from
/// whenever the writers moved the revision meanwhile.
const AWAY: Duration = Duration::from_secs(4);

/// How long the first election may take.
const ELECTION_BOUND: Duration = Duration::from_secs(10);
/// How long the fence write, and the watchers' catching up to it, may take.
const CONVERGE_BOUND: Duration = Duration::from_secs(15);
/// A client call's deadline.
const CALL_DEADLINE: Duration = Duration::from_secs(2);
/// Writes before the first fault, the partition's length, the pause before the crash, the
/// crashed host's downtime, and writes after the restart.
const CALM: Duration = Duration::from_secs(2);
const PARTITIONED: Duration = Duration::from_secs(3);
const DOWN: Duration = Duration::from_secs(3);
const WATCHERS: u64 = 3;
/// Between two watchers' starts: the second starts during the partition, the third about when
/// it heals.
const WATCHER_STAGGER: Duration = Duration::from_millis(2_500);
const WRITERS: u64 = 2;

fn watcher_options(away: Duration) -> WatcherOptions {
    WatcherOptions {
        // Three bookmark intervals: a healthy quiet stream is never taken for a dead one.
        idle: Duration::from_secs(3),
        min_session: Duration::from_secs(1),
        max_session: Duration::from_secs(4),
        open_deadline: CALL_DEADLINE,
        away,
    }
}

fn writer_options() -> WriterOptions {
    WriterOptions {
        min_pause: Duration::from_millis(50),
        max_pause: Duration::from_millis(250),
        deletes: true,
    }
}

/// Runs the scenario with `seed`.
pub fn watchers_resume_across_partition_and_crash(seed: u64) -> Result<Report, ScenarioFailure> {
    run(WATCHERS_RESUME, &ClusterOptions::new(seed), Duration::ZERO)
}

/// Runs the short-history variant with `seed`.
pub fn watchers_relist_after_compaction(seed: u64) -> Result<Report, ScenarioFailure> {
    let options = ClusterOptions {
        watch_history: SHORT_HISTORY,
        ..ClusterOptions::new(seed)
    };
    run(WATCHERS_RELIST, &options, AWAY)
}

/// Runs the server-timeout variant with `seed`.
pub fn watchers_resume_after_server_timeouts(seed: u64) -> Result<Report, ScenarioFailure> {
    let options = ClusterOptions {
        min_request_timeout: SHORT_WATCH_TIMEOUT,
        ..ClusterOptions::new(seed)
    };
    run(WATCHERS_TIME_OUT, &options, Duration::ZERO)
}

/// Runs `scenario` in a cluster built from `options`; the first watcher stays `away` after
/// each deliberate switch.
fn run(
    scenario: &'static str,
    options: &ClusterOptions,
    away: Duration,
) -> Result<Report, ScenarioFailure> {
    let seed = options.seed;
    run_with_client(options, move |hosts, faults| {
        drive(scenario, seed, away, hosts, faults)
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
    away: Duration,
    hosts: Vec<String>,
    faults: Faults,
) -> Result<Report, ScenarioError> {
    let client = &SimClient::new(CALL_DEADLINE);
    let mut notes = Vec::new();

    tracing::info!(seed, "phase: elect, start watchers and writers");
    agreed_leader(client, &hosts, None, ELECTION_BOUND).await?;
    let goal = WatchGoal::default();
    let stop = StopSignal::default();
    let watchers = (0..WATCHERS).map(|i| {
        let name = format!("watcher-{i}");
        let away = if i == 0 { away } else { Duration::ZERO };
        let watcher = Watcher::new(
            &name,
            client,
            &hosts,
            watcher_options(away),
            goal.clone(),
            rng(seed, i),
        );
        let start = WATCHER_STAGGER * u32::try_from(i).unwrap_or(0);
        async move {
            tokio::time::sleep(start).await;
            watcher.run().await
        }
    });
    let writers = (0..WRITERS).map(|i| {
        let name = format!("writer-{i}");
        let stop = stop.clone();
        let hosts = &hosts;
        async move {
            write_until(
                client,
                &name,
                hosts,
                writer_options(),
                stop,
                rng(seed, 100 + i),
            )
            .await;
        }
    });
    let faults_then_fence = async {
        let script = faults_script(client, &hosts, &faults, &mut notes).await;
        stop.stop();
        script
    };
    let writes_then_goal = async {
        let (script, ()) = tokio::join!(faults_then_fence, async {
            futures::future::join_all(writers).await;
        });
        let fence = match script {
            Ok(()) => write_acked(client, &hosts[0], "fence", CONVERGE_BOUND).await,
            Err(error) => Err(error),
        };
        // Without a fence, the watchers stop at once.
        let target = fence.as_ref().ok().and_then(|fence| fence.acked_revision());
        goal.set(target.unwrap_or(0), CONVERGE_BOUND);
        fence.map(|_| target.unwrap_or(0))
    };
    let (logs, target) = tokio::join!(futures::future::join_all(watchers), writes_then_goal);
    let target = target?;

    tracing::info!(seed, target, "phase: check the watchers");
    watchers_caught_up(&logs, target, CONVERGE_BOUND)?;
    let mut relists = 0;
    for log in &logs {
        relists += log.relists();
        notes.push(describe(log));
    }
    tracing::info!(seed, "phase: read every replica");
    let views = final_views(client, &hosts, CONVERGE_BOUND).await?;
    let mut history = client.take_history();
    history.final_views = views;
    history.watches = logs;
    let linearizability = judge(&history, &[])?;
    notes.push(linearizability.note());
    notes.push(format!(
        "{} of {} writes acknowledged, up to revision {target}",
        history.acked().count(),
        history.writes.len()
    ));
    Ok(Report {
        scenario,
        seed,
        notes,
        elapsed: now(),
        history_hash: history.fingerprint(),
        relists,
    })
}

/// Partitions the leader from every host, heals, then crashes the (new) leader's host and
/// restarts it, with calm stretches between.
async fn faults_script(
    client: &SimClient,
    hosts: &[String],
    faults: &Faults,
    notes: &mut Vec<String>,
) -> Result<(), ScenarioError> {
    tokio::time::sleep(CALM).await;
    let leader = replica_host(agreed_leader(client, hosts, None, ELECTION_BOUND).await?);
    tracing::info!(%leader, "phase: partition the leader from every host");
    let others: Vec<&str> = hosts
        .iter()
        .map(String::as_str)
        .filter(|h| *h != leader)
        .chain([CLIENT_HOST])
        .collect();
    for other in &others {
        turmoil::partition(leader.as_str(), *other);
    }
    notes.push(format!("partitioned {leader} at {:?}", now()));
    tokio::time::sleep(PARTITIONED).await;
    for other in &others {
        turmoil::repair(leader.as_str(), *other);
    }

    tokio::time::sleep(CALM).await;
    let leader = replica_host(agreed_leader(client, hosts, None, ELECTION_BOUND).await?);
    tracing::info!(%leader, "phase: crash the leader's host, restart it");
    faults.inject(HostFault::Crash(leader.clone())).await;
    notes.push(format!("crashed {leader} at {:?}", now()));
    tokio::time::sleep(DOWN).await;
    faults.inject(HostFault::Restart(leader.clone())).await;
    tokio::time::sleep(CALM).await;
    Ok(())
}

/// One line about what a watcher did.
fn describe(log: &WatchLog) -> String {
    let mut replicas = std::collections::BTreeSet::new();
    let (mut streams, mut bookmarks, mut server_ended) = (0, 0, 0);
    for entry in &log.entries {
        match entry {
            WatchEntry::Opened { replica, .. } => {
                streams += 1;
                replicas.insert(replica.as_str());
            }
            WatchEntry::Bookmark { .. } => bookmarks += 1,
            WatchEntry::Closed { reason, .. } if reason == SERVER_ENDED => server_ended += 1,
            WatchEntry::Listed { .. }
            | WatchEntry::Event { .. }
            | WatchEntry::Gone { .. }
            | WatchEntry::Closed { .. } => {}
        }
    }
    format!(
        "{}: {} events, {bookmarks} bookmarks, {streams} streams on {replicas:?} \
         ({server_ended} ended by the server), {} relists after a 410, up to {:?}",
        log.watcher,
        log.events(),
        log.relists(),
        log.progress()
    )
}
