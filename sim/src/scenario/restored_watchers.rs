//! Scenario `watchers_relist_after_restore`: three replicas; two writers create, update and
//! delete ConfigMaps through random replicas while three watchers list and watch, switching
//! replicas. The writers stop, a backup is taken through the operating API
//! (`GET /apiary/v1/snapshot`, as `apiary snapshot save` does), every host goes down, its data
//! directory is replaced by the restore of that backup for a new cluster of the same hosts
//! (as `apiary snapshot restore --revision-floor` writes it, the floor [`FLOOR_LIFT`] above
//! the backup's revision), and the hosts come back. The restored cluster continues above the
//! floor; the writers write again; a fence write is acknowledged and every watcher must reach
//! its revision.
//!
//! Every watcher resumes from a revision below the floor, gets a 410, lists again and watches
//! on; the six watch guarantees and the linearizability of reads and writes hold across the
//! restore (nothing acknowledged was written after the backup, so nothing acknowledged is
//! lost), and the fence's revision is above the floor.

use std::time::Duration;

use crate::client::SimClient;
use crate::client::now;
use crate::cluster::ClusterOptions;
use crate::fault::BackupFile;
use crate::fault::Faults;
use crate::fault::HostFault;
use crate::scenario::Report;
use crate::scenario::ScenarioError;
use crate::scenario::ScenarioFailure;
use crate::scenario::phases::agreed_leader;
use crate::scenario::phases::final_views;
use crate::scenario::phases::watchers_caught_up;
use crate::scenario::phases::write_acked;
use crate::scenario::runner::actor_rng as rng;
use crate::scenario::runner::run_with_client;
use crate::scenario::verdict::judge;
use crate::scenario::workload::StopSignal;
use crate::scenario::workload::WriterOptions;
use crate::scenario::workload::write_until;
use crate::watch::WatchGoal;
use crate::watch::Watcher;
use crate::watch::WatcherOptions;

/// The scenario's name, as its test is named.
pub const WATCHERS_RESTORED: &str = "watchers_relist_after_restore";

/// How far above the backup's revision the restored cluster's floor is set. Without a lift, a
/// watcher that had seen every event up to the backup's revision resumes there without a gap
/// (the floor itself stays readable) and need not relist.
const FLOOR_LIFT: u64 = 1000;
/// How long an election (the first, and the restored cluster's) may take.
const ELECTION_BOUND: Duration = Duration::from_secs(10);
/// How long the fence write, and the watchers' catching up to it, may take.
const CONVERGE_BOUND: Duration = Duration::from_secs(15);
/// A client call's deadline.
const CALL_DEADLINE: Duration = Duration::from_secs(2);
/// How long the writers write before the backup, and again after the restore.
const WRITING: Duration = Duration::from_secs(3);
/// How long the hosts stay down while their data directories are replaced.
const DOWN: Duration = Duration::from_secs(1);
const WATCHERS: u64 = 3;
const WRITERS: u64 = 2;

fn watcher_options() -> WatcherOptions {
    WatcherOptions {
        idle: Duration::from_secs(3),
        min_session: Duration::from_secs(1),
        max_session: Duration::from_secs(4),
        open_deadline: CALL_DEADLINE,
        away: Duration::ZERO,
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
pub fn watchers_relist_after_restore(seed: u64) -> Result<Report, ScenarioFailure> {
    run_with_client(&ClusterOptions::new(seed), move |hosts, faults| {
        drive(seed, hosts, faults)
    })
    .map_err(|error| ScenarioFailure {
        scenario: WATCHERS_RESTORED,
        seed,
        error,
    })
}

/// The writers write through random replicas for [`WRITING`], `round` numbering them apart.
async fn write_for(client: &SimClient, hosts: &[String], seed: u64, round: u64) {
    let stop = StopSignal::default();
    let writers = (0..WRITERS).map(|i| {
        let name = format!("writer-{round}-{i}");
        let stop = stop.clone();
        async move {
            write_until(
                client,
                &name,
                hosts,
                writer_options(),
                stop,
                rng(seed, 100 + 10 * round + i),
            )
            .await;
        }
    });
    let timer = async {
        tokio::time::sleep(WRITING).await;
        stop.stop();
    };
    tokio::join!(futures::future::join_all(writers), timer);
}

async fn drive(seed: u64, hosts: Vec<String>, faults: Faults) -> Result<Report, ScenarioError> {
    let client = &SimClient::new(CALL_DEADLINE);
    let mut notes = Vec::new();

    tracing::info!(seed, "phase: elect, start watchers and writers");
    agreed_leader(client, &hosts, None, ELECTION_BOUND).await?;
    let goal = WatchGoal::default();
    let watchers = (0..WATCHERS).map(|i| {
        let watcher = Watcher::new(
            &format!("watcher-{i}"),
            client,
            &hosts,
            watcher_options(),
            goal.clone(),
            rng(seed, i),
        );
        async move { watcher.run().await }
    });
    let script = async {
        let restored = backup_and_restore(client, &hosts, &faults, seed, &mut notes).await;
        let fence = match restored {
            Ok(floor) => write_acked(client, &hosts[0], "fence", CONVERGE_BOUND)
                .await
                .map(|fence| (floor, fence.acked_revision().unwrap_or(0))),
            Err(error) => Err(error),
        };
        goal.set(
            fence.as_ref().map_or(0, |(_, target)| *target),
            CONVERGE_BOUND,
        );
        fence
    };
    let (logs, fence) = tokio::join!(futures::future::join_all(watchers), script);
    let (floor, target) = fence?;
    if target <= floor {
        return Err(ScenarioError::Simulation(format!(
            "the fence got revision {target}, not above the restored floor {floor}"
        )));
    }

    tracing::info!(seed, target, "phase: check the watchers");
    watchers_caught_up(&logs, target, CONVERGE_BOUND)?;
    let mut relists = 0;
    for log in &logs {
        relists += log.relists();
        notes.push(format!(
            "{}: {} events, {} relists after a 410",
            log.watcher,
            log.events(),
            log.relists()
        ));
    }
    let views = final_views(client, &hosts, CONVERGE_BOUND).await?;
    let mut history = client.take_history();
    history.final_views = views;
    history.watches = logs;
    let linearizability = judge(&history, &[])?;
    notes.push(linearizability.note());
    Ok(Report {
        scenario: WATCHERS_RESTORED,
        seed,
        notes,
        elapsed: now(),
        history_hash: history.fingerprint(),
        relists,
    })
}

/// Writes, takes a backup, restores every host from it, writes again; the restored floor.
async fn backup_and_restore(
    client: &SimClient,
    hosts: &[String],
    faults: &Faults,
    seed: u64,
    notes: &mut Vec<String>,
) -> Result<u64, ScenarioError> {
    write_for(client, hosts, seed, 0).await;
    tracing::info!(seed, "phase: take a backup");
    let backup = client
        .backup(&hosts[0])
        .await
        .map_err(|e| ScenarioError::Stuck {
            phase: "taking a backup".to_owned(),
            bound: CALL_DEADLINE,
            last: e.to_string(),
        })?;
    let revision = apiary_raft::state_machine::Backup::decode(&backup)
        .map(|b| b.info.revision)
        .map_err(|e| ScenarioError::Simulation(format!("the backup does not decode: {e}")))?;
    notes.push(format!(
        "backup of {} bytes at revision {revision}, taken at {:?}",
        backup.len(),
        now()
    ));
    tracing::info!(seed, revision, "phase: restore every host from the backup");
    let members: Vec<_> = (1..=u64::try_from(hosts.len()).unwrap_or(0)).collect();
    for host in hosts {
        faults.inject(HostFault::Crash(host.clone())).await;
    }
    for host in hosts {
        faults
            .inject(HostFault::Restore {
                host: host.clone(),
                backup: BackupFile(backup.clone()),
                members: members.clone(),
                revision_floor: revision + FLOOR_LIFT,
            })
            .await;
    }
    tokio::time::sleep(DOWN).await;
    for host in hosts {
        faults.inject(HostFault::Restart(host.clone())).await;
    }
    agreed_leader(client, hosts, None, ELECTION_BOUND).await?;
    write_for(client, hosts, seed, 1).await;
    Ok(revision + FLOOR_LIFT)
}
