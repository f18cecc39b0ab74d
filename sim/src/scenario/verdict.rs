//! How every scenario ends: the recorded history judged by every checker. A checker with nothing
//! to judge in a history (no watchers, no paged lists, no final views) finds nothing, so each
//! scenario runs them all and none can be forgotten.

use std::time::Duration;

use crate::check::Linearizability;
use crate::check::acked_writes_durable;
use crate::check::continue_consistent;
use crate::check::isolated_writes_not_acked;
use crate::check::linearizable;
use crate::check::local_reads_real;
use crate::check::read_your_writes;
use crate::check::reads_see_acked_writes;
use crate::check::rejected_writes_absent;
use crate::check::replicas_agree;
use crate::check::revisions_monotonic;
use crate::check::watch_guarantees;
use crate::history::History;
use crate::scenario::ScenarioError;

/// A replica cut off from every other replica, and when: no write it was sent meanwhile may be
/// acknowledged before the heal.
pub(crate) struct Isolation {
    /// The replica host.
    pub replica: String,
    /// When it was cut off.
    pub from: Duration,
    /// When it was healed.
    pub until: Duration,
}

/// Runs every checker over `history` (`isolated_writes_not_acked` once per isolation) and
/// fails with all their violations; on success returns the linearizability search's outcome,
/// whose note says how many keys it decided.
pub(crate) fn judge(
    history: &History,
    isolations: &[Isolation],
) -> Result<Linearizability, ScenarioError> {
    let mut violations = acked_writes_durable(history);
    for isolation in isolations {
        violations.extend(isolated_writes_not_acked(
            history,
            &isolation.replica,
            isolation.from,
            isolation.until,
        ));
    }
    violations.extend(replicas_agree(history));
    violations.extend(rejected_writes_absent(history));
    violations.extend(reads_see_acked_writes(history));
    violations.extend(revisions_monotonic(history));
    violations.extend(read_your_writes(history));
    violations.extend(local_reads_real(history));
    violations.extend(continue_consistent(history));
    violations.extend(watch_guarantees(history));
    let linearizability = linearizable(history);
    violations.extend(linearizability.violations.iter().cloned());
    if violations.is_empty() {
        Ok(linearizability)
    } else {
        Err(ScenarioError::Violations(violations))
    }
}
