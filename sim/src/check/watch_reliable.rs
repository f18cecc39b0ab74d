//! Guarantee `watch_reliable` (etcd robustness "reliable"; R-HA-010, R-RES-175, R-RES-232):
//! from the revision a watcher listed at up to the newest revision it reached, it was
//! delivered every change the history knows of — acknowledged creates and updates with their
//! revision and value, changes any watcher saw, and acknowledged deletes (whose revision lies
//! between two acknowledged writes) — exactly as it happened: no gap, however many
//! replicas the watcher resumed on.

use crate::check::Violation;
use crate::check::watch_reference::Reference;
use crate::check::watch_reference::segments;
use crate::history::History;
use crate::watch_history::ChangeKind;

const GUARANTEE: &str = "watch_reliable";

/// The violations of `watch_reliable`: each known change a watcher covered but was not
/// delivered (or was delivered differently), each covered acknowledged delete it missed.
pub fn watch_reliable(history: &History) -> Vec<Violation> {
    let reference = Reference::build(history);
    let mut violations = Vec::new();
    for log in &history.watches {
        let mut violation = |detail: String| {
            violations.push(Violation {
                guarantee: GUARANTEE,
                detail: format!("watcher {}: {detail}", log.watcher),
            });
        };
        for segment in segments(log) {
            let reached = segment.reached();
            if reached <= segment.start {
                continue;
            }
            for known in reference.within(segment.start + 1..=reached) {
                let delivered = segment
                    .events()
                    .find(|c| c.revision == known.revision && c.key == known.key);
                match delivered {
                    Some(change) if known.matches(change) => {}
                    Some(change) => violation(format!("delivered {change} where {known}")),
                    None => violation(format!(
                        "missed {known} (listed at {}, reached {reached})",
                        segment.start
                    )),
                }
            }
            for delete in &reference.bounded_deletes {
                let covered = segment.start <= delete.after && delete.before <= reached;
                let delivered = segment.events().any(|c| {
                    c.kind == ChangeKind::Deleted
                        && c.key == delete.key
                        && delete.after < c.revision
                        && c.revision < delete.before
                });
                if covered && !delivered {
                    violation(format!(
                        "missed the acknowledged delete of {} (between {} and {}; listed at {}, \
                         reached {reached})",
                        delete.key, delete.after, delete.before, segment.start
                    ));
                }
            }
        }
    }
    violations
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::check::violation::assert_one_violation;
    use crate::check::watch_reference::testing::Log;
    use crate::check::watch_reference::testing::acked_create;
    use crate::check::watch_reference::testing::history;
    use crate::history::WriteOp;
    use crate::history::WriteOutcome;
    use crate::history::WriteRecord;

    // R-HA-010, R-RES-175: every acknowledged write after the list, across a resume on
    // another replica, is delivered; writes at or before the list are not owed.
    #[test]
    fn holds_when_every_covered_change_is_delivered() {
        let log = Log::new()
            .listed(3)
            .opened("replica-1", 3)
            .added("b", 5)
            .closed()
            .opened("replica-2", 5)
            .added("c", 7);
        assert_eq!(watch_reliable(&history(&[3, 5, 7, 9], vec![log])), vec![]);
    }

    // R-RES-175, R-HA-010: a resume that skips an acknowledged write leaves a gap.
    #[test]
    fn a_gap_is_a_violation() {
        let log = Log::new()
            .listed(2)
            .opened("replica-1", 2)
            .added("a", 3)
            .closed()
            .opened("replica-2", 3)
            .added("c", 7);
        let violations = watch_reliable(&history(&[3, 5, 7], vec![log]));
        assert_one_violation(&violations, "missed Added b at 5");
    }

    // R-RES-232: a change seen by another watcher but not this one is a gap too; a change
    // delivered with another value than the acknowledged write is not the write.
    #[test]
    fn changes_other_watchers_saw_and_wrong_values_count() {
        let full = Log::new()
            .listed(2)
            .opened("replica-1", 2)
            .added("a", 3)
            .added("x", 4);
        let partial = Log::new()
            .listed(2)
            .opened("replica-2", 2)
            .added("a", 3)
            .bookmark(4);
        let violations = watch_reliable(&history(&[3], vec![full, partial]));
        assert_one_violation(&violations, "missed Added x at 4");

        let mut wrong = history(&[3], vec![]);
        wrong.writes[0].value = bytes::Bytes::from_static(b"other");
        wrong.watches = vec![Log::new().listed(2).opened("replica-1", 2).added("a", 3).0];
        let violations = watch_reliable(&wrong);
        assert_one_violation(&violations, "delivered");
    }

    // R-RES-232: an acknowledged delete (no revision in its answer) between two acknowledged
    // writes the watcher covered must be delivered.
    #[test]
    fn a_missed_acknowledged_delete_is_a_violation() {
        let mut h = history(&[3], vec![]);
        h.record_write(WriteRecord {
            op: WriteOp::Delete,
            key: "a".to_owned(),
            value: bytes::Bytes::new(),
            replica: "replica-2".to_owned(),
            sent_at: Duration::from_millis(4),
            done_at: Duration::from_millis(5),
            outcome: WriteOutcome::Acked { revision: None },
        });
        h.record_write(acked_create("b", 8));
        let without = Log::new()
            .listed(2)
            .opened("replica-1", 2)
            .added("a", 3)
            .added("b", 8);
        h.watches = vec![without.0];
        let violations = watch_reliable(&h);
        assert_one_violation(&violations, "delete of a");

        let with = Log::new()
            .listed(2)
            .opened("replica-1", 2)
            .added("a", 3)
            .event(ChangeKind::Deleted, "a", 6)
            .added("b", 8);
        h.watches = vec![with.0];
        assert_eq!(watch_reliable(&h), vec![]);
    }
}
