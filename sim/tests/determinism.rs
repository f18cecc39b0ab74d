//! R-HA-013: a seed replays the whole run bit-exactly — every event the replicas and openraft
//! log, at the same virtual times, the same history and the same end time — and another seed
//! gives another run.

use apiary_sim::scenario;
use apiary_sim::scenario::Report;
use apiary_sim::trace;
use apiary_sim::trace::TraceDigest;

fn run(scenario: scenario::ScenarioFn, seed: u64) -> (Report, TraceDigest) {
    let (report, digest) = trace::record(|| scenario(seed));
    match report {
        Ok(report) => (report, digest),
        Err(failure) => panic!("{failure}"),
    }
}

fn assert_replays(scenario: scenario::ScenarioFn, seed: u64, other_seed: u64) -> Report {
    let (first, first_trace) = run(scenario, seed);
    let (again, again_trace) = run(scenario, seed);
    println!("seed {seed}: {first_trace}, ended at {:?}", first.elapsed);
    assert!(
        first_trace.events > 100,
        "the trace records the run: {first_trace}"
    );
    assert_eq!(
        first_trace, again_trace,
        "seed {seed} replays every logged event (tokio must be built with --cfg tokio_unstable: \
         .cargo/config.toml sets it, and a RUSTFLAGS variable replaces it; see sim/README.md)"
    );
    assert_eq!(
        first, again,
        "seed {seed} replays the history, notes and end time"
    );
    let (other, other_trace) = run(scenario, other_seed);
    println!(
        "seed {other_seed}: {other_trace}, ended at {:?}",
        other.elapsed
    );
    assert_ne!(
        first_trace.hash, other_trace.hash,
        "another seed, another run"
    );
    assert_ne!(first.history_hash, other.history_hash);
    first
}

// R-HA-013: watches that reach the server's randomised timeout (no `timeoutSeconds`), whose
// length each replica draws from its seeded randomness as it draws uids and generated names,
// replay exactly; the run really had the server end streams.
#[test]
fn server_watch_timeouts_replay_bit_exactly() {
    let report = assert_replays(scenario::watchers_resume_after_server_timeouts, 21, 22);
    let ended: u64 = report
        .notes
        .iter()
        .filter_map(|note| note.split_once(" ended by the server)"))
        .filter_map(|(before, _)| before.rsplit_once('(')?.1.parse::<u64>().ok())
        .sum();
    assert!(
        ended > 0,
        "no watch reached its server-side timeout: {:?}",
        report.notes
    );
}

// R-HA-013: the partition scenario (elections, forwarding, read index) replays exactly.
#[test]
fn leader_partitioned_replays_bit_exactly() {
    assert_replays(scenario::leader_partitioned_writes_resume_on_majority, 3, 4);
}

// R-HA-013: the crash scenario (power loss, log recovery, catch-up) replays exactly.
#[test]
fn leader_crashed_replays_bit_exactly() {
    assert_replays(scenario::leader_crashed_restarts_and_catches_up, 5, 6);
}

// R-HA-013: five replicas, two crashed together and restarted, replay exactly.
#[test]
fn two_of_five_crashed_replays_bit_exactly() {
    assert_replays(scenario::two_of_five_crashed_restart_and_catch_up, 7, 8);
}

// R-HA-013: concurrent writers and watchers streaming across replica switches, a partition
// and a crash replay exactly.
#[test]
fn watchers_resume_replays_bit_exactly() {
    assert_replays(scenario::watchers_resume_across_partition_and_crash, 9, 10);
}

// R-HA-013: with a short history, the compactor's proposals, the 410s and the relists they
// force replay exactly too.
#[test]
fn watchers_relist_replays_bit_exactly() {
    assert_replays(scenario::watchers_relist_after_compaction, 11, 12);
}

// R-HA-013: seeded fault events on three replicas replay exactly. Seed 12 draws message loss,
// a clock skew and a leader crash among its events.
#[test]
fn mixed_faults_three_replicas_replay_bit_exactly() {
    assert_replays(scenario::mixed_faults_three_replicas, 12, 13);
}

// R-HA-013: the same on five replicas; seed 28 draws message loss, a clock skew and a leader
// crash too.
#[test]
fn mixed_faults_five_replicas_replay_bit_exactly() {
    assert_replays(scenario::mixed_faults_five_replicas, 28, 29);
}

// R-HA-013: replicas joining mid-run, removals (of the leader too), replacements and a fault
// among them replay exactly.
#[test]
fn membership_changes_replay_bit_exactly() {
    assert_replays(scenario::membership_changes, 17, 18);
}
