//! Scenarios `mixed_faults_three_replicas` and `mixed_faults_five_replicas` (R-HA-011,
//! R-HA-013, R-HA-014): two writers create and update ConfigMaps and a reader makes quorum reads
//! of them, through random replicas, while the seed draws 3–6 fault events, one at a time, each
//! healed before the next: the leader cut off from the other replicas, a random replica cut off,
//! a random replica cut off in one direction only, slow links around a random replica, a random
//! replica's host crashed and restarted, the links around a random replica held and released.
//! Afterwards every replica is read and every checker of the history runs: acknowledged writes
//! durable, nothing acknowledged by a cut-off replica, rejected writes absent, quorum reads see
//! acknowledged writes, replicas agree, linearizable.
//!
//! The writers do not delete: `acked_writes_durable` and `reads_see_acked_writes` judge a key by
//! its newest acknowledged revision, which a delete's `Status` answer does not carry (the watch
//! scenarios cover deletes, `linearizable` with them).

use std::collections::BTreeMap;
use std::time::Duration;

use rand::Rng;
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::check::acked_writes_durable;
use crate::check::isolated_writes_not_acked;
use crate::check::linearizable;
use crate::check::reads_see_acked_writes;
use crate::check::rejected_writes_absent;
use crate::check::replicas_agree;
use crate::client::SimClient;
use crate::client::now;
use crate::cluster::ClusterOptions;
use crate::fault::Faults;
use crate::scenario::Report;
use crate::scenario::ScenarioError;
use crate::scenario::ScenarioFailure;
use crate::scenario::fault_script::faults_script;
use crate::scenario::phases::agreed_leader;
use crate::scenario::phases::final_view;
use crate::scenario::runner::run_with_client;
use crate::scenario::workload::StopSignal;
use crate::scenario::workload::WriterOptions;
use crate::scenario::workload::write_until;

/// The three-replica scenario's name, as its test is named.
pub const MIXED_FAULTS_3: &str = "mixed_faults_three_replicas";
/// The five-replica scenario's name, as its test is named.
pub const MIXED_FAULTS_5: &str = "mixed_faults_five_replicas";

/// How long the first election, and the agreement on a leader after each heal, may take.
const ELECTION_BOUND: Duration = Duration::from_secs(10);
/// How long the final reads may take.
const CONVERGE_BOUND: Duration = Duration::from_secs(15);
/// A client call's deadline.
const CALL_DEADLINE: Duration = Duration::from_secs(2);
const WRITERS: u64 = 2;

/// Runs the three-replica scenario with `seed`.
pub fn mixed_faults_three_replicas(seed: u64) -> Result<Report, ScenarioFailure> {
    run(MIXED_FAULTS_3, seed, 3)
}

/// Runs the five-replica scenario with `seed`.
pub fn mixed_faults_five_replicas(seed: u64) -> Result<Report, ScenarioFailure> {
    run(MIXED_FAULTS_5, seed, 5)
}

fn run(scenario: &'static str, seed: u64, replicas: u64) -> Result<Report, ScenarioFailure> {
    let options = ClusterOptions {
        replicas,
        ..ClusterOptions::new(seed)
    };
    let normal_latency = options.max_latency;
    run_with_client(&options, move |hosts, faults| {
        drive(scenario, seed, hosts, faults, normal_latency)
    })
    .map_err(|error| ScenarioFailure {
        scenario,
        seed,
        error,
    })
}

/// A generator for one actor of the run, derived from the seed.
fn rng(seed: u64, actor: u64) -> StdRng {
    StdRng::seed_from_u64(seed.wrapping_mul(1_000).wrapping_add(actor))
}

async fn drive(
    scenario: &'static str,
    seed: u64,
    hosts: Vec<String>,
    faults: Faults,
    normal_latency: Duration,
) -> Result<Report, ScenarioError> {
    let client = &SimClient::new(CALL_DEADLINE);
    let mut notes = Vec::new();

    tracing::info!(seed, "phase: elect, start writers and a reader");
    agreed_leader(client, &hosts, None, ELECTION_BOUND).await?;
    let stop = StopSignal::default();
    let writers = (0..WRITERS).map(|i| {
        let name = format!("writer-{i}");
        let stop = stop.clone();
        let hosts = &hosts;
        let options = WriterOptions {
            min_pause: Duration::from_millis(50),
            max_pause: Duration::from_millis(250),
            deletes: false,
        };
        async move { write_until(client, &name, hosts, options, stop, rng(seed, 100 + i)).await }
    });
    let reader = read_until(client, &hosts, stop.clone(), rng(seed, 200));
    let script = async {
        let script = faults_script(
            client,
            &hosts,
            &faults,
            normal_latency,
            rng(seed, 300),
            &mut notes,
        )
        .await;
        stop.stop();
        script
    };
    let (isolations, (), ()) = tokio::join!(
        script,
        async {
            futures::future::join_all(writers).await;
        },
        reader
    );
    let isolations = isolations?;

    tracing::info!(seed, "phase: read every replica");
    agreed_leader(client, &hosts, None, CONVERGE_BOUND).await?;
    let keys = client.written_keys();
    let mut views = BTreeMap::new();
    for host in &hosts {
        views.insert(
            host.clone(),
            final_view(client, host, &keys, CONVERGE_BOUND).await?,
        );
    }
    let mut history = client.take_history();
    history.final_views = views;

    let mut violations = acked_writes_durable(&history);
    for isolation in &isolations {
        violations.extend(isolated_writes_not_acked(
            &history,
            &isolation.replica,
            isolation.from,
            isolation.until,
        ));
    }
    violations.extend(replicas_agree(&history));
    violations.extend(rejected_writes_absent(&history));
    violations.extend(reads_see_acked_writes(&history));
    let linearizability = linearizable(&history);
    violations.extend(linearizability.violations.iter().cloned());
    if !violations.is_empty() {
        return Err(ScenarioError::Violations(violations));
    }
    notes.push(linearizability.note());
    notes.push(format!(
        "{} of {} writes acknowledged, {} quorum reads; every acknowledged write durable and \
         identical on {} replicas",
        history.acked().count(),
        history.writes.len(),
        history.reads.len(),
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

/// Makes quorum reads of keys already written, through random replicas, until `stop`.
async fn read_until(client: &SimClient, hosts: &[String], stop: StopSignal, mut rng: StdRng) {
    while !stop.stopped() {
        let keys = client.written_keys();
        if !keys.is_empty() {
            let key = &keys[rng.random_range(0..keys.len())];
            let host = &hosts[rng.random_range(0..hosts.len())];
            // The history records the outcome; a failed read promises nothing.
            let _ = client.read(host, key).await;
        }
        tokio::time::sleep(Duration::from_millis(rng.random_range(50..=250))).await;
    }
}
