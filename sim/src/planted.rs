//! Bugs planted on purpose in the replicas, to prove end to end that the checkers catch a broken
//! server and that the runner's failing path works: the exit status, the reproduce command, the
//! history and trace file (`apiary-sim --plant-bug NAME --reproduce S`, `tests/runner.rs`).
//!
//! A scenario builds its cluster from [`crate::cluster::ClusterOptions::new`], which takes the
//! bug planted on the current thread ([`with_planted`]); so the runner plants a bug in every
//! scenario without each scenario passing it along.

use std::cell::Cell;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use apiary_api::storage::Guard;
use apiary_api::storage::ListPage;
use apiary_api::storage::ReadConsistency;
use apiary_api::storage::Revision;
use apiary_api::storage::Storage;
use apiary_api::storage::StorageError;
use apiary_api::storage::StoredObject;
use apiary_api::storage::WatchStream;
use bytes::Bytes;

/// A deliberate defect the replicas can be built with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlantedBug {
    /// "Most Recent" gets and lists are served from the replica's local state without a read
    /// index, as a follower that skipped the quorum check would (breaks R-HA-004, R-HA-005).
    StaleQuorumReads,
}

impl PlantedBug {
    /// Every planted bug, by its command-line name.
    pub const ALL: &[(&str, PlantedBug)] = &[("stale-quorum-reads", PlantedBug::StaleQuorumReads)];

    /// The bug's command-line name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, bug)| *bug == self)
            .map_or("?", |(name, _)| name)
    }

    /// `storage` with the bug in it.
    pub fn plant(self, storage: Arc<dyn Storage>) -> Arc<dyn Storage> {
        match self {
            Self::StaleQuorumReads => Arc::new(StaleQuorumReads(storage)),
        }
    }
}

impl fmt::Display for PlantedBug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PlantedBug {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, bug)| *bug)
            .ok_or_else(|| {
                let known: Vec<&str> = Self::ALL.iter().map(|(n, _)| *n).collect();
                format!("unknown bug {name:?}; known: {}", known.join(", "))
            })
    }
}

thread_local! {
    static PLANTED: Cell<Option<PlantedBug>> = const { Cell::new(None) };
}

/// Runs `f` with `bug` planted in every cluster built on this thread meanwhile.
pub fn with_planted<T>(bug: Option<PlantedBug>, f: impl FnOnce() -> T) -> T {
    let previous = PLANTED.replace(bug);
    let result = f();
    PLANTED.set(previous);
    result
}

/// The bug planted on this thread, if any.
pub fn planted() -> Option<PlantedBug> {
    PLANTED.get()
}

/// [`PlantedBug::StaleQuorumReads`]: every linearizable read answered from local state.
struct StaleQuorumReads(Arc<dyn Storage>);

/// What a read asked for, as the planted bug serves it.
fn stale(consistency: ReadConsistency) -> ReadConsistency {
    match consistency {
        ReadConsistency::Linearizable => ReadConsistency::Any,
        other => other,
    }
}

#[async_trait::async_trait]
impl Storage for StaleQuorumReads {
    async fn create(&self, key: &str, value: Bytes) -> Result<StoredObject, StorageError> {
        self.0.create(key, value).await
    }

    async fn create_guarded(
        &self,
        key: &str,
        value: Bytes,
        guard: &Guard,
    ) -> Result<StoredObject, StorageError> {
        self.0.create_guarded(key, value, guard).await
    }

    async fn get(
        &self,
        key: &str,
        consistency: ReadConsistency,
    ) -> Result<Option<StoredObject>, StorageError> {
        self.0.get(key, stale(consistency)).await
    }

    async fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
        limit: usize,
        consistency: ReadConsistency,
    ) -> Result<ListPage, StorageError> {
        self.0
            .list(prefix, start_after, limit, stale(consistency))
            .await
    }

    async fn update(
        &self,
        key: &str,
        value: Bytes,
        expected: Revision,
    ) -> Result<StoredObject, StorageError> {
        self.0.update(key, value, expected).await
    }

    async fn watch(
        &self,
        prefix: &str,
        after: Revision,
    ) -> Result<Box<dyn WatchStream>, StorageError> {
        self.0.watch(prefix, after).await
    }

    async fn delete(
        &self,
        key: &str,
        expected: Option<Revision>,
    ) -> Result<StoredObject, StorageError> {
        self.0.delete(key, expected).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_an_unknown_name_lists_the_known_ones() {
        for (name, bug) in PlantedBug::ALL {
            assert_eq!(name.parse::<PlantedBug>(), Ok(*bug));
            assert_eq!(bug.to_string(), *name);
        }
        let error = "stale-reads".parse::<PlantedBug>().unwrap_err();
        assert!(error.contains("stale-quorum-reads"), "{error}");
    }

    #[test]
    fn a_bug_is_planted_only_within_its_scope() {
        assert_eq!(planted(), None);
        let inside = with_planted(Some(PlantedBug::StaleQuorumReads), planted);
        assert_eq!(inside, Some(PlantedBug::StaleQuorumReads));
        assert_eq!(planted(), None);
    }
}
