//! Guarantee `rejected_writes_absent`: a write the API refused with a client error, or with a
//! 503 inviting a retry, stored nothing, so no replica serves it afterwards (the `Storage`
//! contract: "a failed write stores nothing"; Kubernetes answers 4xx only for requests it did
//! not carry out, and Apiary answers 503 with Retry-After only for a write it never proposed).
//!
//! A key that no other write touched must be absent everywhere at the end; the scenarios give
//! each create its own key. On a key other writes touched, a rejected write's value (each write's
//! value is its own, unless another write of the key wrote the same) is served by nothing: no
//! read of any consistency, no page of a list, no watch event, no final read. That is what judges
//! a conditional update refused with 409.

use bytes::Bytes;

use crate::check::Violation;
use crate::check::watch_reference::events;
use crate::history::History;
use crate::history::ReadOutcome;
use crate::history::WriteOutcome;
use crate::history::WriteRecord;

const GUARANTEE: &str = "rejected_writes_absent";

/// The violations of `rejected_writes_absent` in `history`.
pub fn rejected_writes_absent(history: &History) -> Vec<Violation> {
    let mut violations = Vec::new();
    for write in &history.writes {
        let WriteOutcome::Rejected { status, .. } = write.outcome else {
            continue;
        };
        if history.writes.iter().filter(|w| w.key == write.key).count() > 1 {
            if let Some(place) = served_value(history, write) {
                violations.push(Violation {
                    guarantee: GUARANTEE,
                    detail: format!("{place} served the value of {write}"),
                });
            }
            continue;
        }
        for (replica, view) in &history.final_views {
            if let Some(Some(read)) = view.reads.get(&write.key) {
                violations.push(Violation {
                    guarantee: GUARANTEE,
                    detail: format!(
                        "{replica} serves {} at revision {}, but its only write was rejected \
                         with {status}",
                        write.key, read.mod_revision
                    ),
                });
            }
        }
    }
    violations
}

/// Where the value `write` wrote was served, if anywhere and no other write of the key wrote
/// the same value.
fn served_value(history: &History, write: &WriteRecord) -> Option<String> {
    if write.value.is_empty()
        || history.writes.iter().any(|w| {
            w.key == write.key
                && w.value == write.value
                && !matches!(w.outcome, WriteOutcome::Rejected { .. })
        })
    {
        return None;
    }
    let holds = |key: &str, value: &Bytes| key == write.key && *value == write.value;
    let read = history.reads.iter().find(|r| match &r.outcome {
        ReadOutcome::Served(Some(served)) => holds(&r.key, &served.value),
        ReadOutcome::Served(None) | ReadOutcome::Failed { .. } => false,
    });
    if let Some(read) = read {
        return Some(format!("a read via {} at {:?}", read.replica, read.sent_at));
    }
    let listed = history
        .lists
        .iter()
        .flat_map(|list| list.served())
        .any(|page| page.items.iter().any(|i| holds(&i.key, &i.value.value)));
    if listed {
        return Some("a list page".to_owned());
    }
    let watched = history
        .watches
        .iter()
        .find(|log| events(log).any(|c| holds(&c.key, &c.value)));
    if let Some(log) = watched {
        return Some(format!("watcher {}", log.watcher));
    }
    history
        .final_views
        .iter()
        .find(|(_, view)| {
            view.reads
                .get(&write.key)
                .is_some_and(|read| read.as_ref().is_some_and(|r| r.value == write.value))
        })
        .map(|(replica, _)| format!("the final read of {replica}"))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::check::violation::assert_one_violation;
    use crate::history::ReadAt;
    use crate::history::ReadRecord;
    use crate::history::ReadValue;
    use crate::history::ReplicaView;
    use crate::history::WriteOp;
    use crate::history::WriteRecord;

    fn rejected(key: &str) -> WriteRecord {
        WriteRecord {
            op: WriteOp::Create,
            key: key.to_owned(),
            value: Bytes::from_static(b"v"),
            replica: "replica-1".to_owned(),
            sent_at: Duration::ZERO,
            done_at: Duration::ZERO,
            outcome: WriteOutcome::Rejected {
                status: 404,
                reason: "namespaces \"default\" not found".to_owned(),
            },
        }
    }

    fn view_with(key: &str) -> ReplicaView {
        let mut view = ReplicaView::default();
        let read = ReadValue {
            value: Bytes::from_static(b"v"),
            mod_revision: 7,
        };
        view.reads.insert(key.to_owned(), Some(read));
        view
    }

    // The Storage contract: a rejected write that is absent everywhere passes.
    #[test]
    fn holds_when_rejected_writes_are_absent() {
        let mut h = History::default();
        h.record_write(rejected("k"));
        h.final_views
            .insert("r1".to_owned(), ReplicaView::default());
        assert_eq!(rejected_writes_absent(&h), vec![]);
    }

    // A rejected write that a replica serves is reported.
    #[test]
    fn reports_a_rejected_write_that_was_stored() {
        let mut h = History::default();
        h.record_write(rejected("k"));
        h.final_views.insert("r1".to_owned(), view_with("k"));
        let violations = rejected_writes_absent(&h);
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert!(violations[0].detail.contains("rejected with 404"));
    }

    // R-HA-014: a conditional update refused with 409 whose value a read then serves.
    #[test]
    fn reports_the_value_of_a_refused_conditional_update() {
        let mut h = History::default();
        let mut created = rejected("k");
        created.outcome = WriteOutcome::Acked { revision: Some(5) };
        h.record_write(created);
        h.record_write(WriteRecord {
            op: WriteOp::UpdateIf { expected: 3 },
            value: Bytes::from_static(b"w"),
            outcome: WriteOutcome::Rejected {
                status: 409,
                reason: "Conflict".to_owned(),
            },
            ..rejected("k")
        });
        h.final_views.insert("r1".to_owned(), view_with("k"));
        assert_eq!(rejected_writes_absent(&h), vec![]);
        h.record_read(ReadRecord {
            key: "k".to_owned(),
            at: ReadAt::Any,
            replica: "replica-2".to_owned(),
            sent_at: Duration::from_secs(1),
            done_at: Duration::from_secs(1),
            outcome: ReadOutcome::Served(Some(ReadValue {
                value: Bytes::from_static(b"w"),
                mod_revision: 8,
            })),
        });
        assert_one_violation(&rejected_writes_absent(&h), "a read via replica-2");
    }

    // A key another write touched is not judged by its presence: that write may have stored it.
    #[test]
    fn skips_keys_with_other_writes() {
        let mut h = History::default();
        h.record_write(rejected("k"));
        let mut acked = rejected("k");
        acked.outcome = WriteOutcome::Acked { revision: Some(7) };
        h.record_write(acked);
        h.final_views.insert("r1".to_owned(), view_with("k"));
        assert_eq!(rejected_writes_absent(&h), vec![]);
    }
}
