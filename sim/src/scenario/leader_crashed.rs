//! Scenarios `leader_crashed_restarts_and_catches_up` and
//! `two_of_five_crashed_restart_and_catch_up` (R-HA-011, R-HA-013, R-HA-014 partial): three
//! (five) replicas; a client writes and records acknowledgements; the leader's host (and one
//! more, of five) crashes, losing what it had not synced, while writes are in flight; a new
//! leader is elected and writes through the survivors succeed within a bound of virtual
//! time; the crashed replicas restart on their disks, recover their logs and snapshots, rejoin and
//! catch up; then every acknowledged write is served with its revision by a quorum read on
//! every replica, no rejected write is served anywhere, and the replicas agree on every key.

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
use crate::scenario::phases::write_acked;
use crate::scenario::runner::run_with_client;
use crate::scenario::verdict::judge;

/// The three-replica scenario's name, as its test is named.
pub const LEADER_CRASHED: &str = "leader_crashed_restarts_and_catches_up";
/// The five-replica scenario's name, as its test is named.
pub const TWO_OF_FIVE_CRASHED: &str = "two_of_five_crashed_restart_and_catch_up";

/// How long the first election may take.
const ELECTION_BOUND: Duration = Duration::from_secs(10);
/// How long after the crash a write through a survivor must be acknowledged.
const RESUME_BOUND: Duration = Duration::from_secs(8);
/// How long after the restart the cluster may take to agree on a leader again and to serve
/// the final reads.
const CONVERGE_BOUND: Duration = Duration::from_secs(15);
/// A client call's deadline.
const CALL_DEADLINE: Duration = Duration::from_secs(2);
/// The crash comes this many milliseconds (at most) after the in-flight writes are sent.
const CRASH_WINDOW_MS: u64 = 12;
/// Acknowledged writes before the crash, and through the survivors after it.
const WRITES_PER_PHASE: usize = 4;

/// Runs the scenario with `seed`: three replicas, the leader crashes.
pub fn leader_crashed_restarts_and_catches_up(seed: u64) -> Result<Report, ScenarioFailure> {
    crash_and_restart(LEADER_CRASHED, seed, 3, 1)
}

/// Runs the five-replica variant with `seed`: the leader and one follower crash together.
pub fn two_of_five_crashed_restart_and_catch_up(seed: u64) -> Result<Report, ScenarioFailure> {
    crash_and_restart(TWO_OF_FIVE_CRASHED, seed, 5, 2)
}

fn crash_and_restart(
    scenario: &'static str,
    seed: u64,
    replicas: u64,
    crashes: usize,
) -> Result<Report, ScenarioFailure> {
    let options = ClusterOptions {
        replicas,
        ..ClusterOptions::new(seed)
    };
    run_with_client(&options, move |hosts, faults| {
        drive(scenario, seed, hosts, faults, crashes)
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
    hosts: Vec<String>,
    faults: Faults,
    crashes: usize,
) -> Result<Report, ScenarioError> {
    let client = &SimClient::new(CALL_DEADLINE);
    let mut notes = Vec::new();

    tracing::info!(seed, "phase: elect and write through every replica");
    let old_leader = agreed_leader(client, &hosts, None, ELECTION_BOUND).await?;
    for (i, host) in hosts.iter().cycle().take(WRITES_PER_PHASE).enumerate() {
        write_acked(client, host, &format!("before-{i}"), ELECTION_BOUND).await?;
    }
    // The leader, then the next hosts in id order (wrapping), until `crashes` are chosen.
    let leader_host = replica_host(old_leader);
    let start = hosts.iter().position(|h| *h == leader_host).unwrap_or(0);
    let crashed: Vec<String> = hosts
        .iter()
        .cycle()
        .skip(start)
        .take(crashes)
        .cloned()
        .collect();
    let survivors: Vec<String> = hosts
        .iter()
        .filter(|h| !crashed.contains(h))
        .cloned()
        .collect();
    notes.push(format!(
        "leader before the crash: {leader_host}; crashed: {crashed:?}"
    ));

    tracing::info!(
        seed,
        ?crashed,
        "phase: crash the leader (and more), write through the rest"
    );
    // Crash while writes are in flight, a few milliseconds in (the seed picks how many), so that
    // the leader may die between appending entries and syncing them.
    let crash_after = Duration::from_millis(seed % CRASH_WINDOW_MS);
    let in_flight = hosts.iter().map(|host| {
        let key = format!("in-flight-via-{host}");
        let value = format!("{key} {seed}");
        async move { client.create(host, &key, &value).await }
    });
    let crash = async {
        tokio::time::sleep(crash_after).await;
        for host in &crashed {
            faults.inject(HostFault::Crash(host.clone())).await;
        }
        now()
    };
    let (records, crashed_at) = tokio::join!(futures::future::join_all(in_flight), crash);
    let acked_in_flight = records
        .iter()
        .filter(|r| r.acked_revision().is_some())
        .count();
    notes.push(format!(
        "crashed {crash_after:?} into {} in-flight writes, {acked_in_flight} of them acknowledged",
        records.len()
    ));
    write_acked(client, &survivors[0], "survivors-0", RESUME_BOUND).await?;
    let resumed_after = now().saturating_sub(crashed_at);
    if resumed_after > RESUME_BOUND {
        return Err(ScenarioError::Stuck {
            phase: "resuming writes on the survivors".to_owned(),
            bound: RESUME_BOUND,
            last: format!("first acknowledgement {resumed_after:?} after the crash"),
        });
    }
    notes.push(format!("writes resumed {resumed_after:?} after the crash"));
    let new_leader = agreed_leader(client, &survivors, Some(old_leader), RESUME_BOUND).await?;
    notes.push(format!(
        "leader of the survivors: {}",
        replica_host(new_leader)
    ));
    for (i, host) in survivors.iter().cycle().take(WRITES_PER_PHASE).enumerate() {
        let key = format!("survivors-{}", i + 1);
        write_acked(client, host, &key, RESUME_BOUND).await?;
    }

    tracing::info!(
        seed,
        ?crashed,
        "phase: restart the crashed replicas, read every replica"
    );
    for host in &crashed {
        faults.inject(HostFault::Restart(host.clone())).await;
    }
    let views = final_views(client, &hosts, CONVERGE_BOUND).await?;
    let mut history = client.take_history();
    history.final_views = views;

    let linearizability = judge(&history, &[])?;
    notes.push(linearizability.note());
    notes.push(format!(
        "{} of {} writes acknowledged; every acknowledged one durable and identical on {} \
         replicas, the restarted ones included",
        history.acked().count(),
        history.writes.len(),
        hosts.len()
    ));
    Ok(Report {
        scenario,
        seed,
        notes,
        elapsed: now(),
        history_hash: history.fingerprint(),
        relists: 0,
    })
}
