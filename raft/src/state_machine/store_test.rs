//! Unit tests of the state machine: apply, notices, snapshots.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::time::Duration;

use futures::stream;
use openraft::storage::RaftSnapshotBuilder;

use super::*;
use crate::command::Command;
use crate::command::Op;
use crate::command::Txn;
use crate::log::StdFs;
use crate::wire;

fn log_id(index: u64) -> typ::LogId {
    typ::LogId::from(wire::LogId {
        term: 1,
        node_id: 1,
        index,
    })
}

fn entry(index: u64, payload: EntryPayload<Command, typ::NodeId, typ::Node>) -> typ::Entry {
    typ::Entry {
        log_id: log_id(index),
        payload,
    }
}

fn put(key: &str, value: &str) -> EntryPayload<Command, typ::NodeId, typ::Node> {
    EntryPayload::Normal(Command::txn(Txn {
        compares: vec![],
        success: vec![Op::put(key, value.as_bytes().to_vec())],
        failure: vec![],
    }))
}

fn membership() -> openraft::Membership<typ::NodeId, typ::Node> {
    let nodes = BTreeMap::from([(1, typ::Node::new("http://a"))]);
    openraft::Membership::new(vec![BTreeSet::from([1])], nodes).unwrap()
}

async fn apply(sm: &mut StateMachineStore, entries: Vec<typ::Entry>) {
    let items: Vec<Result<EntryResponder<TypeConfig>, io::Error>> =
        entries.into_iter().map(|e| Ok((e, None))).collect();
    sm.apply(stream::iter(items)).await.unwrap();
}

// R-HA-001, R-HA-002: the revision of every applied entry is its log index, whatever its kind.
#[tokio::test]
async fn revision_is_the_log_index_for_every_entry_kind() {
    let dir = tempfile::tempdir().unwrap();
    let mut sm = StateMachineStore::open(Arc::new(StdFs), dir.path())
        .await
        .unwrap();
    let shared = sm.shared();
    let mut notices = shared.subscribe_notices();
    apply(
        &mut sm,
        vec![
            entry(1, EntryPayload::Blank),
            entry(2, put("/a", "1")),
            entry(3, EntryPayload::Normal(Command::compact(100))),
            entry(4, EntryPayload::Membership(membership())),
            entry(6, put("/a", "2")),
        ],
    )
    .await;

    assert_eq!(6, shared.applied());
    let kv = shared.with_store(|s| s.get("/a", None).unwrap().unwrap());
    assert_eq!((2, 6, 2), (kv.create_revision, kv.mod_revision, kv.version));
    let old = shared.with_store(|s| s.get("/a", Some(5)).unwrap().unwrap());
    assert_eq!(b"1".as_slice(), old.value.as_ref());

    let (applied, membership_state) = sm.applied_state().await.unwrap();
    assert_eq!(Some(log_id(6)), applied);
    assert_eq!(Some(log_id(4)), *membership_state.log_id());

    let first = notices.recv().await.unwrap();
    assert!(matches!(&*first, ApplyNotice::Applied { revision: 2, events } if events.len() == 1));
    let second = notices.recv().await.unwrap();
    assert!(matches!(&*second, ApplyNotice::Applied { revision: 6, .. }));
}

// A compaction beyond the applied revision is answered with an error, and the entry is still
// consumed so every replica stays at the same revision.
#[tokio::test]
async fn failed_compaction_is_consumed_with_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut sm = StateMachineStore::open(Arc::new(StdFs), dir.path())
        .await
        .unwrap();
    let shared = SharedState::new();
    let mut notices = shared.subscribe_notices();
    let response = shared.apply(3, Some(&Command::compact(9))).unwrap();
    assert_eq!(3, response.revision);
    assert!(response.error.is_some());
    assert!(notices.try_recv().is_err());
    assert_eq!(3, shared.with_store(Store::revision));
    apply(
        &mut sm,
        vec![entry(3, EntryPayload::Normal(Command::compact(9)))],
    )
    .await;
    assert_eq!(3, sm.shared().applied());
}

#[tokio::test]
async fn replaying_an_applied_index_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut sm = StateMachineStore::open(Arc::new(StdFs), dir.path())
        .await
        .unwrap();
    apply(&mut sm, vec![entry(1, put("/a", "1"))]).await;
    let again = vec![Ok((entry(1, put("/a", "2")), None))];
    assert!(sm.apply(stream::iter(again)).await.is_err());
}

#[tokio::test]
async fn wait_applied_returns_once_reached_or_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let mut sm = StateMachineStore::open(Arc::new(StdFs), dir.path())
        .await
        .unwrap();
    let shared = sm.shared();
    assert!(!shared.wait_applied(1, Duration::from_millis(20)).await);
    let waiter = tokio::spawn({
        let shared = shared.clone();
        async move { shared.wait_applied(2, Duration::from_secs(5)).await }
    });
    apply(
        &mut sm,
        vec![entry(1, put("/a", "1")), entry(2, put("/b", "1"))],
    )
    .await;
    assert!(waiter.await.unwrap());
}

// R-RES-004: a snapshot written to disk restores the same store in a fresh state machine.
#[tokio::test]
async fn snapshot_survives_reopen_and_installs() {
    let dir = tempfile::tempdir().unwrap();
    let mut sm = StateMachineStore::open(Arc::new(StdFs), dir.path())
        .await
        .unwrap();
    apply(
        &mut sm,
        vec![
            entry(1, EntryPayload::Membership(membership())),
            entry(2, put("/a", "1")),
            entry(3, put("/b", "2")),
        ],
    )
    .await;
    let built = sm
        .get_snapshot_builder()
        .await
        .build_snapshot()
        .await
        .unwrap();
    assert_eq!(Some(log_id(3)), built.meta.last_log_id);
    // Applying after the copy was taken must not leak into the snapshot.
    apply(&mut sm, vec![entry(4, put("/c", "3"))]).await;

    let mut reopened = StateMachineStore::open(Arc::new(StdFs), dir.path())
        .await
        .unwrap();
    let current = reopened.get_current_snapshot().await.unwrap().unwrap();
    assert_eq!(built.meta, current.meta);
    let meta = current.meta.clone();
    reopened
        .install_snapshot(&meta, current.snapshot)
        .await
        .unwrap();
    let shared = reopened.shared();
    assert_eq!(3, shared.applied());
    assert!(shared.with_store(|s| s.get("/b", None).unwrap().is_some()));
    assert!(shared.with_store(|s| s.get("/c", None).unwrap().is_none()));
    let (applied, membership_state) = reopened.applied_state().await.unwrap();
    assert_eq!(Some(log_id(3)), applied);
    assert_eq!(Some(log_id(1)), *membership_state.log_id());
}

#[tokio::test]
async fn garbage_snapshot_data_is_rejected_not_panicked_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut sm = StateMachineStore::open(Arc::new(StdFs), dir.path())
        .await
        .unwrap();
    let meta = typ::SnapshotMeta {
        last_log_id: Some(log_id(5)),
        last_membership: typ::StoredMembership::default(),
    };
    let garbage = Bytes::from_static(b"\xff\xff\xff\xff");
    assert!(sm.install_snapshot(&meta, garbage).await.is_err());
    let wrong_revision = Bytes::from(StoreSnapshot::default().encode_to_vec());
    assert!(sm.install_snapshot(&meta, wrong_revision).await.is_err());
    assert_eq!(0, sm.shared().applied());
}
