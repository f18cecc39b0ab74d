//! Guarantee `watch_unique` (etcd robustness "unique"; R-HA-010, R-RES-175): a watcher is
//! delivered each change (key, revision) at most once, across all its resumes on any replica.

use std::collections::BTreeSet;

use crate::check::Violation;
use crate::check::watch_reference::events;
use crate::history::History;

const GUARANTEE: &str = "watch_unique";

/// The violations of `watch_unique`: each change delivered again to the same watcher.
pub fn watch_unique(history: &History) -> Vec<Violation> {
    let mut violations = Vec::new();
    for log in &history.watches {
        let mut seen = BTreeSet::new();
        for change in events(log) {
            if !seen.insert((change.revision, change.key.as_str())) {
                violations.push(Violation {
                    guarantee: GUARANTEE,
                    detail: format!("watcher {}: {change} delivered twice", log.watcher),
                });
            }
        }
    }
    violations
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::violation::assert_one_violation;
    use crate::check::watch_reference::testing::Log;
    use crate::check::watch_reference::testing::history;

    // R-RES-175: a resume from the last seen revision repeats nothing.
    #[test]
    fn holds_when_a_resume_repeats_nothing() {
        let log = Log::new()
            .listed(2)
            .opened("replica-1", 2)
            .added("a", 3)
            .closed()
            .opened("replica-2", 3)
            .added("b", 5);
        assert_eq!(watch_unique(&history(&[3, 5], vec![log])), vec![]);
    }

    // R-RES-175, R-HA-010: a replica that replays the change the watcher resumed from
    // duplicates it.
    #[test]
    fn a_duplicated_event_is_a_violation() {
        let log = Log::new()
            .listed(2)
            .opened("replica-1", 2)
            .added("a", 3)
            .closed()
            .opened("replica-2", 3)
            .added("a", 3)
            .added("b", 5);
        let violations = watch_unique(&history(&[3, 5], vec![log]));
        assert_one_violation(&violations, "a at 3");
    }
}
