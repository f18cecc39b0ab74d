//! Guarantee `local_reads_real` (R-HA-006, R-HA-007): a read served from a replica's local
//! state ("Any", `resourceVersion=0`, or "NotOlderThan") may be stale, but only with state that
//! existed: it serves the key absent, or a value some write of that key produced, at the
//! revision that write's acknowledgement carried (a write of unknown outcome: at any revision),
//! and that write was sent before the answer came: never a value that was never written, never
//! one from the future.

use crate::check::Violation;
use crate::history::History;
use crate::history::ReadAt;
use crate::history::ReadOutcome;
use crate::history::WriteOutcome;

const GUARANTEE: &str = "local_reads_real";

/// The violations of `local_reads_real` in `history`.
pub fn local_reads_real(history: &History) -> Vec<Violation> {
    let mut violations = Vec::new();
    for read in history.reads.iter().filter(|r| r.at != ReadAt::Quorum) {
        let ReadOutcome::Served(Some(served)) = &read.outcome else {
            continue;
        };
        let produced = history.writes.iter().any(|w| {
            w.key == read.key
                && w.value == served.value
                && w.sent_at <= read.done_at
                && match w.outcome {
                    WriteOutcome::Acked { revision } => {
                        revision.is_none_or(|r| r == served.mod_revision)
                    }
                    WriteOutcome::Unknown { .. } => true,
                    WriteOutcome::Rejected { .. } => false,
                }
        });
        if !produced {
            violations.push(Violation {
                guarantee: GUARANTEE,
                detail: format!(
                    "{} served {} as {:?} at revision {} ({:?} read, {:?}..{:?}), which no write \
                     sent before the answer produced",
                    read.replica,
                    read.key,
                    String::from_utf8_lossy(&served.value),
                    served.mod_revision,
                    read.at,
                    read.sent_at,
                    read.done_at
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
    use crate::history::ReadRecord;
    use crate::history::ReadValue;
    use crate::history::WriteOp;
    use crate::history::WriteRecord;

    fn at(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    fn history(read_done_at: u64, served: Option<(&str, u64)>) -> History {
        let mut h = History::default();
        h.record_write(WriteRecord {
            op: WriteOp::Create,
            key: "k".to_owned(),
            value: Bytes::from_static(b"one"),
            replica: "replica-1".to_owned(),
            sent_at: at(10),
            done_at: at(20),
            outcome: WriteOutcome::Acked { revision: Some(5) },
        });
        h.record_write(WriteRecord {
            op: WriteOp::Update,
            key: "k".to_owned(),
            value: Bytes::from_static(b"two"),
            replica: "replica-1".to_owned(),
            sent_at: at(30),
            done_at: at(40),
            outcome: WriteOutcome::Unknown {
                reason: "timeout".to_owned(),
            },
        });
        h.record_read(ReadRecord {
            key: "k".to_owned(),
            at: ReadAt::Any,
            replica: "replica-3".to_owned(),
            sent_at: at(read_done_at - 1),
            done_at: at(read_done_at),
            outcome: ReadOutcome::Served(served.map(|(value, mod_revision)| ReadValue {
                value: Bytes::copy_from_slice(value.as_bytes()),
                mod_revision,
            })),
        });
        h
    }

    // R-HA-006: absent, an old acknowledged value at its revision, or a value of unknown
    // outcome: all real.
    #[test]
    fn holds_for_stale_but_real_state() {
        assert_eq!(local_reads_real(&history(50, None)), vec![]);
        assert_eq!(local_reads_real(&history(50, Some(("one", 5)))), vec![]);
        assert_eq!(local_reads_real(&history(50, Some(("two", 8)))), vec![]);
    }

    // R-HA-006: a value never written, a written value at another revision, or a value whose
    // write was sent only after the answer.
    #[test]
    fn reports_state_that_never_existed() {
        let ghost = local_reads_real(&history(50, Some(("three", 9))));
        assert_one_violation(&ghost, "\"three\" at revision 9");
        let moved = local_reads_real(&history(50, Some(("one", 6))));
        assert_one_violation(&moved, "\"one\" at revision 6");
        let future = local_reads_real(&history(25, Some(("two", 8))));
        assert_one_violation(&future, "\"two\" at revision 8");
    }
}
