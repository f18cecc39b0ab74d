//! Scenarios: a cluster, a client workload, faults at chosen moments, and the checkers run over
//! the recorded history. Each scenario is a function of a seed; a failure names the seed and the
//! command that replays it.

mod failure;
mod fault_script;
mod garbage_collection;
mod leader_crashed;
mod leader_isolated_mid_write;
mod leader_partitioned;
mod members;
mod membership;
mod membership_script;
mod mixed_faults;
mod namespace_deletion;
mod phases;
mod reader;
mod restored_watchers;
mod rolling_upgrade;
mod runner;
mod verdict;
mod watchers_resume;
mod workload;

use std::time::Duration;

pub use failure::ScenarioError;
pub use failure::ScenarioFailure;
pub use garbage_collection::GARBAGE_COLLECTION;
pub use garbage_collection::garbage_collection_under_faults;
pub use leader_crashed::LEADER_CRASHED;
pub use leader_crashed::TWO_OF_FIVE_CRASHED;
pub use leader_crashed::leader_crashed_restarts_and_catches_up;
pub use leader_crashed::two_of_five_crashed_restart_and_catch_up;
pub use leader_isolated_mid_write::LEADER_ISOLATED_MID_WRITE;
pub use leader_isolated_mid_write::TIMED_OUT_NOTE;
pub use leader_isolated_mid_write::TIMED_OUT_TOOK_EFFECT_NOTE;
pub use leader_isolated_mid_write::leader_isolated_mid_write_answers_unknown;
pub use leader_partitioned::LEADER_PARTITIONED;
pub use leader_partitioned::leader_partitioned_writes_resume_on_majority;
pub use membership::MEMBERSHIP_CHANGES;
pub use membership::MEMBERSHIP_MIXED_VERSIONS;
pub use membership::membership_changes;
pub use membership::membership_changes_mixed_versions;
pub use mixed_faults::MIXED_FAULTS_3;
pub use mixed_faults::MIXED_FAULTS_5;
pub use mixed_faults::ROLLING_UPGRADE;
pub use mixed_faults::mixed_faults_five_replicas;
pub use mixed_faults::mixed_faults_three_replicas;
pub use mixed_faults::rolling_upgrade_three_replicas;
pub use namespace_deletion::NAMESPACE_DELETION;
pub use namespace_deletion::namespace_deletion_under_faults;
pub use restored_watchers::WATCHERS_RESTORED;
pub use restored_watchers::watchers_relist_after_restore;
pub use watchers_resume::WATCHERS_RELIST;
pub use watchers_resume::WATCHERS_RESUME;
pub use watchers_resume::WATCHERS_TIME_OUT;
pub use watchers_resume::watchers_relist_after_compaction;
pub use watchers_resume::watchers_resume_across_partition_and_crash;
pub use watchers_resume::watchers_resume_after_server_timeouts;

/// The environment variable that pins a scenario run to one seed.
pub const SEED_ENV: &str = "APIARY_SIM_SEED";

/// What a passing run observed, for the test log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The scenario's name.
    pub scenario: &'static str,
    /// The seed it ran with.
    pub seed: u64,
    /// One line per notable observation (leaders, timings, counts).
    pub notes: Vec<String>,
    /// Virtual time the whole run took.
    pub elapsed: Duration,
    /// [`crate::history::History::fingerprint`] of the run's history.
    pub history_hash: u64,
    /// How often a watcher was told its revision was compacted (410) and listed again; 0 in
    /// scenarios without watchers.
    pub relists: u64,
}

/// The seeds to run: the one in [`SEED_ENV`] if set (an unparsable value is an error, so a typo
/// does not silently run the defaults), else `defaults`.
pub fn seeds(defaults: impl IntoIterator<Item = u64>) -> Result<Vec<u64>, String> {
    match std::env::var(SEED_ENV) {
        Ok(value) => value
            .trim()
            .parse()
            .map(|seed| vec![seed])
            .map_err(|_| format!("{SEED_ENV}={value:?} is not a u64")),
        Err(_) => Ok(defaults.into_iter().collect()),
    }
}

/// A scenario: runs with a seed, reports or fails.
pub type ScenarioFn = fn(u64) -> Result<Report, ScenarioFailure>;

/// Every scenario, by name (the name of its test in `tests/scenarios.rs`).
pub const ALL: &[(&str, ScenarioFn)] = &[
    (
        LEADER_PARTITIONED,
        leader_partitioned_writes_resume_on_majority,
    ),
    (LEADER_CRASHED, leader_crashed_restarts_and_catches_up),
    (
        TWO_OF_FIVE_CRASHED,
        two_of_five_crashed_restart_and_catch_up,
    ),
    (WATCHERS_RESUME, watchers_resume_across_partition_and_crash),
    (WATCHERS_RELIST, watchers_relist_after_compaction),
    (WATCHERS_TIME_OUT, watchers_resume_after_server_timeouts),
    (MIXED_FAULTS_3, mixed_faults_three_replicas),
    (MIXED_FAULTS_5, mixed_faults_five_replicas),
    (ROLLING_UPGRADE, rolling_upgrade_three_replicas),
    (GARBAGE_COLLECTION, garbage_collection_under_faults),
    (MEMBERSHIP_CHANGES, membership_changes),
    (MEMBERSHIP_MIXED_VERSIONS, membership_changes_mixed_versions),
    (
        LEADER_ISOLATED_MID_WRITE,
        leader_isolated_mid_write_answers_unknown,
    ),
    (NAMESPACE_DELETION, namespace_deletion_under_faults),
];

/// The scenario called `name`.
pub fn by_name(name: &str) -> Option<ScenarioFn> {
    ALL.iter().find(|(n, _)| *n == name).map(|(_, run)| *run)
}

/// The command that replays `scenario` with `seed`.
pub fn reproduce_command(scenario: &str, seed: u64) -> String {
    format!("{SEED_ENV}={seed} cargo test -p apiary-sim --test scenarios -- {scenario} --exact")
}
