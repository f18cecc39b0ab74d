//! Guarantee `revisions_monotonic` (R-HA-004, R-HA-008, DESIGN.md §3: one leader-ordered
//! revision sequence): revisions never go back in real time. Per key, an operation that started
//! after another finished (an acknowledged create or update, a quorum read serving the key, an
//! item of a quorum list's first page) reports a revision for the key no lower than the earlier
//! one; a quorum list's `resourceVersion` is no lower than any revision an acknowledged write, a
//! quorum read or a quorum list reported before the list was sent; and no item of a page is
//! newer than the page's `resourceVersion`. "Any" and "NotOlderThan" reads may be stale, so
//! they are not judged here.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::check::Violation;
use crate::history::History;
use crate::history::ListRecord;
use crate::history::Page;
use crate::history::PageOutcome;
use crate::history::ReadOutcome;

const GUARANTEE: &str = "revisions_monotonic";

/// A revision some answer reported, with when the operation ran and what it was.
struct Seen {
    key: Option<String>,
    sent_at: Duration,
    done_at: Duration,
    revision: u64,
    what: String,
}

/// A list's first page, when it was served.
fn first_page(list: &ListRecord) -> Option<(Duration, Duration, &Page)> {
    let first = list.pages.first()?;
    match &first.outcome {
        PageOutcome::Served(page) => Some((first.sent_at, first.done_at, page)),
        PageOutcome::Gone | PageOutcome::Failed { .. } => None,
    }
}

/// Every revision the history saw reported for a key (`key: Some`) or for the whole store by a
/// quorum list (`key: None`).
fn observations(history: &History) -> Vec<Seen> {
    let mut seen = Vec::new();
    for write in &history.writes {
        if let Some(revision) = write.acked_revision() {
            seen.push(Seen {
                key: Some(write.key.clone()),
                sent_at: write.sent_at,
                done_at: write.done_at,
                revision,
                what: write.to_string(),
            });
        }
    }
    for read in history.quorum_reads() {
        if let ReadOutcome::Served(Some(value)) = &read.outcome {
            seen.push(Seen {
                key: Some(read.key.clone()),
                sent_at: read.sent_at,
                done_at: read.done_at,
                revision: value.mod_revision,
                what: format!("the quorum read of {} via {}", read.key, read.replica),
            });
        }
    }
    for list in &history.lists {
        let Some((sent_at, done_at, page)) = first_page(list) else {
            continue;
        };
        let what = format!("the quorum list sent at {sent_at:?}");
        seen.push(Seen {
            key: None,
            sent_at,
            done_at,
            revision: page.revision,
            what: what.clone(),
        });
        for item in &page.items {
            seen.push(Seen {
                key: Some(item.key.clone()),
                sent_at,
                done_at,
                revision: item.value.mod_revision,
                what: format!("{what} (item {})", item.key),
            });
        }
    }
    seen
}

/// The violations of `revisions_monotonic` in `history`.
pub fn revisions_monotonic(history: &History) -> Vec<Violation> {
    let mut violations = Vec::new();
    let seen = observations(history);
    let mut by_key: BTreeMap<&str, Vec<&Seen>> = BTreeMap::new();
    for s in &seen {
        if let Some(key) = &s.key {
            by_key.entry(key).or_default().push(s);
        }
    }
    for later in &seen {
        // Per key: the same key. A list's revision: anything reported before it.
        let candidates: Vec<&Seen> = match &later.key {
            Some(key) => by_key.get(key.as_str()).cloned().unwrap_or_default(),
            None => seen.iter().collect(),
        };
        let earlier = candidates
            .into_iter()
            .filter(|e| e.done_at < later.sent_at)
            .max_by_key(|e| e.revision);
        if let Some(earlier) = earlier.filter(|e| e.revision > later.revision) {
            let scope = match &later.key {
                Some(key) => format!("revision {} for {key}", later.revision),
                None => format!("resourceVersion {}", later.revision),
            };
            violations.push(Violation {
                guarantee: GUARANTEE,
                detail: format!(
                    "{} reported {scope}, but {} had reported revision {} before it was sent",
                    later.what, earlier.what, earlier.revision
                ),
            });
        }
    }
    for list in &history.lists {
        for page in list.served() {
            for item in page
                .items
                .iter()
                .filter(|i| i.value.mod_revision > page.revision)
            {
                violations.push(Violation {
                    guarantee: GUARANTEE,
                    detail: format!(
                        "a page at resourceVersion {} holds {} at the newer revision {}",
                        page.revision, item.key, item.value.mod_revision
                    ),
                });
            }
        }
    }
    violations
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::check::violation::assert_one_violation;
    use crate::history::ListItem;
    use crate::history::PageRecord;
    use crate::history::ReadAt;
    use crate::history::ReadRecord;
    use crate::history::ReadValue;
    use crate::history::WriteOp;
    use crate::history::WriteOutcome;
    use crate::history::WriteRecord;

    fn at(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    fn value(revision: u64) -> ReadValue {
        ReadValue {
            value: Bytes::from(format!("v{revision}")),
            mod_revision: revision,
        }
    }

    fn write(key: &str, revision: u64, span: (u64, u64)) -> WriteRecord {
        WriteRecord {
            op: WriteOp::Update,
            key: key.to_owned(),
            value: Bytes::from(format!("v{revision}")),
            replica: "replica-1".to_owned(),
            sent_at: at(span.0),
            done_at: at(span.1),
            outcome: WriteOutcome::Acked {
                revision: Some(revision),
            },
        }
    }

    fn read(key: &str, revision: u64, span: (u64, u64)) -> ReadRecord {
        ReadRecord {
            key: key.to_owned(),
            at: ReadAt::Quorum,
            replica: "replica-2".to_owned(),
            sent_at: at(span.0),
            done_at: at(span.1),
            outcome: ReadOutcome::Served(Some(value(revision))),
        }
    }

    fn list(revision: u64, items: &[(&str, u64)], span: (u64, u64)) -> ListRecord {
        let page = Page {
            revision,
            items: items
                .iter()
                .map(|(key, r)| ListItem {
                    key: (*key).to_owned(),
                    value: value(*r),
                })
                .collect(),
            continue_token: None,
            remaining: None,
        };
        ListRecord {
            limit: 5,
            pages: vec![PageRecord {
                replica: "replica-3".to_owned(),
                sent_at: at(span.0),
                done_at: at(span.1),
                outcome: PageOutcome::Served(page),
            }],
        }
    }

    fn history(
        writes: Vec<WriteRecord>,
        reads: Vec<ReadRecord>,
        lists: Vec<ListRecord>,
    ) -> History {
        History {
            writes,
            reads,
            lists,
            ..History::default()
        }
    }

    // R-HA-004, R-HA-008: revisions that grow with real time pass, and so does anything
    // concurrent (a read overlapping a write may see the older revision).
    #[test]
    fn holds_for_growing_and_concurrent_revisions() {
        let h = history(
            vec![write("a", 5, (0, 10)), write("a", 8, (20, 40))],
            vec![
                read("a", 5, (11, 12)),
                read("a", 5, (25, 30)),
                read("a", 8, (41, 45)),
            ],
            vec![list(9, &[("a", 8)], (50, 55))],
        );
        assert_eq!(revisions_monotonic(&h), vec![]);
    }

    // R-HA-004: a quorum read after a write was acknowledged serves an older revision.
    #[test]
    fn reports_a_key_going_back() {
        let h = history(
            vec![write("a", 8, (0, 10))],
            vec![read("a", 5, (20, 25))],
            vec![],
        );
        assert_one_violation(&revisions_monotonic(&h), "revision 5 for a");
    }

    // R-HA-008: a quorum list below a revision answered before it was sent.
    #[test]
    fn reports_a_list_going_back() {
        let h = history(
            vec![write("a", 8, (0, 10)), write("b", 9, (0, 10))],
            vec![],
            vec![list(7, &[], (20, 25))],
        );
        assert_one_violation(&revisions_monotonic(&h), "resourceVersion 7");
    }

    // R-RES-167: an item newer than the page's resourceVersion.
    #[test]
    fn reports_an_item_newer_than_its_page() {
        let h = history(vec![], vec![], vec![list(7, &[("a", 8)], (0, 5))]);
        assert_one_violation(&revisions_monotonic(&h), "holds a at the newer revision 8");
    }
}
