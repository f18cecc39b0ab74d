//! Guarantee `reads_see_acked_writes`: a quorum read ("Most Recent", no `resourceVersion`)
//! that a replica serves reflects every write to that key acknowledged before the read was
//! sent, on any replica (R-HA-004); a replica that cannot confirm a quorum must fail or wait
//! rather than serve an older state (R-HA-005). Failed reads promise nothing and pass.
//!
//! Deletes: a key whose delete was acknowledged before the read was sent must be absent (the
//! writers never recreate a key); absence is also what a read may serve once any delete of the
//! key (acknowledged or of unknown outcome) was sent before the read's answer.

use crate::check::Violation;
use crate::history::History;
use crate::history::ReadOutcome;
use crate::history::WriteOp;
use crate::history::WriteOutcome;

const GUARANTEE: &str = "reads_see_acked_writes";

/// The violations of `reads_see_acked_writes` in `history`.
pub fn reads_see_acked_writes(history: &History) -> Vec<Violation> {
    let mut violations = Vec::new();
    for read in history.quorum_reads() {
        let ReadOutcome::Served(served) = &read.outcome else {
            continue;
        };
        let served_revision = served.as_ref().map(|value| value.mod_revision);
        let deletes = || {
            history.writes.iter().filter(|w| {
                w.key == read.key
                    && w.op == WriteOp::Delete
                    && !matches!(w.outcome, WriteOutcome::Rejected { .. })
            })
        };
        if let Some(delete) = deletes().find(|w| w.is_acked() && w.done_at <= read.sent_at) {
            if let Some(served) = served_revision {
                violations.push(Violation {
                    guarantee: GUARANTEE,
                    detail: format!(
                        "{} served {} at revision {served} at {:?}, but {delete} was \
                         acknowledged before the read was sent",
                        read.replica, read.key, read.sent_at
                    ),
                });
            }
            continue;
        }
        if served_revision.is_none() && deletes().any(|w| w.sent_at <= read.done_at) {
            continue;
        }
        let missed = history.writes.iter().filter_map(|write| {
            let revision = write.acked_revision()?;
            let before = write.key == read.key && write.done_at <= read.sent_at;
            let seen = served_revision.is_some_and(|served| served >= revision);
            (before && !seen).then_some((write, revision))
        });
        for (write, revision) in missed {
            let what = match served_revision {
                Some(served) => format!("revision {served}"),
                None => "nothing".to_owned(),
            };
            violations.push(Violation {
                guarantee: GUARANTEE,
                detail: format!(
                    "{} served {what} for {} at {:?}, but {write} was acknowledged at revision \
                     {revision} before the read was sent",
                    read.replica, read.key, read.sent_at
                ),
            });
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
    use crate::history::ReadAt;
    use crate::history::ReadRecord;
    use crate::history::ReadValue;
    use crate::history::WriteRecord;

    fn history(read_sent_at: u64, served: ReadOutcome) -> History {
        let mut h = History::default();
        h.record_write(WriteRecord {
            op: WriteOp::Create,
            key: "k".to_owned(),
            value: Bytes::from_static(b"v"),
            replica: "replica-2".to_owned(),
            sent_at: Duration::from_secs(1),
            done_at: Duration::from_secs(2),
            outcome: WriteOutcome::Acked { revision: Some(9) },
        });
        h.record_read(ReadRecord {
            key: "k".to_owned(),
            at: ReadAt::Quorum,
            replica: "replica-1".to_owned(),
            sent_at: Duration::from_secs(read_sent_at),
            done_at: Duration::from_secs(read_sent_at + 1),
            outcome: served,
        });
        h
    }

    fn served(revision: Option<u64>) -> ReadOutcome {
        ReadOutcome::Served(revision.map(|mod_revision| ReadValue {
            value: Bytes::from_static(b"v"),
            mod_revision,
        }))
    }

    // R-HA-004: a read after the acknowledgement that sees the write passes; so does a read
    // that began before the acknowledgement (concurrent), whatever it saw, and a failed read
    // (R-HA-005: failing is allowed).
    #[test]
    fn holds_for_fresh_concurrent_and_failed_reads() {
        assert_eq!(reads_see_acked_writes(&history(3, served(Some(9)))), vec![]);
        assert_eq!(reads_see_acked_writes(&history(1, served(None))), vec![]);
        let failed = ReadOutcome::Failed {
            reason: "no quorum".to_owned(),
        };
        assert_eq!(reads_see_acked_writes(&history(3, failed)), vec![]);
    }

    fn delete(h: &mut History, span: (u64, u64), outcome: WriteOutcome) {
        h.record_write(WriteRecord {
            op: WriteOp::Delete,
            key: "k".to_owned(),
            value: Bytes::new(),
            replica: "replica-3".to_owned(),
            sent_at: Duration::from_secs(span.0),
            done_at: Duration::from_secs(span.1),
            outcome,
        });
    }

    // R-HA-004, R-HA-014: after an acknowledged delete the key is absent; a read concurrent
    // with a delete may miss the key; a read sent after the delete was acknowledged that still
    // serves the key is stale.
    #[test]
    fn deletes_make_absence_required_then_allowed() {
        let mut gone = history(6, served(None));
        delete(&mut gone, (4, 5), WriteOutcome::Acked { revision: None });
        assert_eq!(reads_see_acked_writes(&gone), vec![]);
        let mut concurrent = history(3, served(None));
        delete(
            &mut concurrent,
            (3, 8),
            WriteOutcome::Acked { revision: None },
        );
        assert_eq!(reads_see_acked_writes(&concurrent), vec![]);
        let mut stale = history(6, served(Some(9)));
        delete(&mut stale, (4, 5), WriteOutcome::Acked { revision: None });
        assert_one_violation(&reads_see_acked_writes(&stale), "served k at revision 9");
    }

    // R-HA-004/R-HA-005: a stale read (the key missing, or an older revision) after the
    // acknowledgement is reported.
    #[test]
    fn reports_stale_reads() {
        let absent = reads_see_acked_writes(&history(3, served(None)));
        assert_eq!(absent.len(), 1, "{absent:?}");
        assert!(absent[0].detail.contains("replica-1 served nothing for k"));
        let older = reads_see_acked_writes(&history(3, served(Some(4))));
        assert_eq!(older.len(), 1, "{older:?}");
    }
}
