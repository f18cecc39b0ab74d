//! Why a scenario run failed, and the failure report that tells how to replay it.

use std::fmt;

use crate::check::Violation;
use crate::cluster::ClusterError;
use crate::scenario::reproduce_command;

/// What went wrong in a run.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The cluster could not be built.
    #[error("building the cluster failed")]
    Cluster(#[from] ClusterError),
    /// The simulation itself failed: a host's software returned an error, or the run exceeded
    /// its virtual-time budget.
    #[error("the simulation failed: {0}")]
    Simulation(String),
    /// A phase did not reach its goal within its virtual-time bound (a liveness failure).
    #[error("{phase} did not finish within {bound:?}: {last}")]
    Stuck {
        /// The phase.
        phase: String,
        /// The bound.
        bound: std::time::Duration,
        /// The last error seen while trying.
        last: String,
    },
    /// The history broke guarantees (a safety failure).
    #[error("{} guarantee violation(s):\n{}", .0.len(), list(.0))]
    Violations(Vec<Violation>),
    /// The cluster's effective version broke its rule (it rose while a voter spoke an older
    /// protocol, or a replica held another value).
    #[error("the effective version {0}")]
    EffectiveVersion(String),
    /// The client finished without reporting (a bug in the scenario itself).
    #[error("the client ended without an outcome")]
    NoOutcome,
}

fn list(violations: &[Violation]) -> String {
    violations
        .iter()
        .map(|v| format!("  - {v}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A failed run: which scenario, which seed, what broke, and how to replay it.
#[derive(Debug)]
pub struct ScenarioFailure {
    /// The scenario's name.
    pub scenario: &'static str,
    /// The seed of the failed run.
    pub seed: u64,
    /// What broke.
    pub error: ScenarioError,
}

impl fmt::Display for ScenarioFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "scenario {} failed with seed {}: {}",
            self.scenario, self.seed, self.error
        )?;
        writeln!(
            f,
            "REPRODUCE WITH: {}",
            reproduce_command(self.scenario, self.seed)
        )?;
        write!(
            f,
            "           or: cargo run -p apiary-sim -- --scenario {} --reproduce {}   (writes the \
             history and trace to a file)",
            self.scenario, self.seed
        )
    }
}

impl std::error::Error for ScenarioFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}
