//! The bounded answer cache of the webhooks (TokenReview, SubjectAccessReview): answers kept
//! under a SHA-256 digest of the question (so no token or attribute is held in the clear)
//! until their time to live ends; when full, expired answers go first, then the one expiring
//! soonest.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

/// The most answers a cache holds.
const CAPACITY: usize = 4096;

/// Answers by digest, each with its expiry.
pub struct AnswerCache<V> {
    entries: Mutex<HashMap<[u8; 32], (Instant, V)>>,
}

impl<V> Default for AnswerCache<V> {
    fn default() -> Self {
        Self {
            entries: Mutex::default(),
        }
    }
}

impl<V: Clone> AnswerCache<V> {
    /// The answer under `key`, unless it expired.
    pub fn get(&self, key: &[u8; 32]) -> Option<V> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        (entries.get(key))
            .filter(|(expires, _)| *expires > Instant::now())
            .map(|(_, answer)| answer.clone())
    }

    /// Keeps `answer` under `key` for `ttl` (not at all when `ttl` is zero).
    pub fn insert(&self, key: [u8; 32], answer: &V, ttl: Duration) {
        if ttl.is_zero() {
            return;
        }
        let now = Instant::now();
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= CAPACITY {
            entries.retain(|_, (expires, _)| *expires > now);
        }
        if entries.len() >= CAPACITY {
            let first = (entries.iter())
                .min_by_key(|(_, (expires, _))| *expires)
                .map(|(key, _)| *key);
            if let Some(first) = first {
                entries.remove(&first);
            }
        }
        entries.insert(key, (now + ttl, answer.clone()));
    }
}
