//! Guarantee `watch_ordered` (etcd robustness "ordered"; R-HA-010, R-RES-232): across all its
//! streams and replicas, a watcher is delivered changes in strictly increasing revision
//! order, and its bookmarks never go back: not below the previous bookmark, not below the last
//! change delivered.

use crate::check::Violation;
use crate::history::History;
use crate::watch_history::WatchEntry;

const GUARANTEE: &str = "watch_ordered";

/// The violations of `watch_ordered`: each change not above the previous one, each bookmark
/// below the previous bookmark or change.
pub fn watch_ordered(history: &History) -> Vec<Violation> {
    let mut violations = Vec::new();
    for log in &history.watches {
        let mut last_event: Option<u64> = None;
        let mut last_bookmark: Option<u64> = None;
        let mut violation = |detail: String| {
            violations.push(Violation {
                guarantee: GUARANTEE,
                detail: format!("watcher {}: {detail}", log.watcher),
            });
        };
        for entry in &log.entries {
            match entry {
                WatchEntry::Event { change, .. } => {
                    if let Some(last) = last_event.filter(|last| change.revision <= *last) {
                        violation(format!("{change} delivered after a change at {last}"));
                    }
                    last_event = Some(change.revision);
                }
                WatchEntry::Bookmark { revision, .. } => {
                    if let Some(last) = last_bookmark.filter(|last| revision < last) {
                        violation(format!("bookmark at {revision} after a bookmark at {last}"));
                    }
                    if let Some(last) = last_event.filter(|last| revision < last) {
                        violation(format!("bookmark at {revision} after a change at {last}"));
                    }
                    last_bookmark = Some(*revision);
                }
                WatchEntry::Listed { .. }
                | WatchEntry::Opened { .. }
                | WatchEntry::Gone { .. }
                | WatchEntry::Closed { .. } => {}
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

    // R-HA-010: changes in revision order across a switch of replicas, bookmarks in between.
    #[test]
    fn holds_for_increasing_revisions_across_resumes() {
        let log = Log::new()
            .listed(2)
            .opened("replica-1", 2)
            .added("a", 3)
            .bookmark(4)
            .closed()
            .opened("replica-2", 4)
            .bookmark(4)
            .added("b", 5);
        assert_eq!(watch_ordered(&history(&[3, 5], vec![log])), vec![]);
    }

    // R-HA-010, R-RES-232: a replica that delivers an older change after a newer one breaks
    // the order.
    #[test]
    fn reordered_changes_are_violations() {
        let log = Log::new()
            .listed(2)
            .opened("replica-1", 2)
            .added("b", 5)
            .closed()
            .opened("replica-2", 5)
            .added("a", 3);
        let violations = watch_ordered(&history(&[3, 5], vec![log]));
        assert_one_violation(&violations, "a at 3");
    }

    // R-RES-229: a bookmark below what was already delivered goes back in time.
    #[test]
    fn bookmarks_going_back_are_violations() {
        let log = Log::new()
            .listed(2)
            .opened("replica-1", 2)
            .bookmark(6)
            .added("a", 7)
            .closed()
            .opened("replica-2", 7)
            .bookmark(5);
        let violations = watch_ordered(&history(&[7], vec![log]));
        assert_eq!(violations.len(), 2, "{violations:?}");
    }
}
