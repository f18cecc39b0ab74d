//! Guarantee `acked_writes_durable`: every acknowledged write is served by every replica's final
//! quorum read, with the value written and the revision the acknowledgement carried (R-HA-011;
//! DESIGN.md §3: a revision is the same on every replica).
//!
//! A key written more than once is judged by its newest acknowledged write only when no write to
//! it has an unknown outcome, since an unknown write may legitimately have overwritten it; the
//! scenarios give each write its own key, so every acknowledged write is checked.
//!
//! A key with an acknowledged delete must be absent everywhere: the writers never recreate a key,
//! and a create of unknown outcome cannot take effect after a delete of its key was
//! acknowledged (that delete found the key, so the create had already taken effect).

use crate::check::Violation;
use crate::history::History;
use crate::history::WriteOp;
use crate::history::WriteOutcome;

const GUARANTEE: &str = "acked_writes_durable";

/// The violations of `acked_writes_durable` in `history`. A replica without a final view is
/// itself a violation: the check cannot vouch for it.
pub fn acked_writes_durable(history: &History) -> Vec<Violation> {
    let mut violations = Vec::new();
    if history.final_views.is_empty() {
        violations.push(Violation {
            guarantee: GUARANTEE,
            detail: "no replica was read at the end of the run".to_owned(),
        });
    }
    for key in history.keys() {
        let writes: Vec<_> = history.writes.iter().filter(|w| w.key == key).collect();
        if let Some(delete) = writes
            .iter()
            .find(|w| w.op == WriteOp::Delete && w.is_acked())
        {
            for (replica, view) in &history.final_views {
                if let Some(Some(read)) = view.reads.get(&key) {
                    violations.push(Violation {
                        guarantee: GUARANTEE,
                        detail: format!(
                            "{replica} serves {key} at revision {}, but {delete} was acknowledged",
                            read.mod_revision
                        ),
                    });
                }
            }
            continue;
        }
        let ambiguous = writes
            .iter()
            .any(|w| matches!(w.outcome, WriteOutcome::Unknown { .. }));
        let newest = writes
            .iter()
            .filter_map(|w| w.acked_revision().map(|r| (r, *w)))
            .max_by_key(|(r, _)| *r);
        let Some((revision, write)) = newest else {
            continue;
        };
        if ambiguous && writes.len() > 1 {
            continue;
        }
        for (replica, view) in &history.final_views {
            let served = view.reads.get(&key).cloned().flatten();
            match served {
                Some(read) if read.value == write.value && read.mod_revision == revision => {}
                Some(read) => violations.push(Violation {
                    guarantee: GUARANTEE,
                    detail: format!(
                        "{replica} serves {key} at revision {} ({} bytes), but {write} was \
                         acknowledged at revision {revision}",
                        read.mod_revision,
                        read.value.len()
                    ),
                }),
                None => violations.push(Violation {
                    guarantee: GUARANTEE,
                    detail: format!("{replica} does not serve {key}, but {write} was acknowledged"),
                }),
            }
        }
    }
    violations
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use bytes::Bytes;

    use super::*;
    use crate::check::violation::assert_one_violation;
    use crate::history::ReadValue;
    use crate::history::ReplicaView;
    use crate::history::WriteRecord;

    fn write(key: &str, outcome: WriteOutcome) -> WriteRecord {
        WriteRecord {
            op: WriteOp::Create,
            key: key.to_owned(),
            value: Bytes::from(format!("v-{key}")),
            replica: "replica-1".to_owned(),
            sent_at: Duration::ZERO,
            done_at: Duration::ZERO,
            outcome,
        }
    }

    fn view(entries: &[(&str, u64)]) -> ReplicaView {
        ReplicaView {
            reads: entries
                .iter()
                .map(|(k, r)| {
                    let read = ReadValue {
                        value: Bytes::from(format!("v-{k}")),
                        mod_revision: *r,
                    };
                    ((*k).to_owned(), Some(read))
                })
                .collect(),
        }
    }

    fn history(views: &[(&str, ReplicaView)]) -> History {
        let mut history = History::default();
        history.record_write(write("a", WriteOutcome::Acked { revision: Some(3) }));
        history.record_write(write(
            "b",
            WriteOutcome::Unknown {
                reason: "timeout".to_owned(),
            },
        ));
        for (name, v) in views {
            history.final_views.insert((*name).to_owned(), v.clone());
        }
        history
    }

    // R-HA-011: the checker accepts a run where every replica serves the acknowledged write.
    #[test]
    fn holds_when_every_replica_serves_the_acked_revision() {
        let h = history(&[
            ("r1", view(&[("a", 3)])),
            ("r2", view(&[("a", 3), ("b", 4)])),
        ]);
        assert_eq!(acked_writes_durable(&h), vec![]);
    }

    // R-HA-011: a replica that lost the write, or serves it at another revision, is reported.
    #[test]
    fn reports_missing_and_moved_writes() {
        let h = history(&[("r1", view(&[])), ("r2", view(&[("a", 5)]))]);
        let violations = acked_writes_durable(&h);
        assert_eq!(violations.len(), 2, "{violations:?}");
        assert!(violations[0].detail.contains("r1 does not serve a"));
        assert!(violations[1].detail.contains("r2 serves a at revision 5"));
    }

    // R-HA-011, R-HA-014: a key whose delete was acknowledged must be gone on every replica.
    #[test]
    fn reports_a_deleted_key_still_served() {
        let mut h = history(&[("r1", view(&[])), ("r2", view(&[("a", 3)]))]);
        h.record_write(WriteRecord {
            op: WriteOp::Delete,
            value: Bytes::new(),
            ..write("a", WriteOutcome::Acked { revision: None })
        });
        assert_one_violation(&acked_writes_durable(&h), "r2 serves a at revision 3");
    }

    #[test]
    fn reports_a_run_without_final_reads() {
        let h = history(&[]);
        assert_eq!(acked_writes_durable(&h).len(), 1);
    }
}
