//! Work estimation: how many seats a request takes. A LIST (and the initial events of a
//! watch that gets them) takes one seat per 100 objects it may return, 1 to 10, from the
//! resource's estimated object count (read from the store at most once a minute per
//! resource, in the background) and its `limit`; anything else takes one seat.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::PoisonError;
use std::time::Duration;

use tokio::time::Instant;

use crate::request::QueryParams;
use crate::request::RequestInfo;
use crate::request::Verb;
use crate::storage::ReadConsistency;
use crate::storage::Storage;

/// Objects one seat covers.
const OBJECTS_PER_SEAT: u64 = 100;
/// The fewest and the most seats of a request.
const MIN_SEATS: usize = 1;
/// The most seats of a request.
pub const MAX_SEATS: usize = 10;
/// How long an object count is used before it is read again.
const COUNT_TTL: Duration = Duration::from_secs(60);

/// The seats of a request that may return `objects` objects.
pub fn seats_for(objects: u64) -> usize {
    (objects.div_ceil(OBJECTS_PER_SEAT) as usize).clamp(MIN_SEATS, MAX_SEATS)
}

/// A resource's object count and when it was last read (`None`: never).
type Count = (u64, Option<Instant>);

/// The estimated number of objects of each resource (by key prefix).
#[derive(Default, Clone)]
pub struct ObjectCounts {
    counts: Arc<Mutex<HashMap<String, Count>>>,
}

impl ObjectCounts {
    /// The seats of a request: `prefix` is the key prefix of its resource (`None` for
    /// requests that are not on a stored resource).
    pub fn seats(
        &self,
        info: &RequestInfo,
        query: &QueryParams,
        prefix: Option<String>,
        storage: &Arc<dyn Storage>,
    ) -> usize {
        let lists = match info.verb {
            Verb::List => true,
            Verb::Watch => query.get("sendInitialEvents") == Some("true"),
            _ => false,
        };
        let Some(prefix) = prefix.filter(|_| lists) else {
            return MIN_SEATS;
        };
        let count = self.count(prefix, storage);
        let limit = query
            .get("limit")
            .and_then(|l| l.parse::<u64>().ok())
            .filter(|l| *l > 0);
        seats_for(limit.map_or(count, |l| l.min(count)))
    }

    /// The last count of `prefix`; starts a background read when it is missing or stale.
    fn count(&self, prefix: String, storage: &Arc<dyn Storage>) -> u64 {
        let now = Instant::now();
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = counts.entry(prefix.clone()).or_insert((0, None));
        let stale = entry.1.is_none_or(|at| now.duration_since(at) >= COUNT_TTL);
        let count = entry.0;
        if stale {
            // Marked read now, so one request starts one read.
            entry.1 = Some(now);
            let (counts, storage) = (self.counts.clone(), storage.clone());
            tokio::spawn(async move {
                let read = storage.list(&prefix, None, 1, ReadConsistency::Any).await;
                if let Ok(page) = read {
                    let found = page.items.len() as u64 + page.remaining;
                    let mut counts = counts.lock().unwrap_or_else(PoisonError::into_inner);
                    counts.insert(prefix, (found, Some(Instant::now())));
                }
            });
        }
        count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seats_grow_with_objects_between_1_and_10() {
        assert_eq!(seats_for(0), 1);
        assert_eq!(seats_for(100), 1);
        assert_eq!(seats_for(101), 2);
        assert_eq!(seats_for(950), 10);
        assert_eq!(seats_for(1_000_000), 10);
    }
}
