//! Guarantee `rejected_writes_absent`: a write the API refused with a client error stored
//! nothing, so no replica serves it afterwards (the `Storage` contract: "a failed write stores
//! nothing"; Kubernetes answers 4xx only for requests it did not carry out).
//!
//! Only keys that no other write touched are judged, since another write may legitimately have
//! stored the key; the scenarios give each write its own key.

use crate::check::Violation;
use crate::history::History;
use crate::history::WriteOutcome;

const GUARANTEE: &str = "rejected_writes_absent";

/// The violations of `rejected_writes_absent` in `history`.
pub fn rejected_writes_absent(history: &History) -> Vec<Violation> {
    let mut violations = Vec::new();
    for write in &history.writes {
        let WriteOutcome::Rejected { status, .. } = write.outcome else {
            continue;
        };
        if history.writes.iter().filter(|w| w.key == write.key).count() > 1 {
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use bytes::Bytes;

    use super::*;
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

    // A key another write touched is not judged: that write may have stored it.
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
