//! The stored object count of every resource (`apiserver_resource_objects`), kept as the store
//! applies: counted once at start (and again after a snapshot replaced the store or the count
//! fell behind the apply stream), then moved by each create and delete the replica applies.
//! A scrape only copies the counts; nothing scans the store per scrape.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::Weak;

use apiary_api::metrics::Metrics;
use apiary_api::registry::ObjectKey;
use apiary_raft::mvcc::EventKind;
use apiary_raft::mvcc::Revision;
use apiary_raft::mvcc::Store;
use apiary_raft::mvcc::prefix_end;
use apiary_raft::replica::Replica;
use apiary_raft::state_machine::ApplyNotice;
use tokio::sync::broadcast::error::RecvError;

/// Where the API keeps objects: `/registry/<group, core for the core group>/<resource>/...`.
const REGISTRY: &str = "/registry/";

/// Group and resource -> stored objects.
type Counts = BTreeMap<(String, String), i64>;

/// Keeps the object counts of `replica` and sets them on `metrics` at every scrape, until the
/// replica's apply stream ends.
pub fn track_object_counts(metrics: &Metrics, replica: &Arc<Replica>) {
    let counts = Arc::new(Mutex::new(Counts::new()));
    let shown = counts.clone();
    let scraped = metrics.clone();
    metrics.on_scrape(move || {
        for ((group, resource), count) in lock(&shown).iter() {
            scraped.set_object_count(group, resource, *count);
        }
    });
    let weak = Arc::downgrade(replica);
    let mut notices = replica.subscribe_notices();
    tokio::spawn(async move {
        let mut counted_at = recount(&weak, &counts);
        loop {
            match notices.recv().await {
                Ok(notice) => match notice.as_ref() {
                    ApplyNotice::Applied { revision, events } if *revision > counted_at => {
                        let mut counts = lock(&counts);
                        for event in events {
                            let change = match (event.kind, &event.prev_kv) {
                                (EventKind::Put, None) => 1,
                                (EventKind::Delete, Some(_)) => -1,
                                _ => continue,
                            };
                            if let Some(key) = resource_of(&event.kv.key) {
                                *counts.entry(key).or_default() += change;
                            }
                        }
                    }
                    ApplyNotice::Restored { .. } => counted_at = recount(&weak, &counts),
                    ApplyNotice::Applied { .. } | ApplyNotice::Compacted { .. } => {}
                },
                Err(RecvError::Lagged(_)) => counted_at = recount(&weak, &counts),
                Err(RecvError::Closed) => return,
            }
        }
    });
}

/// Counts every resource's objects afresh (resetting the ones now empty to 0); the revision
/// counted at.
fn recount(replica: &Weak<Replica>, counts: &Mutex<Counts>) -> Revision {
    let Some(replica) = replica.upgrade() else {
        return Revision::MAX;
    };
    let (fresh, revision) = replica.with_store(|store| (count(store), store.revision()));
    let mut counts = lock(counts);
    for count in counts.values_mut() {
        *count = 0;
    }
    counts.extend(fresh);
    revision
}

/// Every resource's object count in `store`: one range per resource, counting keys without
/// copying them (only the first of each resource is read).
fn count(store: &Store) -> Counts {
    let mut counts = Counts::new();
    let end = prefix_end(REGISTRY);
    let mut start = REGISTRY.to_owned();
    while let Ok(first) = store.range(&start, end.as_deref(), None, 1) {
        let Some(kv) = first.kvs.first() else {
            break;
        };
        let Some((group, resource)) = resource_of(&kv.key) else {
            start = format!("{}\0", kv.key);
            continue;
        };
        let stored = if group.is_empty() { "core" } else { &group };
        let prefix = format!("{REGISTRY}{stored}/{resource}/");
        if let Ok(all) = store.range_prefix(&prefix, None, 1) {
            let n = u64::try_from(all.kvs.len()).unwrap_or(0) + all.remaining;
            counts.insert(
                (group.clone(), resource.clone()),
                i64::try_from(n).unwrap_or(i64::MAX),
            );
        }
        match prefix_end(&prefix) {
            Some(next) => start = next,
            None => break,
        }
    }
    counts
}

/// The group (empty for the core group) and resource of an object's key.
fn resource_of(key: &str) -> Option<(String, String)> {
    let key = ObjectKey::parse(key)?;
    Some((key.api_group().to_owned(), key.plural.to_owned()))
}

fn lock(counts: &Mutex<Counts>) -> std::sync::MutexGuard<'_, Counts> {
    counts.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_their_group_and_resource() {
        let of = |key| resource_of(key);
        assert_eq!(
            of("/registry/core/configmaps/default/a"),
            Some((String::new(), "configmaps".to_owned()))
        );
        assert_eq!(
            of("/registry/apps/deployments/ns/d"),
            Some(("apps".to_owned(), "deployments".to_owned()))
        );
        assert_eq!(
            of("/registry/core/nodes/n").map(|k| k.1),
            Some("nodes".into())
        );
        assert_eq!(of("/registry/core/configmaps/"), None);
        assert_eq!(of("/other/key"), None);
    }
}
