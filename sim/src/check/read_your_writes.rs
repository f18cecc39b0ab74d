//! Guarantee `read_your_writes` (R-HA-007, R-RES-172): a "NotOlderThan" read at `R` (a get with
//! `resourceVersion=R`, the revision of the client's own acknowledged write), on any replica,
//! serves the key at a revision no lower than `R`, or serves it absent only once a delete of
//! the key was sent: whatever replica answers reflects the client's write. Failing (a 504 "Too
//! large resource version" while the replica catches up) is allowed; serving older state is
//! not.

use crate::check::Violation;
use crate::history::History;
use crate::history::ReadAt;
use crate::history::ReadOutcome;
use crate::history::WriteOp;
use crate::history::WriteOutcome;

const GUARANTEE: &str = "read_your_writes";

/// The violations of `read_your_writes` in `history`.
pub fn read_your_writes(history: &History) -> Vec<Violation> {
    let mut violations = Vec::new();
    for read in &history.reads {
        let (ReadAt::NotOlderThan(floor), ReadOutcome::Served(served)) = (read.at, &read.outcome)
        else {
            continue;
        };
        let served = match served {
            Some(value) if value.mod_revision < floor => format!("revision {}", value.mod_revision),
            Some(_) => continue,
            None => {
                let deleted = history.writes.iter().any(|w| {
                    w.key == read.key
                        && w.op == WriteOp::Delete
                        && !matches!(w.outcome, WriteOutcome::Rejected { .. })
                        && w.sent_at <= read.done_at
                });
                if deleted {
                    continue;
                }
                "nothing".to_owned()
            }
        };
        violations.push(Violation {
            guarantee: GUARANTEE,
            detail: format!(
                "{} served {served} for {} at resourceVersion={floor} ({:?}..{:?})",
                read.replica, read.key, read.sent_at, read.done_at
            ),
        });
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
    use crate::history::WriteRecord;

    fn read(floor: u64, served: Option<u64>) -> ReadRecord {
        ReadRecord {
            key: "k".to_owned(),
            at: ReadAt::NotOlderThan(floor),
            replica: "replica-2".to_owned(),
            sent_at: Duration::from_millis(10),
            done_at: Duration::from_millis(20),
            outcome: ReadOutcome::Served(served.map(|mod_revision| ReadValue {
                value: Bytes::from_static(b"v"),
                mod_revision,
            })),
        }
    }

    fn history(reads: Vec<ReadRecord>) -> History {
        History {
            reads,
            ..History::default()
        }
    }

    // R-HA-007: the own write or a newer one passes, and so does a 504 (a failed read).
    #[test]
    fn holds_for_fresh_and_failed_reads() {
        let failed = ReadRecord {
            outcome: ReadOutcome::Failed {
                reason: "504 Too large resource version".to_owned(),
            },
            ..read(7, None)
        };
        let h = history(vec![read(7, Some(7)), read(7, Some(9)), failed]);
        assert_eq!(read_your_writes(&h), vec![]);
    }

    // R-HA-007: a replica serving the key below the requested revision, or absent without a
    // delete, did not reflect the client's own write.
    #[test]
    fn reports_older_state() {
        assert_one_violation(
            &read_your_writes(&history(vec![read(7, Some(5))])),
            "revision 5",
        );
        assert_one_violation(&read_your_writes(&history(vec![read(7, None)])), "nothing");
    }

    // R-HA-007: absence is the key's later delete.
    #[test]
    fn holds_for_a_key_deleted_since() {
        let mut h = history(vec![read(7, None)]);
        h.record_write(WriteRecord {
            op: WriteOp::Delete,
            key: "k".to_owned(),
            value: Bytes::new(),
            replica: "replica-1".to_owned(),
            sent_at: Duration::from_millis(12),
            done_at: Duration::from_millis(30),
            outcome: WriteOutcome::Unknown {
                reason: "timeout".to_owned(),
            },
        });
        assert_eq!(read_your_writes(&h), vec![]);
    }
}
