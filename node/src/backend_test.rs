//! Tests of [`ReplicaStorage`] over a single in-memory store standing in for a replica: the
//! transactions' preconditions, the error each failure maps to, and read consistency.

use super::*;
use crate::testing::LocalReplica;

fn storage() -> (
    std::sync::Arc<LocalReplica>,
    ReplicaStorage<std::sync::Arc<LocalReplica>>,
) {
    let replica = std::sync::Arc::new(LocalReplica::default());
    let storage = ReplicaStorage::new(replica.clone()).with_wait_bound(Duration::from_millis(50));
    (replica, storage)
}

fn v(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

// R-RES-012, R-HA-002: a create stores at the write's revision; a second create of the same key
// fails with AlreadyExists and leaves the first object unchanged.
#[tokio::test]
async fn create_is_exclusive() {
    let (_, storage) = storage();
    let first = storage.create("/a", v("1")).await.unwrap();
    assert_eq!(first.mod_revision, 2);
    assert_eq!(first.create_revision, 2);
    assert_eq!(
        storage.create("/a", v("2")).await,
        Err(StorageError::AlreadyExists { key: "/a".into() })
    );
    let read = storage
        .get("/a", ReadConsistency::Linearizable)
        .await
        .unwrap();
    assert_eq!(read, Some(first));
}

// R-RES-069, R-RES-070: an update with the current revision succeeds and moves the revision;
// a stale revision is a Conflict naming the current one; an absent key is NotFound.
#[tokio::test]
async fn update_is_compare_and_swap() {
    let (_, storage) = storage();
    let created = storage.create("/a", v("1")).await.unwrap();
    let updated = storage
        .update("/a", v("2"), created.mod_revision)
        .await
        .unwrap();
    assert!(updated.mod_revision > created.mod_revision);
    assert_eq!(updated.create_revision, created.create_revision);
    assert_eq!(updated.value, v("2"));

    assert_eq!(
        storage.update("/a", v("3"), created.mod_revision).await,
        Err(StorageError::Conflict {
            key: "/a".into(),
            expected: created.mod_revision,
            actual: updated.mod_revision,
        })
    );
    let current = storage.get("/a", ReadConsistency::Any).await.unwrap();
    assert_eq!(current.map(|o| o.value), Some(v("2")));

    assert_eq!(
        storage.update("/missing", v("x"), 5).await,
        Err(StorageError::NotFound {
            key: "/missing".into()
        })
    );
    // Revision 0 must not turn an update into a create.
    assert_eq!(
        storage.update("/missing", v("x"), 0).await,
        Err(StorageError::NotFound {
            key: "/missing".into()
        })
    );
    assert_eq!(
        storage.get("/missing", ReadConsistency::Any).await,
        Ok(None)
    );
}

// R-RES-062, R-RES-013, R-RES-055: delete returns the deleted version at the deletion's
// revision, honours the expected revision, and the name can be reused afterwards.
#[tokio::test]
async fn delete_honours_preconditions() {
    let (_, storage) = storage();
    let created = storage.create("/a", v("1")).await.unwrap();
    assert_eq!(
        storage.delete("/a", Some(created.mod_revision + 1)).await,
        Err(StorageError::Conflict {
            key: "/a".into(),
            expected: created.mod_revision + 1,
            actual: created.mod_revision,
        })
    );
    let deleted = storage
        .delete("/a", Some(created.mod_revision))
        .await
        .unwrap();
    assert_eq!(deleted.value, v("1"));
    assert_eq!(deleted.create_revision, created.create_revision);
    assert!(deleted.mod_revision > created.mod_revision);
    assert_eq!(storage.get("/a", ReadConsistency::Any).await, Ok(None));
    assert_eq!(
        storage.delete("/a", None).await,
        Err(StorageError::NotFound { key: "/a".into() })
    );
    let again = storage.create("/a", v("2")).await.unwrap();
    assert!(again.create_revision > created.create_revision);
}

// R-RES-033, R-RES-035: lists are in key order under the prefix only, pages continue after
// `start_after`, count what remains, and are served at one revision.
#[tokio::test]
async fn list_pages_in_key_order() {
    let (_, storage) = storage();
    for key in ["/p/c", "/p/a", "/p/b", "/q/a", "/p"] {
        storage.create(key, v(key)).await.unwrap();
    }
    let first = storage
        .list("/p/", None, 2, ReadConsistency::Linearizable)
        .await
        .unwrap();
    let keys: Vec<_> = first.items.iter().map(|o| o.key.as_str()).collect();
    assert_eq!(keys, vec!["/p/a", "/p/b"]);
    assert_eq!(first.remaining, 1);
    let rest = storage
        .list(
            "/p/",
            Some("/p/b"),
            2,
            ReadConsistency::Exact(first.revision),
        )
        .await
        .unwrap();
    let keys: Vec<_> = rest.items.iter().map(|o| o.key.as_str()).collect();
    assert_eq!(keys, vec!["/p/c"]);
    assert_eq!(rest.remaining, 0);
    assert_eq!(rest.revision, first.revision);

    let all = storage
        .list("/p/", Some("/a"), 0, ReadConsistency::Any)
        .await
        .unwrap();
    assert_eq!(all.items.len(), 3);
}

// R-HA-008, R-RES-072: an Exact read sees history at that revision; below the compaction
// point it is Compacted.
#[tokio::test]
async fn exact_reads_see_history_until_compacted() {
    let (replica, storage) = storage();
    let created = storage.create("/a", v("1")).await.unwrap();
    storage
        .update("/a", v("2"), created.mod_revision)
        .await
        .unwrap();
    let old = storage
        .get("/a", ReadConsistency::Exact(created.mod_revision))
        .await
        .unwrap();
    assert_eq!(old.map(|o| o.value), Some(v("1")));

    let head = replica.revision();
    replica.compact(head);
    assert_eq!(
        storage
            .get("/a", ReadConsistency::Exact(created.mod_revision))
            .await,
        Err(StorageError::Compacted {
            requested: created.mod_revision,
            compacted: head,
        })
    );
}

// R-HA-007: NotOlderThan and Exact wait for the revision; not reached within the bound they
// answer TooLargeRevision with the replica's current revision.
#[tokio::test]
async fn future_revisions_wait_then_time_out() {
    let (_, storage) = storage();
    let created = storage.create("/a", v("1")).await.unwrap();
    let future = created.mod_revision + 10;
    let expected = Err(StorageError::TooLargeRevision {
        requested: future,
        current: created.mod_revision,
    });
    assert_eq!(
        storage
            .get("/a", ReadConsistency::NotOlderThan(future))
            .await,
        expected
    );
    assert_eq!(
        storage
            .list("/", None, 0, ReadConsistency::Exact(future))
            .await
            .map(|p| p.revision),
        expected.map(|_: Option<StoredObject>| 0)
    );
    let reached = storage
        .get("/a", ReadConsistency::NotOlderThan(created.mod_revision))
        .await
        .unwrap();
    assert!(reached.is_some());
}

// R-HA-005: replica failures surface as Unavailable (retryable) or Internal (fatal), never as
// data.
#[tokio::test]
async fn replica_failures_map_to_retryable_or_fatal() {
    let (replica, storage) = storage();
    replica.fail_reads(Some(ReadError::Unavailable {
        reason: "no leader".into(),
    }));
    assert_eq!(
        storage.get("/a", ReadConsistency::Linearizable).await,
        Err(StorageError::Unavailable {
            reason: "cannot confirm a quorum: no leader".into()
        })
    );
    replica.fail_writes(Some(WriteError::Fatal {
        reason: "disk".into(),
    }));
    assert_eq!(
        storage.create("/a", v("1")).await,
        Err(StorageError::Internal {
            reason: "disk".into()
        })
    );
    // Any reads need no replica round trip, so they still answer.
    assert_eq!(storage.get("/a", ReadConsistency::Any).await, Ok(None));
}

// A write that certainly did not happen is retryable; one that may have happened, or did and
// is not applied here yet, is an unknown outcome, for every kind of write.
#[tokio::test]
async fn write_failures_keep_unknown_outcomes_apart() {
    let (replica, storage) = storage();
    let cases = [
        (
            WriteError::Unavailable {
                reason: "no leader".into(),
            },
            StorageError::Unavailable {
                reason: "no leader is available: no leader".into(),
            },
        ),
        (
            WriteError::ForwardToLeader {
                leader_id: None,
                leader_url: None,
            },
            StorageError::Unavailable {
                reason: "not the leader; last known leader None at None".into(),
            },
        ),
        (
            WriteError::OutcomeUnknown {
                reason: "leader lost".into(),
            },
            StorageError::OutcomeUnknown {
                reason: "the write's outcome is unknown: leader lost".into(),
            },
        ),
        (
            WriteError::NotApplied { revision: 7 },
            StorageError::OutcomeUnknown {
                reason: "write committed at revision 7 but not yet applied on this replica".into(),
            },
        ),
    ];
    for (failure, expected) in cases {
        replica.fail_writes(Some(failure));
        let expected = Err(expected);
        assert_eq!(storage.create("/a", v("1")).await, expected);
        assert_eq!(storage.update("/a", v("2"), 1).await, expected);
        assert_eq!(storage.delete("/a", None).await, expected);
    }
}

// R-RES-230, R-RES-232, R-HA-010: the backend's watch turns the replica's events into changes;
// a delete carries the last value at the deletion's revision.
#[tokio::test]
async fn watch_delivers_puts_and_deletes_with_the_last_value() {
    let (_replica, storage) = storage();
    let created = storage.create("/p/a", v("1")).await.unwrap();
    let mut watch = storage.watch("/p/", 0).await.unwrap();
    let updated = storage
        .update("/p/a", v("2"), created.mod_revision)
        .await
        .unwrap();
    let deleted = storage.delete("/p/a", None).await.unwrap();
    let mut batches = Vec::new();
    for _ in 0..3 {
        batches.push(watch.next().await.unwrap().unwrap());
    }
    let created_change = &batches[0].changes[0];
    assert_eq!(created_change.kind, ChangeKind::Put);
    assert_eq!(created_change.previous, None);
    let update_change = &batches[1].changes[0];
    assert_eq!(update_change.object.mod_revision, updated.mod_revision);
    assert_eq!(update_change.previous.as_ref().unwrap().value, v("1"));
    let delete_change = &batches[2].changes[0];
    assert_eq!(delete_change.kind, ChangeKind::Delete);
    assert_eq!(delete_change.object.value, v("2"));
    assert_eq!(delete_change.object.mod_revision, deleted.mod_revision);
    assert_eq!(delete_change.object.create_revision, created.mod_revision);
    assert_eq!(watch.progress(), deleted.mod_revision);
}

// R-RES-072: a watch from a compacted revision is a typed error.
#[tokio::test]
async fn watch_from_a_compacted_revision_fails() {
    let (replica, storage) = storage();
    let created = storage.create("/p/a", v("1")).await.unwrap();
    storage
        .update("/p/a", v("2"), created.mod_revision)
        .await
        .unwrap();
    let head = replica.revision();
    replica.compact(head);
    assert!(matches!(
        storage.watch("/p/", created.mod_revision).await.err(),
        Some(StorageError::Compacted { .. })
    ));
}
