//! The revision-ordered change history since the compaction point: which keys each revision
//! wrote, so a watch can replay the events after any revision the store still holds.
//!
//! The values themselves stay in the keys' version chains ([`super::key_history`]); this index
//! only records where to look, so history costs a key name per change.

use std::collections::BTreeMap;
use std::ops::Bound;

use super::Revision;

/// Keys written at each revision after the compaction point.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct History {
    by_revision: BTreeMap<Revision, Vec<String>>,
}

impl History {
    /// Records that `key` changed at `revision` (a key changed twice in one revision is
    /// recorded once: its versions at that revision are all replayed together).
    pub(crate) fn record(&mut self, revision: Revision, key: &str) {
        let keys = self.by_revision.entry(revision).or_default();
        if !keys.iter().any(|k| k == key) {
            keys.push(key.to_owned());
        }
    }

    /// Forgets the revisions at or below `revision`: no watch may start before the compaction
    /// point, so their changes are never replayed.
    pub(crate) fn compact(&mut self, revision: Revision) {
        self.by_revision = self.by_revision.split_off(&(revision + 1));
    }

    /// The revisions after `after`, in order, with the keys each wrote.
    pub(crate) fn after(&self, after: Revision) -> impl Iterator<Item = (Revision, &[String])> {
        self.by_revision
            .range((Bound::Excluded(after), Bound::Unbounded))
            .map(|(revision, keys)| (*revision, keys.as_slice()))
    }
}
