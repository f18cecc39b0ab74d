//! Guarantee `watch_resumable` (etcd robustness "resumable"; R-RES-175, R-HA-010): a watch
//! opened from revision R — first after a list, or resumed on any replica after a stream
//! ended — starts with the first change after R: nothing at or before R, nothing known
//! skipped.

use crate::check::Violation;
use crate::check::watch_reference::Reference;
use crate::check::watch_reference::streams;
use crate::history::History;

const GUARANTEE: &str = "watch_resumable";

/// The violations of `watch_resumable`: each stream whose first change is not the first
/// known change after the revision it was opened from.
pub fn watch_resumable(history: &History) -> Vec<Violation> {
    let reference = Reference::build(history);
    let mut violations = Vec::new();
    for log in &history.watches {
        for stream in streams(log) {
            let Some(first) = stream.events.first() else {
                continue;
            };
            let from = stream.from;
            let detail = if first.revision <= from {
                Some(format!("replayed {first}"))
            } else {
                reference
                    .within(from + 1..=first.revision - 1)
                    .next()
                    .map(|skipped| format!("started with {first}, skipping {skipped}"))
            };
            if let Some(detail) = detail {
                violations.push(Violation {
                    guarantee: GUARANTEE,
                    detail: format!(
                        "watcher {}: the watch on {} from {from} {detail}",
                        log.watcher, stream.replica
                    ),
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

    // R-RES-175: each resume starts right after the revision it resumed from.
    #[test]
    fn holds_when_each_resume_starts_with_the_next_change() {
        let log = Log::new()
            .listed(2)
            .opened("replica-1", 2)
            .added("a", 3)
            .closed()
            .opened("replica-2", 3)
            .added("b", 5)
            .closed()
            .opened("replica-3", 5);
        assert_eq!(watch_resumable(&history(&[3, 5, 7], vec![log])), vec![]);
    }

    // R-RES-175: a resume that starts after the first change after its revision skipped it;
    // one that starts at its revision replayed it.
    #[test]
    fn a_skipping_or_replaying_resume_is_a_violation() {
        let skipping = Log::new()
            .listed(2)
            .opened("replica-1", 2)
            .added("a", 3)
            .closed()
            .opened("replica-2", 3)
            .added("c", 7);
        let violations = watch_resumable(&history(&[3, 5, 7], vec![skipping]));
        assert_one_violation(&violations, "skipping Added b at 5");

        let replaying = Log::new()
            .listed(2)
            .opened("replica-1", 2)
            .added("a", 3)
            .closed()
            .opened("replica-2", 3)
            .added("a", 3);
        let violations = watch_resumable(&history(&[3], vec![replaying]));
        assert_one_violation(&violations, "replayed");
    }
}
