//! Guarantee `watch_atomic` (etcd robustness "atomic"; R-HA-010): all changes of one revision
//! reach a watcher together: in one stream, one after the other, and all of them — a resume
//! never splits a revision (as it would if a replica ended a stream in the middle of a
//! revision and the watcher resumed after it).

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use crate::check::Violation;
use crate::check::watch_reference::Reference;
use crate::check::watch_reference::streams;
use crate::history::History;

const GUARANTEE: &str = "watch_atomic";

/// The violations of `watch_atomic`: each revision whose changes a watcher got in two
/// streams, interleaved with another revision, or only in part.
pub fn watch_atomic(history: &History) -> Vec<Violation> {
    let reference = Reference::build(history);
    let mut violations = Vec::new();
    for log in &history.watches {
        let mut violation = |detail: String| {
            violations.push(Violation {
                guarantee: GUARANTEE,
                detail: format!("watcher {}: {detail}", log.watcher),
            });
        };
        // Revision -> the streams that delivered it and the keys delivered.
        let mut delivered: BTreeMap<u64, (BTreeSet<usize>, BTreeSet<&str>)> = BTreeMap::new();
        for (index, stream) in streams(log).iter().enumerate() {
            let mut finished = BTreeSet::new();
            let mut current = None;
            for change in &stream.events {
                if current != Some(change.revision) {
                    if let Some(done) = current {
                        finished.insert(done);
                    }
                    if finished.contains(&change.revision) {
                        violation(format!(
                            "the changes at {} came apart in the stream on {}",
                            change.revision, stream.replica
                        ));
                    }
                    current = Some(change.revision);
                }
                let (in_streams, keys) = delivered.entry(change.revision).or_default();
                in_streams.insert(index);
                keys.insert(change.key.as_str());
            }
        }
        for (revision, (in_streams, keys)) in &delivered {
            if in_streams.len() > 1 {
                violation(format!(
                    "the changes at {revision} came in {} streams",
                    in_streams.len()
                ));
            }
            let missing: Vec<String> = reference
                .at(*revision)
                .into_iter()
                .flat_map(|by_key| by_key.values())
                .filter(|known| !keys.contains(known.key.as_str()))
                .map(ToString::to_string)
                .collect();
            if !missing.is_empty() {
                violation(format!(
                    "revision {revision} delivered in part: {keys:?} without {}",
                    missing.join("; ")
                ));
            }
        }
    }
    violations
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::violation::assert_one_violation;
    use crate::check::watch_reference::testing::Log;
    use crate::check::watch_reference::testing::history;

    // R-HA-010: two changes of one revision delivered together pass.
    #[test]
    fn holds_when_a_revision_arrives_whole() {
        let whole = Log::new()
            .listed(2)
            .opened("replica-1", 2)
            .added("a", 3)
            .added("x", 3)
            .added("b", 5);
        assert_eq!(watch_atomic(&history(&[3, 5], vec![whole])), vec![]);
    }

    // R-HA-010: a stream that ends in the middle of a revision, and a resume after it, split
    // the revision: the second watcher got only part of what the first one got.
    #[test]
    fn a_split_revision_is_a_violation() {
        let whole = Log::new()
            .listed(2)
            .opened("replica-1", 2)
            .added("a", 3)
            .added("x", 3);
        let split = Log::new()
            .listed(2)
            .opened("replica-1", 2)
            .added("a", 3)
            .closed()
            .opened("replica-2", 3)
            .added("b", 5);
        let violations = watch_atomic(&history(&[3, 5], vec![whole, split]));
        assert_one_violation(&violations, "delivered in part");
    }

    // R-HA-010: the rest of a revision delivered by the next stream, or interleaved with
    // another revision, is not delivered together.
    #[test]
    fn a_revision_in_two_streams_or_interleaved_is_a_violation() {
        let two_streams = Log::new()
            .listed(2)
            .opened("replica-1", 2)
            .added("a", 3)
            .closed()
            .opened("replica-2", 2)
            .added("x", 3);
        let violations = watch_atomic(&history(&[3], vec![two_streams]));
        assert_one_violation(&violations, "2 streams");

        let interleaved = Log::new()
            .listed(2)
            .opened("replica-1", 2)
            .added("a", 3)
            .added("b", 5)
            .added("x", 3);
        let violations = watch_atomic(&history(&[3, 5], vec![interleaved]));
        assert_one_violation(&violations, "came apart");
    }
}
