//! Watch events encoded once per replica: every watch that sends the same object version as
//! the same event type in the same group-version shares one encoding (a version that is not
//! the storage version sends converted objects, so it has encodings of its own), so a change fanned out to a thousand watchers is
//! spliced and copied once, not a thousand times (an object version is encoded at most once
//! per format).

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::MutexGuard;

use bytes::Bytes;

use super::event::EventType;
use crate::storage::Revision;

/// How many of the newest revisions keep their encoded events. Watchers within this many
/// revisions of each other share encodings; one further behind encodes its own.
const REVISIONS_KEPT: usize = 1024;

/// One event of a revision: its type, the served `apiVersion`, the object's key.
type EventId = (EventType, String, String);

/// One revision's encoded events.
type RevisionEvents = Vec<(EventId, Bytes)>;

/// The encoded events of the newest revisions, by revision.
#[derive(Debug, Default)]
pub(crate) struct EncodedEvents {
    recent: Mutex<BTreeMap<Revision, RevisionEvents>>,
}

impl EncodedEvents {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<Revision, RevisionEvents>> {
        // The map holds only finished encodings, so a panic elsewhere cannot leave it torn.
        self.recent.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The event `kind` of the version of `key` at `revision`, as `api_version` serves it,
    /// encoded by `encode` unless another watch already did. Encoding happens outside the
    /// lock; two watches racing on the same event both encode it, and the same bytes are kept
    /// once.
    pub(crate) fn get_or_encode<E>(
        &self,
        kind: EventType,
        api_version: &str,
        key: &str,
        revision: Revision,
        encode: impl FnOnce() -> Result<Bytes, E>,
    ) -> Result<Bytes, E> {
        let same =
            |(k, gv, event_key): &EventId| *k == kind && gv == api_version && event_key == key;
        let found = self.lock().get(&revision).and_then(|events| {
            events
                .iter()
                .find(|(id, _)| same(id))
                .map(|(_, bytes)| bytes.clone())
        });
        if let Some(bytes) = found {
            return Ok(bytes);
        }
        let bytes = encode()?;
        let mut recent = self.lock();
        if recent.len() >= REVISIONS_KEPT
            && recent
                .first_key_value()
                .is_some_and(|(oldest, _)| revision < *oldest)
        {
            // Older than everything kept: sharing it would evict what live watches need.
            return Ok(bytes);
        }
        let events = recent.entry(revision).or_default();
        if !events.iter().any(|(id, _)| same(id)) {
            let id = (kind, api_version.to_owned(), key.to_owned());
            events.push((id, bytes.clone()));
        }
        while recent.len() > REVISIONS_KEPT {
            recent.pop_first();
        }
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::convert::Infallible;

    use super::*;

    fn encode_counting(calls: &Cell<u32>, text: &'static str) -> Result<Bytes, Infallible> {
        calls.set(calls.get() + 1);
        Ok(Bytes::from_static(text.as_bytes()))
    }

    #[test]
    fn one_event_is_encoded_once_for_every_watch() {
        let events = EncodedEvents::default();
        let calls = Cell::new(0);
        for _ in 0..1000 {
            let bytes = events
                .get_or_encode(EventType::Added, "v1", "/k", 5, || {
                    encode_counting(&calls, "a")
                })
                .unwrap();
            assert_eq!(bytes, "a");
        }
        assert_eq!(calls.get(), 1);
        // Another type, key or revision is another event.
        events
            .get_or_encode(EventType::Modified, "v1", "/k", 5, || {
                encode_counting(&calls, "m")
            })
            .unwrap();
        events
            .get_or_encode(EventType::Added, "v1", "/j", 5, || {
                encode_counting(&calls, "j")
            })
            .unwrap();
        events
            .get_or_encode(EventType::Added, "v1", "/k", 6, || {
                encode_counting(&calls, "6")
            })
            .unwrap();
        assert_eq!(calls.get(), 4);
        // Another served version of the same object is another event.
        events
            .get_or_encode(EventType::Added, "events.k8s.io/v1", "/k", 5, || {
                encode_counting(&calls, "e")
            })
            .unwrap();
        assert_eq!(calls.get(), 5);
    }

    #[test]
    fn only_the_newest_revisions_are_kept() {
        let events = EncodedEvents::default();
        let calls = Cell::new(0);
        let total = REVISIONS_KEPT as u64 + 10;
        for revision in 1..=total {
            events
                .get_or_encode(EventType::Added, "v1", "/k", revision, || {
                    encode_counting(&calls, "x")
                })
                .unwrap();
        }
        assert_eq!(events.lock().len(), REVISIONS_KEPT);
        assert_eq!(events.lock().first_key_value().map(|(r, _)| *r), Some(11));
        // An old revision is encoded for its watch but not kept.
        events
            .get_or_encode(EventType::Added, "v1", "/k", 1, || {
                encode_counting(&calls, "old")
            })
            .unwrap();
        assert!(!events.lock().contains_key(&1));
    }
}
