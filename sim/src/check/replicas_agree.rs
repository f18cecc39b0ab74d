//! Guarantee `replicas_agree`: after the faults heal, every replica's quorum read serves the same
//! value at the same revision for every key the history touched, including writes whose outcome
//! the client never learned (DESIGN.md §3: one log, one revision order, on every replica).

use crate::check::Violation;
use crate::history::History;

const GUARANTEE: &str = "replicas_agree";

/// The violations of `replicas_agree`: each key on which some replica's final view differs from
/// the first replica's (in host-name order).
pub fn replicas_agree(history: &History) -> Vec<Violation> {
    let mut views = history.final_views.iter();
    let Some((reference_name, reference)) = views.next() else {
        return Vec::new();
    };
    let mut violations = Vec::new();
    for (name, view) in views {
        for key in history.keys() {
            let expected = reference.reads.get(&key).cloned().flatten();
            let served = view.reads.get(&key).cloned().flatten();
            if expected != served {
                let describe = |read: &Option<crate::history::ReadValue>| match read {
                    Some(read) => format!("revision {}", read.mod_revision),
                    None => "nothing".to_owned(),
                };
                violations.push(Violation {
                    guarantee: GUARANTEE,
                    detail: format!(
                        "{key}: {reference_name} serves {}, {name} serves {}",
                        describe(&expected),
                        describe(&served)
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
    use crate::history::WriteOutcome;
    use crate::history::WriteRecord;

    fn history_with(views: Vec<(&str, Option<u64>)>) -> History {
        let mut history = History::default();
        history.record_write(WriteRecord {
            op: WriteOp::Create,
            key: "k".to_owned(),
            value: Bytes::from_static(b"v"),
            replica: "replica-1".to_owned(),
            sent_at: Duration::ZERO,
            done_at: Duration::ZERO,
            outcome: WriteOutcome::Unknown {
                reason: "deadline".to_owned(),
            },
        });
        for (name, revision) in views {
            let mut view = ReplicaView::default();
            let read = revision.map(|mod_revision| ReadValue {
                value: Bytes::from_static(b"v"),
                mod_revision,
            });
            view.reads.insert("k".to_owned(), read);
            history.final_views.insert(name.to_owned(), view);
        }
        history
    }

    // R-HA-014 (partial): replicas that agree (even on an unknown-outcome write) pass.
    #[test]
    fn holds_when_views_are_identical() {
        let h = history_with(vec![("r1", Some(4)), ("r2", Some(4)), ("r3", Some(4))]);
        assert_eq!(replicas_agree(&h), vec![]);
        let absent = history_with(vec![("r1", None), ("r2", None)]);
        assert_eq!(replicas_agree(&absent), vec![]);
    }

    // R-HA-014 (partial): a replica that diverges is reported with both sides.
    #[test]
    fn reports_divergent_replicas() {
        let h = history_with(vec![("r1", Some(4)), ("r2", None), ("r3", Some(5))]);
        let violations = replicas_agree(&h);
        assert_eq!(violations.len(), 2, "{violations:?}");
        assert!(
            violations[0]
                .detail
                .contains("r1 serves revision 4, r2 serves nothing")
        );
        assert!(violations[1].detail.contains("r3 serves revision 5"));
    }
}
