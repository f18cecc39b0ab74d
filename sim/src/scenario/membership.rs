//! Scenario `membership_changes` (R-HA-011, R-HA-013, R-HA-014): three replicas to start; two
//! writers create and update ConfigMaps and a reader makes quorum reads, through random running
//! replicas, while the seed draws 2–4 membership changes, one at a time: add a replica (a new
//! host `replica-<id>` joins through the real join path), remove one (sometimes the leader;
//! through the real removal path, asked of a random member, which forwards it to the leader;
//! the removed replica keeps running and keeps being called), replace one (sometimes the
//! leader: add, wait until the new one is a voter, remove the old one, power it off). The
//! voters stay between three and five. One change may happen under an ordinary fault: the
//! leader cut off from the other replicas, or a random member's host crashed (restarted after
//! the change, unless the change removed it). At the end the final members agree on a leader,
//! each is read, and the history is checked: acknowledged writes durable, nothing acknowledged
//! by a cut-off replica, rejected writes absent, quorum reads see acknowledged writes (also those
//! served by removed replicas), the final members agree, linearizable.
//!
//! Scenario `membership_changes_mixed_versions` (R-HA-015) is the same with founders that
//! speak only peer protocol 1 (an older build) while every added replica speaks the current
//! one: replacing machines by newer builds. At the end every final member must hold the
//! effective version its voters allow: 1 while a founder is still a voter, else the current.

use std::time::Duration;

use apiary_raft::version::PROTOCOL_VERSION;
use apiary_raft::version::UNANNOUNCED_PROTOCOL_VERSION;
use rand::Rng;
use rand::rngs::StdRng;

use crate::client::SimClient;
use crate::client::now;
use crate::cluster::ClusterOptions;
use crate::fault::Faults;
use crate::scenario::Report;
use crate::scenario::ScenarioError;
use crate::scenario::ScenarioFailure;
use crate::scenario::members::Members;
use crate::scenario::membership_script::Script;
use crate::scenario::phases::agreed_leader;
use crate::scenario::phases::effective_reached;
use crate::scenario::phases::final_views;
use crate::scenario::runner::actor_rng as rng;
use crate::scenario::runner::run_with_client;
use crate::scenario::verdict::judge;
use crate::scenario::workload::HostPool;
use crate::scenario::workload::StopSignal;
use crate::scenario::workload::WriterOptions;
use crate::scenario::workload::write_until;

/// The scenario's name, as its test is named.
pub const MEMBERSHIP_CHANGES: &str = "membership_changes";
/// The mixed-versions variant's name, as its test is named.
pub const MEMBERSHIP_MIXED_VERSIONS: &str = "membership_changes_mixed_versions";

/// How long the first election, and the agreement on a leader, may take.
const ELECTION_BOUND: Duration = Duration::from_secs(10);
/// How long the final reads may take.
const CONVERGE_BOUND: Duration = Duration::from_secs(15);
/// A client call's deadline.
const CALL_DEADLINE: Duration = Duration::from_secs(2);
const WRITERS: u64 = 2;

/// Runs the scenario with `seed`.
pub fn membership_changes(seed: u64) -> Result<Report, ScenarioFailure> {
    run(MEMBERSHIP_CHANGES, ClusterOptions::new(seed))
}

/// Runs the mixed-versions variant with `seed`.
pub fn membership_changes_mixed_versions(seed: u64) -> Result<Report, ScenarioFailure> {
    let options = ClusterOptions {
        protocol: UNANNOUNCED_PROTOCOL_VERSION,
        ..ClusterOptions::new(seed)
    };
    run(MEMBERSHIP_MIXED_VERSIONS, options)
}

fn run(scenario: &'static str, options: ClusterOptions) -> Result<Report, ScenarioFailure> {
    let (seed, founders, founders_protocol) = (options.seed, options.replicas, options.protocol);
    run_with_client(&options, move |_, faults| {
        drive(scenario, seed, founders, founders_protocol, faults)
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
    founders: u64,
    founders_protocol: u32,
    faults: Faults,
) -> Result<Report, ScenarioError> {
    let client = &SimClient::new(CALL_DEADLINE);
    let members = &Members::new(1..=founders);

    tracing::info!(seed, "phase: elect, start writers and a reader");
    agreed_leader(client, &members.hosts(), None, ELECTION_BOUND).await?;
    let stop = StopSignal::default();
    let writers = (0..WRITERS).map(|i| {
        let name = format!("writer-{i}");
        let stop = stop.clone();
        let options = WriterOptions {
            min_pause: Duration::from_millis(50),
            max_pause: Duration::from_millis(250),
            deletes: false,
        };
        async move { write_until(client, &name, members, options, stop, rng(seed, 100 + i)).await }
    });
    let reader = read_until(client, members, stop.clone(), rng(seed, 200));
    let mut script = Script::new(client, members, &faults, founders, rng(seed, 300));
    let changes = async {
        let result = script.run().await;
        stop.stop();
        result
    };
    let (changed, (), ()) = tokio::join!(
        changes,
        async {
            futures::future::join_all(writers).await;
        },
        reader
    );
    changed?;

    tracing::info!(seed, "phase: read every final member");
    let hosts = members.hosts();
    let views = final_views(client, &hosts, CONVERGE_BOUND).await?;
    let voters = members.voters();
    let expected = if voters.iter().any(|id| *id <= founders) {
        founders_protocol
    } else {
        PROTOCOL_VERSION
    };
    effective_reached(client, &hosts, expected, CONVERGE_BOUND).await?;
    let mut history = client.take_history();
    history.final_views = views;

    let linearizability = judge(&history, &script.isolations)?;
    let mut notes = std::mem::take(&mut script.notes);
    notes.push(linearizability.note());
    notes.push(format!(
        "effective version {expected} with voters {voters:?}"
    ));
    notes.push(format!(
        "{} of {} writes acknowledged, {} quorum reads; every acknowledged write durable and \
         identical on the {} final members",
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

/// Makes quorum reads of keys already written, through random running replicas, until `stop`.
async fn read_until(client: &SimClient, members: &Members, stop: StopSignal, mut rng: StdRng) {
    while !stop.stopped() {
        let keys = client.written_keys();
        if !keys.is_empty() {
            let key = &keys[rng.random_range(0..keys.len())];
            let host = members.pick(&mut rng);
            // The history records the outcome; a failed read promises nothing.
            let _ = client.read(&host, key).await;
        }
        tokio::time::sleep(Duration::from_millis(rng.random_range(50..=250))).await;
    }
}
