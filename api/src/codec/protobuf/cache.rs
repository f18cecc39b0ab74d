//! The message bytes of stored object versions, encoded at most once per replica while they
//! stay cached: gets, list items and watch events of the same version share one encoding.
//! An object version is named by its `(uid, resourceVersion, apiVersion)`, which never names
//! two different objects; the cache is bounded by the bytes it holds (oldest out first).

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

#[derive(Default)]
struct Inner {
    entries: HashMap<Key, Arc<[u8]>>,
    order: VecDeque<Key>,
    bytes: usize,
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
    /// `api_version`: named without reading the object (storage keys begin with `/`, so they
    /// never equal a uid).
    pub fn get_or_encode_stored(
        &self,
        storage_key: &str,
        revision: u64,
        api_version: &str,
        encode: impl FnOnce() -> Result<Vec<u8>, EncodeError>,
    ) -> Result<Arc<[u8]>, EncodeError> {
        let key = (
            storage_key.to_owned(),
            revision.to_string(),
            api_version.to_owned(),
        );
        self.get_or_encode_version(key, encode)
    }

    fn get_or_encode_version(
        &self,
        key: Key,
        encode: impl FnOnce() -> Result<Vec<u8>, EncodeError>,
    ) -> Result<Arc<[u8]>, EncodeError> {
        let lock = |inner: &Mutex<Inner>| {
            inner
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entries
                .get(&key)
                .cloned()
        };
        if let Some(found) = lock(&self.inner) {
            return Ok(found);
        }
        // Encoded outside the lock: two first readers may both encode, with equal results.
        let bytes: Arc<[u8]> = Arc::from(encode()?);
        if bytes.len() <= self.max_bytes {
            let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
            if inner.entries.insert(key.clone(), bytes.clone()).is_none() {
                inner.bytes += bytes.len();
                inner.order.push_back(key);
            }
            while inner.bytes > self.max_bytes {
                let Some(oldest) = inner.order.pop_front() else {
                    break;
                };
                if let Some(gone) = inner.entries.remove(&oldest) {
                    inner.bytes -= gone.len();
                }
            }
        }
        Ok(bytes)
    }

    /// The bytes and entries held.
    pub fn usage(&self) -> (usize, usize) {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        (inner.bytes, inner.entries.len())
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
}
