//! Converted encodings of one served version that is not the storage version: each stored
//! object version is converted and encoded at most once per replica (DESIGN.md §4), keyed by
//! (revision, key) — the served group-version is the store's own, so it needs no key part.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::MutexGuard;

use bytes::Bytes;

use crate::storage::Revision;

/// How many converted object versions a served version keeps. The oldest revisions go first,
/// so the current versions that reads and watches send stay.
const ENTRIES_KEPT: usize = 4096;

/// The JSON of converted object versions, with their `resourceVersion`.
#[derive(Debug, Default)]
pub(crate) struct ConvertedCache {
    entries: Mutex<BTreeMap<(Revision, String), Bytes>>,
}

impl ConvertedCache {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<(Revision, String), Bytes>> {
        // The map holds only finished encodings, so a panic elsewhere cannot leave it torn.
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The converted JSON of the version of `key` at `revision`, produced by `convert` unless
    /// an earlier read did. Converting happens outside the lock.
    pub(crate) fn get_or_convert<E>(
        &self,
        key: &str,
        revision: Revision,
        convert: impl FnOnce() -> Result<Bytes, E>,
    ) -> Result<Bytes, E> {
        if let Some(bytes) = self.get(key, revision) {
            return Ok(bytes);
        }
        let bytes = convert()?;
        self.insert(key, revision, bytes.clone());
        Ok(bytes)
    }

    /// The converted JSON of the version of `key` at `revision`, if an earlier read kept it.
    pub(crate) fn get(&self, key: &str, revision: Revision) -> Option<Bytes> {
        self.lock().get(&(revision, key.to_owned())).cloned()
    }

    /// Keeps `bytes`, the converted JSON of the version of `key` at `revision`, unless it is
    /// older than everything kept in a full cache (it would evict what current reads need).
    pub(crate) fn insert(&self, key: &str, revision: Revision, bytes: Bytes) {
        let mut entries = self.lock();
        if entries.len() >= ENTRIES_KEPT
            && entries
                .first_key_value()
                .is_some_and(|((oldest, _), _)| revision < *oldest)
        {
            return;
        }
        entries.insert((revision, key.to_owned()), bytes);
        while entries.len() > ENTRIES_KEPT {
            entries.pop_first();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::convert::Infallible;

    use super::*;

    fn counting(calls: &Cell<u32>) -> Result<Bytes, Infallible> {
        calls.set(calls.get() + 1);
        Ok(Bytes::from_static(b"{}"))
    }

    #[test]
    fn each_version_is_converted_once_and_the_newest_are_kept() {
        let cache = ConvertedCache::default();
        let calls = Cell::new(0);
        for _ in 0..10 {
            cache.get_or_convert("/k", 3, || counting(&calls)).unwrap();
        }
        assert_eq!(calls.get(), 1);
        cache.get_or_convert("/k", 4, || counting(&calls)).unwrap();
        cache.get_or_convert("/j", 3, || counting(&calls)).unwrap();
        assert_eq!(calls.get(), 3);
        for revision in 10..(10 + ENTRIES_KEPT as u64) {
            cache
                .get_or_convert("/k", revision, || counting(&calls))
                .unwrap();
        }
        assert_eq!(cache.lock().len(), ENTRIES_KEPT);
        assert!(!cache.lock().contains_key(&(3, "/k".to_owned())));
        cache
            .get_or_convert("/old", 1, || counting(&calls))
            .unwrap();
        assert!(!cache.lock().contains_key(&(1, "/old".to_owned())));
    }
}
