//! Guarantee `continue_consistent` (R-RES-167, R-HA-008): a paged list is one snapshot, whatever
//! replica served each page. Every page reports the first page's `resourceVersion` R; the
//! items across pages are sorted by name with no duplicate; each page's `remainingItemCount`
//! counts the items the following pages held; and the items are the state at R as the history
//! knows it (the watch checkers' reference: acknowledged writes and every change a watcher was
//! delivered, at their revisions).
//!
//! A key is judged exactly unless something the history cannot place might have changed it at
//! or below R: a write of unknown outcome sent before the first page's answer, or a delete
//! whose revision is not known to lie on one side of R. Such a key may be present or absent,
//! but when present it is no older than its newest known change at or below R, and equal to
//! the known change at its revision. An incomplete list (a page failed, or a 410) is judged up
//! to its last item.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::time::Duration;

use crate::check::Violation;
use crate::check::watch_reference::KnownChange;
use crate::check::watch_reference::Reference;
use crate::history::History;
use crate::history::ListItem;
use crate::history::ListRecord;
use crate::history::PageOutcome;
use crate::history::WriteOp;
use crate::history::WriteOutcome;
use crate::watch_history::ChangeKind;

const GUARANTEE: &str = "continue_consistent";

/// The violations of `continue_consistent` in `history`.
pub fn continue_consistent(history: &History) -> Vec<Violation> {
    let reference = Reference::build(history);
    let mut violations = Vec::new();
    for list in &history.lists {
        let mut violation = |detail: String| {
            violations.push(Violation {
                guarantee: GUARANTEE,
                detail: format!("the list of {}: {detail}", describe(list)),
            });
        };
        let Some(first) = list.pages.first() else {
            continue;
        };
        let Some(revision) = list.served().next().map(|page| page.revision) else {
            continue;
        };
        let pages: Vec<_> = list.served().collect();
        for page in pages.iter().filter(|page| page.revision != revision) {
            violation(format!(
                "a continue page is at resourceVersion {}, the first at {revision}",
                page.revision
            ));
        }
        let items: Vec<&ListItem> = pages.iter().flat_map(|page| &page.items).collect();
        for pair in items.windows(2) {
            if pair[0].key >= pair[1].key {
                violation(format!(
                    "{} comes after {}: not sorted, or served twice",
                    pair[1].key, pair[0].key
                ));
            }
        }
        if list.complete() {
            for (i, page) in pages.iter().enumerate() {
                let after: usize = pages[i + 1..].iter().map(|p| p.items.len()).sum();
                if let Some(remaining) = page.remaining
                    && usize::try_from(remaining).ok() != Some(after)
                {
                    violation(format!(
                        "page {} says {remaining} items remain, {after} followed",
                        i + 1
                    ));
                }
            }
        }
        // An incomplete list answers for the names up to its last item.
        let covered =
            |key: &str| list.complete() || items.last().is_some_and(|l| key <= l.key.as_str());
        let served: BTreeMap<&str, &ListItem> =
            items.iter().map(|i| (i.key.as_str(), *i)).collect();
        let keys: BTreeSet<&str> = history
            .writes
            .iter()
            .map(|w| w.key.as_str())
            .chain(served.keys().copied())
            .collect();
        let first_page = (first.sent_at, first.done_at);
        for key in keys.into_iter().filter(|key| covered(key)) {
            let expected = expected(history, &reference, key, revision, first_page);
            if let Some(detail) = judge(key, expected, served.get(key).copied()) {
                violation(detail);
            }
        }
    }
    violations
}

fn describe(list: &ListRecord) -> String {
    let replicas: Vec<&str> = list.pages.iter().map(|p| p.replica.as_str()).collect();
    let end = match list.pages.last().map(|p| &p.outcome) {
        Some(PageOutcome::Gone) => ", ended by a 410",
        Some(PageOutcome::Failed { .. }) => ", ended by a failed page",
        _ => "",
    };
    format!(
        "limit {} sent at {:?} via [{}]{end}",
        list.limit,
        list.pages.first().map(|p| p.sent_at).unwrap_or_default(),
        replicas.join(", ")
    )
}

/// What the history says a key was at revision `at`.
enum Expected<'a> {
    /// Known: present with this change's value and revision, or absent (`None`).
    Exactly(Option<&'a KnownChange>),
    /// Something unplaced may have changed it; if present, no older than this change.
    Either(Option<&'a KnownChange>),
}

/// The key's state at `at`, for a list whose first page was sent and answered at
/// `(sent, answered)`.
fn expected<'a>(
    history: &History,
    reference: &'a Reference,
    key: &str,
    at: u64,
    (sent, answered): (Duration, Duration),
) -> Expected<'a> {
    let newest = reference
        .within(0..=at)
        .filter(|c| c.key == key)
        .max_by_key(|c| c.revision);
    if newest.is_some_and(|c| c.kind == ChangeKind::Deleted) {
        // The writers never recreate a key.
        return Expected::Exactly(None);
    }
    let present = newest.filter(|c| c.kind != ChangeKind::Deleted);
    let delete_known = reference
        .within(0..=u64::MAX)
        .any(|c| c.key == key && c.kind == ChangeKind::Deleted);
    let mut unplaced = false;
    for write in history.writes.iter().filter(|w| w.key == key) {
        // Sent after the first page was answered: its revision is above R.
        if write.sent_at > answered {
            continue;
        }
        match (&write.outcome, write.op) {
            (WriteOutcome::Unknown { .. }, _) => unplaced = true,
            (WriteOutcome::Acked { .. }, WriteOp::Delete) if !delete_known => {
                // Acknowledged before the list was sent: its revision is below R.
                if write.done_at < sent {
                    return Expected::Exactly(None);
                }
                let bounded = reference.bounded_deletes.iter().find(|d| d.key == key);
                match bounded {
                    Some(d) if d.before <= at => return Expected::Exactly(None),
                    Some(d) if d.after >= at => {}
                    _ => unplaced = true,
                }
            }
            _ => {}
        }
    }
    if unplaced {
        Expected::Either(present)
    } else {
        Expected::Exactly(present)
    }
}

fn matches(known: &KnownChange, item: &ListItem) -> bool {
    known.revision == item.value.mod_revision
        && known.value.as_ref().is_none_or(|v| *v == item.value.value)
}

/// What is wrong with how the list served `key`, if anything.
fn judge(key: &str, expected: Expected<'_>, item: Option<&ListItem>) -> Option<String> {
    let show = |item: &ListItem| {
        format!(
            "{key} as {:?} at revision {}",
            String::from_utf8_lossy(&item.value.value),
            item.value.mod_revision
        )
    };
    match (expected, item) {
        (Expected::Exactly(None), None) | (Expected::Either(None), None) => None,
        (Expected::Exactly(Some(known)), Some(item)) if matches(known, item) => None,
        (Expected::Exactly(Some(known)), Some(item)) => {
            Some(format!("served {}, where {known}", show(item)))
        }
        (Expected::Exactly(Some(known)), None) => Some(format!("missed {known}")),
        (Expected::Exactly(None), Some(item)) => {
            Some(format!("served {}, which was absent then", show(item)))
        }
        (Expected::Either(newest), Some(item)) => {
            let older = newest.filter(|n| n.revision > item.value.mod_revision);
            if let Some(newest) = older {
                return Some(format!("served {}, older than {newest}", show(item)));
            }
            let unchanged =
                newest.is_none_or(|n| n.revision < item.value.mod_revision || matches(n, item));
            (!unchanged).then(|| format!("served {}, which the history contradicts", show(item)))
        }
        (Expected::Either(Some(_)), None) => None,
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::check::violation::assert_one_violation;
    use crate::history::Page;
    use crate::history::PageRecord;
    use crate::history::ReadValue;
    use crate::history::WriteRecord;

    fn at(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    /// A write of `key` valued `v<revision>`, sent at `sent` ms and answered 1 ms later.
    fn write(
        op: WriteOp,
        key: &str,
        revision: u64,
        sent: u64,
        outcome: WriteOutcome,
    ) -> WriteRecord {
        WriteRecord {
            op,
            key: key.to_owned(),
            value: Bytes::from(format!("v{revision}")),
            replica: "replica-1".to_owned(),
            sent_at: at(sent),
            done_at: at(sent + 1),
            outcome,
        }
    }

    fn acked(key: &str, revision: u64) -> WriteRecord {
        let outcome = WriteOutcome::Acked {
            revision: Some(revision),
        };
        write(WriteOp::Create, key, revision, revision, outcome)
    }

    fn page(revision: u64, items: &[(&str, u64)], more: Option<u64>) -> Page {
        Page {
            revision,
            items: items
                .iter()
                .map(|(key, r)| ListItem {
                    key: (*key).to_owned(),
                    value: ReadValue {
                        value: Bytes::from(format!("v{r}")),
                        mod_revision: *r,
                    },
                })
                .collect(),
            continue_token: more.map(|_| "token".to_owned()),
            remaining: more,
        }
    }

    /// A list sent at 100 ms whose pages are `pages`, each on another replica.
    fn history(writes: Vec<WriteRecord>, pages: Vec<Page>) -> History {
        let pages = pages
            .into_iter()
            .enumerate()
            .map(|(i, page)| PageRecord {
                replica: format!("replica-{}", i % 3 + 1),
                sent_at: at(100 + 10 * i as u64),
                done_at: at(105 + 10 * i as u64),
                outcome: PageOutcome::Served(page),
            })
            .collect();
        History {
            writes,
            lists: vec![ListRecord { limit: 2, pages }],
            ..History::default()
        }
    }

    fn writes() -> Vec<WriteRecord> {
        // `d` is written after the first page was answered: not in the snapshot.
        vec![
            acked("a", 5),
            acked("b", 6),
            acked("c", 7),
            write(
                WriteOp::Create,
                "d",
                9,
                107,
                WriteOutcome::Acked { revision: Some(9) },
            ),
        ]
    }

    // R-RES-167, R-HA-008: pages from three replicas at one revision, sorted, complete, with the
    // right counts, pass.
    #[test]
    fn holds_for_one_snapshot_across_replicas() {
        let h = history(
            writes(),
            vec![
                page(7, &[("a", 5), ("b", 6)], Some(1)),
                page(7, &[("c", 7)], None),
            ],
        );
        assert_eq!(continue_consistent(&h), vec![]);
    }

    // R-RES-167: a continue page served at another revision.
    #[test]
    fn reports_a_page_at_another_revision() {
        let h = history(
            writes(),
            vec![
                page(7, &[("a", 5), ("b", 6)], Some(1)),
                page(8, &[("c", 7)], None),
            ],
        );
        assert_one_violation(&continue_consistent(&h), "at resourceVersion 8");
    }

    // R-RES-167: an item served on two pages.
    #[test]
    fn reports_a_duplicate_across_pages() {
        let h = history(
            writes(),
            vec![
                page(7, &[("a", 5), ("b", 6)], Some(2)),
                page(7, &[("b", 6), ("c", 7)], None),
            ],
        );
        assert_one_violation(&continue_consistent(&h), "b comes after b");
    }

    // R-RES-167, R-HA-008: a key of the snapshot missing from every page, and one the snapshot
    // cannot hold (written after it).
    #[test]
    fn reports_missing_and_extra_items() {
        let missing = history(writes(), vec![page(7, &[("a", 5), ("b", 6)], None)]);
        assert_one_violation(&continue_consistent(&missing), "missed Added c at 7");
        let extra = history(
            writes(),
            vec![
                page(7, &[("a", 5), ("b", 6)], Some(2)),
                page(7, &[("c", 7), ("d", 9)], None),
            ],
        );
        assert_one_violation(&continue_consistent(&extra), "d as \"v9\" at revision 9");
    }

    // R-RES-167: remainingItemCount that does not match what followed.
    #[test]
    fn reports_a_wrong_remaining_count() {
        let h = history(
            writes(),
            vec![
                page(7, &[("a", 5), ("b", 6)], Some(4)),
                page(7, &[("c", 7)], None),
            ],
        );
        assert_one_violation(&continue_consistent(&h), "says 4 items remain, 1 followed");
    }

    // R-HA-014: a key deleted (acknowledged) before the list was sent must be absent; a key
    // with a write of unknown outcome may be either.
    #[test]
    fn deletes_and_unknown_writes() {
        let mut deleted = writes();
        deleted.push(write(
            WriteOp::Delete,
            "c",
            0,
            50,
            WriteOutcome::Acked { revision: None },
        ));
        let unknown = WriteOutcome::Unknown {
            reason: "timeout".to_owned(),
        };
        deleted.push(write(WriteOp::Create, "e", 8, 60, unknown));
        let h = history(deleted.clone(), vec![page(8, &[("a", 5), ("b", 6)], None)]);
        assert_eq!(continue_consistent(&h), vec![]);
        let h = history(
            deleted,
            vec![
                page(8, &[("a", 5), ("b", 6)], Some(1)),
                page(8, &[("c", 7)], None),
            ],
        );
        assert_one_violation(&continue_consistent(&h), "which was absent then");
    }
}
