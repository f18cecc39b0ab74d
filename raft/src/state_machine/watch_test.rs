//! Unit tests of [`WatchStream`] over a bare [`SharedState`] (R-RES-175, R-RES-232, R-HA-010).

use std::time::Duration;

use bytes::Bytes;

use super::*;
use crate::command::Command;
use crate::command::Op;
use crate::command::Txn;
use crate::mvcc::EventKind;
use crate::mvcc::Store;

fn put(shared: &SharedState, revision: Revision, key: &str, value: &str) {
    let txn = Txn {
        success: vec![Op::put(key, Bytes::from(value.to_owned()))],
        ..Default::default()
    };
    shared
        .apply(revision, Some(&Command::txn(txn)))
        .expect("in order");
}

fn delete(shared: &SharedState, revision: Revision, key: &str) {
    let txn = Txn {
        success: vec![Op::delete(key)],
        ..Default::default()
    };
    shared
        .apply(revision, Some(&Command::txn(txn)))
        .expect("in order");
}

async fn next(watch: &mut WatchStream) -> WatchBatch {
    tokio::time::timeout(Duration::from_secs(5), watch.next())
        .await
        .expect("a batch in time")
        .expect("no error")
        .expect("not closed")
}

fn revisions(batches: &[WatchBatch]) -> Vec<Revision> {
    batches.iter().map(|b| b.revision).collect()
}

#[tokio::test]
async fn replays_history_then_follows_live_changes_once_each() {
    let shared = SharedState::new();
    put(&shared, 1, "/p/a", "1");
    put(&shared, 2, "/q/a", "1");
    put(&shared, 3, "/p/b", "1");
    let mut watch = WatchStream::new(shared.clone(), "/p/", 1).unwrap();
    put(&shared, 4, "/p/a", "2");
    delete(&shared, 5, "/p/b");
    let mut got = Vec::new();
    for _ in 0..3 {
        got.push(next(&mut watch).await);
    }
    assert_eq!(revisions(&got), [3, 4, 5]);
    assert_eq!(got[2].events[0].kind, EventKind::Delete);
    assert_eq!(&got[2].events[0].prev_kv.as_ref().unwrap().value[..], b"1");
    assert_eq!(watch.progress(), 5);
    // A change elsewhere moves the progress without a batch (and without waking the watch).
    put(&shared, 6, "/q/a", "2");
    assert_eq!(watch.progress(), 6);
    // It never goes back while a change under the prefix waits to be read.
    put(&shared, 7, "/p/c", "1");
    assert_eq!(watch.progress(), 6);
    assert_eq!(next(&mut watch).await.revision, 7);
}

#[tokio::test]
async fn a_watch_ahead_of_the_store_waits_for_its_revision() {
    let shared = SharedState::new();
    put(&shared, 1, "/p/a", "1");
    let mut watch = WatchStream::new(shared.clone(), "/p/", 3).unwrap();
    put(&shared, 2, "/p/a", "2");
    put(&shared, 3, "/p/a", "3");
    put(&shared, 4, "/p/a", "4");
    assert_eq!(next(&mut watch).await.revision, 4);
}

#[tokio::test]
async fn a_lagging_watch_catches_up_from_history_without_gaps() {
    let shared = SharedState::new();
    let mut watch = WatchStream::new(shared.clone(), "/p/", 0).unwrap();
    // More notices than the broadcast holds: the watch is told it lagged.
    let total = 5000;
    for revision in 1..=total {
        put(&shared, revision, "/p/a", &revision.to_string());
    }
    let mut expected = 1;
    while expected <= total {
        let batch = next(&mut watch).await;
        assert_eq!(batch.revision, expected);
        expected += 1;
    }
    assert_eq!(watch.progress(), total);
}

// R-RES-072: a watch from before the compaction point fails with a typed error, as does one
// that falls behind it.
#[tokio::test]
async fn history_compacted_away_is_a_typed_error() {
    let shared = SharedState::new();
    put(&shared, 1, "/p/a", "1");
    put(&shared, 2, "/p/a", "2");
    let mut behind = WatchStream::new(shared.clone(), "/p/", 0).unwrap();
    shared
        .apply(3, Some(&Command::compact(2)))
        .expect("in order");
    assert!(matches!(
        WatchStream::new(shared.clone(), "/p/", 1),
        Err(MvccError::Compacted { compacted: 2, .. })
    ));
    assert!(matches!(
        behind.next().await,
        Err(MvccError::Compacted { compacted: 2, .. })
    ));
    let mut at = WatchStream::new(shared.clone(), "/p/", 2).unwrap();
    put(&shared, 4, "/p/a", "3");
    assert_eq!(next(&mut at).await.revision, 4);
}

// R-HA-010, issue 3 "a slow watcher never blocks the others or the apply path": a watch that
// never reads costs apply nothing (every write applies while it sleeps), another watch still
// gets every change, and the sleeper, once the history it needs is compacted away, is ended
// with the typed error its client resumes from (410) rather than holding memory.
#[tokio::test]
async fn a_watch_that_never_reads_holds_back_neither_apply_nor_other_watches() {
    let shared = SharedState::new();
    let mut sleeper = WatchStream::new(shared.clone(), "/p/", 0).unwrap();
    let mut reader = WatchStream::new(shared.clone(), "/p/", 0).unwrap();
    let total = 10_000;
    for revision in 1..=total {
        put(&shared, revision, "/p/a", &revision.to_string());
    }
    assert_eq!(shared.applied(), total);
    for expected in 1..=total {
        assert_eq!(next(&mut reader).await.revision, expected);
    }
    shared
        .apply(total + 1, Some(&Command::compact(total / 2)))
        .expect("in order");
    assert!(matches!(
        sleeper.next().await,
        Err(MvccError::Compacted { requested: 0, .. })
    ));
}

// R-HA-010: a snapshot installed under a waiting watch (a follower far behind) is caught up from
// the new store's history: the watch gets what the snapshot brought under its prefix, once each,
// then follows live changes again.
#[tokio::test]
async fn a_restore_is_caught_up_from_the_new_store() {
    let shared = SharedState::new();
    put(&shared, 1, "/p/a", "1");
    let mut watch = WatchStream::new(shared.clone(), "/p/", 1).unwrap();
    let mut other = WatchStream::new(shared.clone(), "/q/", 1).unwrap();
    let leader = SharedState::new();
    put(&leader, 1, "/p/a", "1");
    put(&leader, 2, "/p/b", "1");
    put(&leader, 3, "/q/a", "1");
    put(&leader, 4, "/p/a", "2");
    let snapshot = leader.with_store(Store::to_snapshot);
    let waiting = tokio::spawn(async move {
        let first = next(&mut watch).await;
        let second = next(&mut watch).await;
        (watch, [first, second])
    });
    tokio::task::yield_now().await;
    *shared.write() = Store::from_snapshot(snapshot);
    shared.publish(4, Some(ApplyNotice::Restored { revision: 4 }));
    let (mut watch, got) = waiting.await.unwrap();
    assert_eq!(revisions(&got), [2, 4]);
    assert_eq!(next(&mut other).await.revision, 3);
    put(&shared, 5, "/p/c", "1");
    assert_eq!(next(&mut watch).await.revision, 5);
    assert_eq!(watch.progress(), 5);
}
