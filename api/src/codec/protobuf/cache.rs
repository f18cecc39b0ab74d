//! The message bytes of stored object versions, encoded at most once per replica while they
//! stay cached: gets, list items and watch events of the same version share one encoding.
//! An object version is named by its `(uid, resourceVersion, apiVersion)`, which never names
//! two different objects, or (a list's items) by its storage key, revision and apiVersion,
//! found by revision without allocating; the cache is bounded by the bytes it holds (oldest
//! out first).

use std::collections::HashMap;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;

use serde_json::Value;

use super::EncodeError;

/// The most message bytes a replica's cache holds.
pub const MAX_CACHED_BYTES: usize = 64 * 1024 * 1024;

/// One object version as served: uid, resourceVersion, apiVersion.
type Key = (String, String, String);

/// A byte-bounded cache of message bytes by object version; one per replica (its router), as
/// uids drawn from a seeded source may repeat across the replicas of one process.
pub struct EncodingCache {
    max_bytes: usize,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for EncodingCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (bytes, entries) = self.usage();
        f.debug_struct("EncodingCache")
            .field("max_bytes", &self.max_bytes)
            .field("bytes", &bytes)
            .field("entries", &entries)
            .finish()
    }
}

/// A stored version: storage key and apiVersion (its revision is its map key), and message.
type Stored = (Box<str>, Box<str>, Arc<[u8]>);

/// An entry, in the order of insertion.
enum Entry {
    Object(Key),
    /// The revision, storage key and apiVersion of a stored version.
    Stored(u64, Box<str>, Box<str>),
}

#[derive(Default)]
struct Inner {
    entries: HashMap<Key, Arc<[u8]>>,
    /// Stored versions by revision: the few keys one revision wrote, each in the apiVersions
    /// it was served as.
    stored: HashMap<u64, Vec<Stored>>,
    order: VecDeque<Entry>,
    bytes: usize,
}

impl Inner {
    fn find_stored(&self, storage_key: &str, revision: u64, api_version: &str) -> Option<&Stored> {
        (self.stored.get(&revision)?.iter())
            .find(|(k, a, _)| **k == *storage_key && **a == *api_version)
    }

    /// Drops the oldest entries until at most `max_bytes` are held.
    fn evict(&mut self, max_bytes: usize) {
        while self.bytes > max_bytes {
            let gone = match self.order.pop_front() {
                None => break,
                Some(Entry::Object(key)) => self.entries.remove(&key),
                Some(Entry::Stored(revision, key, api_version)) => {
                    let Some(versions) = self.stored.get_mut(&revision) else {
                        continue;
                    };
                    let at = (versions.iter()).position(|(k, a, _)| *k == key && *a == api_version);
                    let gone = at.map(|i| versions.swap_remove(i).2);
                    if versions.is_empty() {
                        self.stored.remove(&revision);
                    }
                    gone
                }
            };
            self.bytes -= gone.map_or(0, |g| g.len());
        }
    }
}

impl EncodingCache {
    /// An empty cache holding at most `max_bytes` of messages.
    pub fn new(max_bytes: usize) -> Self {
        Self {
            max_bytes,
            inner: Mutex::default(),
        }
    }

    /// The message bytes of `object` served as `api_version`: the cached ones, or `encode`'s,
    /// cached when the object names its version (uid and resourceVersion).
    pub fn get_or_encode(
        &self,
        object: &Value,
        api_version: &str,
        encode: impl FnOnce() -> Result<Vec<u8>, EncodeError>,
    ) -> Result<Arc<[u8]>, EncodeError> {
        let Some(key) = key(object, api_version) else {
            return encode().map(Arc::from);
        };
        self.get_or_encode_version(key, encode)
    }

    /// The message bytes of the stored version of `storage_key` at `revision` served as
    /// `api_version`: named without reading the object, and found without allocating.
    pub fn get_or_encode_stored(
        &self,
        storage_key: &str,
        revision: u64,
        api_version: &str,
        encode: impl FnOnce() -> Result<Vec<u8>, EncodeError>,
    ) -> Result<Arc<[u8]>, EncodeError> {
        let found = self
            .lock()
            .find_stored(storage_key, revision, api_version)
            .map(|(_, _, bytes)| bytes.clone());
        if let Some(found) = found {
            return Ok(found);
        }
        // Encoded outside the lock: two first readers may both encode, with equal results.
        let bytes: Arc<[u8]> = Arc::from(encode()?);
        if bytes.len() <= self.max_bytes {
            let mut inner = self.lock();
            if inner
                .find_stored(storage_key, revision, api_version)
                .is_none()
            {
                let versions = inner.stored.entry(revision).or_default();
                versions.push((storage_key.into(), api_version.into(), bytes.clone()));
                inner.bytes += bytes.len();
                let entry = Entry::Stored(revision, storage_key.into(), api_version.into());
                inner.order.push_back(entry);
            }
            inner.evict(self.max_bytes);
        }
        Ok(bytes)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn get_or_encode_version(
        &self,
        key: Key,
        encode: impl FnOnce() -> Result<Vec<u8>, EncodeError>,
    ) -> Result<Arc<[u8]>, EncodeError> {
        let found = self.lock().entries.get(&key).cloned();
        if let Some(found) = found {
            return Ok(found);
        }
        // Encoded outside the lock: two first readers may both encode, with equal results.
        let bytes: Arc<[u8]> = Arc::from(encode()?);
        if bytes.len() <= self.max_bytes {
            let mut inner = self.lock();
            if inner.entries.insert(key.clone(), bytes.clone()).is_none() {
                inner.bytes += bytes.len();
                inner.order.push_back(Entry::Object(key));
            }
            inner.evict(self.max_bytes);
        }
        Ok(bytes)
    }

    /// The bytes and entries held.
    pub fn usage(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.bytes, inner.order.len())
    }
}

fn key(object: &Value, api_version: &str) -> Option<Key> {
    let metadata = object.get("metadata")?;
    let text = |k: &str| {
        metadata
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    Some((
        text("uid")?.to_owned(),
        text("resourceVersion")?.to_owned(),
        api_version.to_owned(),
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(uid: &str, rv: &str) -> Value {
        json!({"metadata": {"uid": uid, "resourceVersion": rv}})
    }

    // Each version is encoded once while cached; the cache never holds more than its bound.
    #[test]
    fn versions_are_encoded_once_within_the_bound() {
        let cache = EncodingCache::new(100);
        let count = std::cell::Cell::new(0);
        let encode = |n: usize| {
            count.set(count.get() + 1);
            Ok(vec![7; n])
        };
        for _ in 0..3 {
            let bytes = cache
                .get_or_encode(&object("a", "1"), "v1", || encode(40))
                .unwrap();
            assert_eq!(bytes.len(), 40);
        }
        assert_eq!(count.get(), 1);
        // Another served version, or another resourceVersion, is another entry.
        cache
            .get_or_encode(&object("a", "1"), "v2", || encode(40))
            .unwrap();
        cache
            .get_or_encode(&object("a", "2"), "v1", || encode(40))
            .unwrap();
        assert_eq!(count.get(), 3);
        let (bytes, entries) = cache.usage();
        assert!(bytes <= 100, "{bytes}");
        assert_eq!(entries, 2, "the oldest version was dropped");
        cache
            .get_or_encode(&object("a", "1"), "v1", || encode(40))
            .unwrap();
        assert_eq!(count.get(), 4, "a dropped version is encoded again");
        // Objects without a version, and messages above the bound, are not kept.
        cache
            .get_or_encode(&json!({"metadata": {}}), "v1", || encode(10))
            .unwrap();
        cache
            .get_or_encode(&object("big", "1"), "v1", || encode(500))
            .unwrap();
        assert!(cache.usage().0 <= 100);
    }

    // Stored versions are named by storage key, revision and apiVersion, encoded once while
    // cached, and dropped oldest first with the objects' versions within one bound.
    #[test]
    fn stored_versions_are_encoded_once_within_the_bound() {
        let cache = EncodingCache::new(100);
        let count = std::cell::Cell::new(0);
        let encode = |n: usize| {
            count.set(count.get() + 1);
            Ok(vec![7; n])
        };
        for _ in 0..3 {
            let bytes = cache
                .get_or_encode_stored("/a", 5, "v1", || encode(30))
                .unwrap();
            assert_eq!(bytes.len(), 30);
        }
        assert_eq!(count.get(), 1);
        // Another key at the same revision, or another apiVersion, is another entry.
        cache
            .get_or_encode_stored("/b", 5, "v1", || encode(30))
            .unwrap();
        cache
            .get_or_encode_stored("/a", 5, "v2", || encode(30))
            .unwrap();
        assert_eq!(count.get(), 3);
        assert_eq!(cache.usage(), (90, 3));
        // An object's version pushes out the oldest stored one.
        cache
            .get_or_encode(&object("u", "1"), "v1", || encode(30))
            .unwrap();
        assert_eq!(cache.usage(), (90, 3));
        cache
            .get_or_encode_stored("/b", 5, "v1", || encode(30))
            .unwrap();
        cache
            .get_or_encode_stored("/a", 5, "v2", || encode(30))
            .unwrap();
        assert_eq!(count.get(), 4, "the newer ones are still cached");
        cache
            .get_or_encode_stored("/a", 5, "v1", || encode(30))
            .unwrap();
        assert_eq!(count.get(), 5, "the oldest was dropped");
        assert!(cache.usage().0 <= 100);
    }
}
