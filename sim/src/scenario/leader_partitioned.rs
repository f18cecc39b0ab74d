//! Scenario `leader_partitioned_writes_resume_on_majority` (R-HA-011, R-HA-013, R-HA-014
//! partial): three replicas; a client writes and records acknowledgements; the leader is cut off
//! from both others; a new leader is elected and writes through the majority succeed within a
//! bound of virtual time; writes sent to the isolated old leader are never acknowledged; after
//! the heal, every acknowledged write is served with its revision by a quorum read on every
//! replica, no write the API rejected is served anywhere, and the replicas agree on every key.
//! A quorum read on the isolated replica during the partition must not serve stale data, and no
//! quorum read anywhere may miss a write acknowledged before it began (R-HA-004, R-HA-005).

use std::time::Duration;

use crate::client::SimClient;
use crate::client::now;
use crate::cluster::ClusterOptions;
use crate::cluster::replica_host;
use crate::history::WriteOutcome;
use crate::scenario::Report;
use crate::scenario::ScenarioError;
use crate::scenario::ScenarioFailure;
use crate::scenario::phases::agreed_leader;
use crate::scenario::phases::final_views;
use crate::scenario::phases::write_acked;
use crate::scenario::runner::run_with_client;
use crate::scenario::verdict::Isolation;
use crate::scenario::verdict::judge;
use apiary_node::error::error_chain;

/// The scenario's name, as its test is named.
pub const LEADER_PARTITIONED: &str = "leader_partitioned_writes_resume_on_majority";

/// How long the first election may take.
const ELECTION_BOUND: Duration = Duration::from_secs(10);
/// How long after the partition a write through the majority must be acknowledged: election
/// timeouts (at most 1 s) plus a few request rounds, with room to spare.
const RESUME_BOUND: Duration = Duration::from_secs(8);
/// How long after the heal the final reads may take.
const CONVERGE_BOUND: Duration = Duration::from_secs(15);
/// A client call's deadline: shorter than the replica's own request timeout, so that the
/// client gives up on an isolated replica before the replica answers.
const CALL_DEADLINE: Duration = Duration::from_secs(2);
/// Acknowledged writes before the partition, and through the majority during it.
const WRITES_PER_PHASE: usize = 4;
/// Writes sent to the isolated old leader.
const ISOLATED_WRITES: usize = 2;

/// Runs the scenario with `seed`.
pub fn leader_partitioned_writes_resume_on_majority(seed: u64) -> Result<Report, ScenarioFailure> {
    run(seed).map_err(|error| ScenarioFailure {
        scenario: LEADER_PARTITIONED,
        seed,
        error,
    })
}

fn run(seed: u64) -> Result<Report, ScenarioError> {
    run_with_client(&ClusterOptions::new(seed), move |hosts, _faults| {
        drive(seed, hosts)
    })
}

async fn drive(seed: u64, hosts: Vec<String>) -> Result<Report, ScenarioError> {
    let client = SimClient::new(CALL_DEADLINE);
    let mut notes = Vec::new();

    tracing::info!(seed, "phase: elect and write through every replica");
    let old_leader = agreed_leader(&client, &hosts, None, ELECTION_BOUND).await?;
    for (i, host) in hosts.iter().cycle().take(WRITES_PER_PHASE).enumerate() {
        write_acked(&client, host, &format!("before-{i}"), ELECTION_BOUND).await?;
    }
    let isolated = replica_host(old_leader);
    let majority: Vec<String> = hosts.iter().filter(|h| **h != isolated).cloned().collect();
    notes.push(format!("leader before the partition: {isolated}"));

    tracing::info!(seed, %isolated, "phase: partition the leader from both others");
    for other in &majority {
        turmoil::partition(isolated.as_str(), other.as_str());
    }
    let partitioned_at = now();
    let first = &majority[0];
    write_acked(&client, first, "majority-0", RESUME_BOUND).await?;
    let resumed_after = now().saturating_sub(partitioned_at);
    if resumed_after > RESUME_BOUND {
        // The retry loop only gives up after a failed attempt; an attempt that began in time
        // but was acknowledged late still misses the bound.
        return Err(ScenarioError::Stuck {
            phase: "resuming writes on the majority".to_owned(),
            bound: RESUME_BOUND,
            last: format!("first acknowledgement {resumed_after:?} after the partition"),
        });
    }
    notes.push(format!(
        "writes resumed {resumed_after:?} after the partition"
    ));
    let new_leader = agreed_leader(&client, &majority, Some(old_leader), RESUME_BOUND).await?;
    notes.push(format!(
        "leader of the majority: {}",
        replica_host(new_leader)
    ));
    let mut newest = None;
    for (i, host) in majority.iter().cycle().take(WRITES_PER_PHASE).enumerate() {
        let key = format!("majority-{}", i + 1);
        newest = Some(write_acked(&client, host, &key, RESUME_BOUND).await?);
    }
    // R-HA-005: the isolated replica cannot confirm a quorum, so a "Most Recent" read there must
    // fail or wait, never serve the state before the majority's writes (checked by
    // `reads_see_acked_writes`).
    if let Some(newest) = newest {
        let probe = match client.read(&isolated, &newest.key).await {
            Ok(served) => format!("served {served:?}"),
            Err(error) => format!("failed: {}", error_chain(&error)),
        };
        notes.push(format!(
            "quorum read of {} on the isolated {isolated}: {probe}",
            newest.key
        ));
    }
    for i in 0..ISOLATED_WRITES {
        let value = format!("isolated-{i} via {isolated}");
        let record = client
            .create(&isolated, &format!("isolated-{i}"), &value)
            .await;
        notes.push(format!("{record}"));
    }

    tracing::info!(seed, "phase: heal and read every replica");
    let healed_at = now();
    for other in &majority {
        turmoil::repair(isolated.as_str(), other.as_str());
    }
    let views = final_views(&client, &hosts, CONVERGE_BOUND).await?;
    let mut history = client.take_history();
    history.final_views = views;

    let linearizability = judge(
        &history,
        &[Isolation {
            replica: isolated.clone(),
            from: partitioned_at,
            until: healed_at,
        }],
    )?;
    notes.push(linearizability.note());
    let acked = history.acked().count();
    let rejected = history
        .writes
        .iter()
        .filter(|w| matches!(w.outcome, WriteOutcome::Rejected { .. }))
        .count();
    notes.push(format!(
        "{acked} of {} writes acknowledged ({rejected} rejected, the rest unknown); every \
         acknowledged one durable and identical on {} replicas",
        history.writes.len(),
        hosts.len()
    ));
    Ok(Report {
        scenario: LEADER_PARTITIONED,
        seed,
        notes,
        elapsed: now(),
        history_hash: history.fingerprint(),
        relists: 0,
    })
}
