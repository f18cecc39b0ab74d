//! The committed log id's state-file writes: deferred and coalesced by the writer thread, yet
//! never lost when the writer falls idle or the log closes.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use std::time::Instant;

use openraft::RaftLogReader;
use openraft::storage::RaftLogStorage;

use super::LogOptions;
use super::LogStore;
use super::store_test::Probe;
use super::store_test::append;
use super::store_test::entry;
use super::store_test::log_id;
use super::store_test::probed;
use crate::typ::Vote;

fn every(probe: &Arc<Probe>, interval: Duration) -> LogOptions {
    LogOptions {
        commit_save_interval: interval,
        ..probed(probe)
    }
}

// One write at a time (append, its sync, then the commit that follows it, as a
// single client's creates go) does not write the state file per commit; the newest committed
// id is written when the log is dropped and read back after a reopen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn committed_ids_are_coalesced_and_the_last_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let probe = Arc::new(Probe::default());
    let mut store = LogStore::open(dir.path(), every(&probe, Duration::from_secs(3600))).unwrap();
    for index in 1..=20 {
        append(&mut store, vec![entry(1, index)]).await.unwrap();
        store.save_committed(Some(log_id(1, index))).await.unwrap();
    }
    // Each append is acknowledged only once durable, so the writer has run every group.
    append(&mut store, vec![entry(1, 21)]).await.unwrap();
    assert_eq!(0, probe.state_writes.load(Ordering::SeqCst));
    drop(store);
    assert_eq!(1, probe.state_writes.load(Ordering::SeqCst));

    let mut store = LogStore::open(dir.path(), LogOptions::default()).unwrap();
    assert_eq!(Some(log_id(1, 20)), store.read_committed().await.unwrap());
}

// A committed id that moved is written once the interval has passed, though nothing else is
// queued.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_committed_id_is_written_when_the_writer_falls_idle() {
    let dir = tempfile::tempdir().unwrap();
    let probe = Arc::new(Probe::default());
    let mut store = LogStore::open(dir.path(), every(&probe, Duration::from_millis(20))).unwrap();
    append(&mut store, vec![entry(1, 1)]).await.unwrap();
    store.save_committed(Some(log_id(1, 1))).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while probe.state_writes.load(Ordering::SeqCst) == 0 {
        assert!(
            Instant::now() < deadline,
            "the committed id was never written"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    drop(store);
    assert_eq!(1, probe.state_writes.load(Ordering::SeqCst));
}

// A vote is written at once, and the state it writes carries the pending committed id, which
// then needs no write of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vote_write_carries_the_pending_committed_id() {
    let dir = tempfile::tempdir().unwrap();
    let probe = Arc::new(Probe::default());
    let mut store = LogStore::open(dir.path(), every(&probe, Duration::from_secs(3600))).unwrap();
    append(&mut store, vec![entry(1, 1)]).await.unwrap();
    store.save_committed(Some(log_id(1, 1))).await.unwrap();
    let vote = Vote::new_committed(2, 1);
    store.save_vote(&vote).await.unwrap();
    assert_eq!(1, probe.state_writes.load(Ordering::SeqCst));
    drop(store);
    assert_eq!(1, probe.state_writes.load(Ordering::SeqCst));

    let mut store = LogStore::open(dir.path(), LogOptions::default()).unwrap();
    assert_eq!(Some(log_id(1, 1)), store.read_committed().await.unwrap());
    assert_eq!(Some(vote), store.read_vote().await.unwrap());
}
