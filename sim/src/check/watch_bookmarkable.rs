//! Guarantee `watch_bookmarkable` (etcd robustness "bookmarkable"; R-RES-229): a `BOOKMARK`
//! at revision B promises that every change up to B was already delivered, so a watcher
//! resuming from B misses nothing: every known change after the watcher's list and up to B
//! came before the bookmark, and none at or below B comes after it.

use crate::check::Violation;
use crate::check::watch_reference::Reference;
use crate::check::watch_reference::segments;
use crate::history::History;
use crate::watch_history::WatchEntry;

const GUARANTEE: &str = "watch_bookmarkable";

/// The violations of `watch_bookmarkable`: each bookmark ahead of a change not yet
/// delivered.
pub fn watch_bookmarkable(history: &History) -> Vec<Violation> {
    let reference = Reference::build(history);
    let mut violations = Vec::new();
    for log in &history.watches {
        for segment in segments(log) {
            for (i, entry) in segment.entries.iter().enumerate() {
                let WatchEntry::Bookmark { revision, .. } = entry else {
                    continue;
                };
                let (before, after) = segment.entries.split_at(i);
                let delivered_before = |revision: u64, key: &str| {
                    before.iter().any(|e| {
                        matches!(e, WatchEntry::Event { change, .. }
                            if change.revision == revision && change.key == key)
                    })
                };
                let mut violation = |detail: String| {
                    violations.push(Violation {
                        guarantee: GUARANTEE,
                        detail: format!("watcher {}: bookmark at {revision} {detail}", log.watcher),
                    });
                };
                if *revision <= segment.start {
                    continue;
                }
                for known in reference.within(segment.start + 1..=*revision) {
                    if !delivered_before(known.revision, &known.key) {
                        violation(format!("before {known} was delivered"));
                    }
                }
                for entry in after {
                    if let WatchEntry::Event { change, .. } = entry
                        && change.revision <= *revision
                    {
                        violation(format!("and {change} after it"));
                    }
                }
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

    // R-RES-229: bookmarks that trail the delivered changes hold.
    #[test]
    fn holds_when_bookmarks_trail_the_changes() {
        let log = Log::new()
            .listed(2)
            .opened("replica-1", 2)
            .bookmark(2)
            .added("a", 3)
            .bookmark(4)
            .closed()
            .opened("replica-2", 4)
            .added("b", 5)
            .bookmark(5);
        assert_eq!(watch_bookmarkable(&history(&[3, 5], vec![log])), vec![]);
    }

    // R-RES-229: a bookmark ahead of an undelivered change breaks its promise, whether the
    // change comes late or never.
    #[test]
    fn a_bookmark_ahead_of_an_undelivered_change_is_a_violation() {
        let late = Log::new()
            .listed(2)
            .opened("replica-1", 2)
            .bookmark(4)
            .added("a", 3);
        let violations = watch_bookmarkable(&history(&[3], vec![late]));
        assert_eq!(violations.len(), 2, "{violations:?}");

        let never = Log::new()
            .listed(2)
            .opened("replica-1", 2)
            .added("a", 3)
            .bookmark(6)
            .closed()
            .opened("replica-2", 6)
            .added("c", 7);
        let violations = watch_bookmarkable(&history(&[3, 5, 7], vec![never]));
        assert_one_violation(&violations, "Added b at 5");
    }

    // R-RES-229: a relist (after a 410) starts a new account: changes before it are not owed.
    #[test]
    fn a_relist_starts_over() {
        let log = Log::new()
            .listed(2)
            .opened("replica-1", 2)
            .gone()
            .listed(5)
            .opened("replica-1", 5)
            .bookmark(6);
        assert_eq!(watch_bookmarkable(&history(&[3, 5], vec![log])), vec![]);
    }
}
