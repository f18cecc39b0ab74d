//! Behaviour tests for [`LogStore`]: durability across reopen, torn tails, purge, truncate and
//! group commit. The openraft conformance suite runs in `suite_test`.

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::time::Duration;

use openraft::EntryPayload;
use openraft::RaftLogReader;
use openraft::impls::leader_id_adv::LeaderId;
use openraft::storage::IOFlushed;
use openraft::storage::RaftLogStorage;
use openraft::type_config::TypeConfigExt;

use super::LogError;
use super::LogFile;
use super::LogFs;
use super::LogOptions;
use super::LogStore;
use super::StdFs;
use super::segment;
use crate::command::Command;
use crate::command::Op;
use crate::command::Txn;
use crate::typ::Entry;
use crate::typ::LogId;
use crate::typ::TypeConfig;
use crate::typ::Vote;

pub(super) fn log_id(term: u64, index: u64) -> LogId {
    LogId::new(LeaderId { term, node_id: 1 }, index)
}

/// A normal entry whose command carries `index`, so a wrong entry read back is visible.
pub(super) fn entry(term: u64, index: u64) -> Entry {
    let command = Command::txn(Txn {
        compares: vec![],
        success: vec![Op::put(format!("/registry/k/{index}"), vec![7; 40])],
        failure: vec![],
    });
    Entry {
        log_id: log_id(term, index),
        payload: EntryPayload::Normal(command),
    }
}

fn entries(term: u64, indexes: std::ops::RangeInclusive<u64>) -> Vec<Entry> {
    indexes.map(|index| entry(term, index)).collect()
}

/// Appends and waits until the writer reports the entries durable.
pub(super) async fn append(store: &mut LogStore, batch: Vec<Entry>) -> io::Result<()> {
    let (tx, rx) = TypeConfig::oneshot();
    store.append(batch, IOFlushed::signal(tx)).await?;
    rx.await.map_err(io::Error::other)?
}

async fn read_all(store: &mut LogStore) -> Vec<Entry> {
    store.try_get_log_entries(..).await.unwrap()
}

fn options(segment_bytes: u64, cache_entries: usize) -> LogOptions {
    LogOptions {
        segment_bytes,
        cache_entries,
        ..LogOptions::default()
    }
}

fn segment_files(dir: &Path) -> Vec<u64> {
    let mut firsts: Vec<u64> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| segment::parse_file_name(e.unwrap().file_name().to_str()?))
        .collect();
    firsts.sort_unstable();
    firsts
}

// R-RES-004, R-HA-001: what was reported durable is still there after a restart: entries, vote
// and committed log id.
#[tokio::test]
async fn reopen_keeps_entries_vote_and_committed() {
    let dir = tempfile::tempdir().unwrap();
    let written = entries(1, 1..=50);
    {
        let mut store = LogStore::open(dir.path(), options(1024, 8)).unwrap();
        append(&mut store, written[..20].to_vec()).await.unwrap();
        append(&mut store, written[20..].to_vec()).await.unwrap();
        store.save_vote(&Vote::new_committed(3, 2)).await.unwrap();
        store.save_committed(Some(log_id(1, 42))).await.unwrap();
    }
    assert!(
        segment_files(dir.path()).len() > 1,
        "the test must span segments"
    );

    let mut store = LogStore::open(dir.path(), options(1024, 8)).unwrap();
    assert_eq!(written, read_all(&mut store).await);
    assert_eq!(
        Some(Vote::new_committed(3, 2)),
        store.read_vote().await.unwrap()
    );
    assert_eq!(Some(log_id(1, 42)), store.read_committed().await.unwrap());
    let state = store.get_log_state().await.unwrap();
    assert_eq!(None, state.last_purged_log_id);
    assert_eq!(Some(log_id(1, 50)), state.last_log_id);
}

// A limited read stops at the byte budget but always answers at least one entry.
#[tokio::test]
async fn limited_read_is_bounded_but_never_empty() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = LogStore::open(dir.path(), options(64 << 20, 4)).unwrap();
    let big = |index| {
        let command = Command::txn(Txn {
            compares: vec![],
            success: vec![Op::put(format!("/registry/k/{index}"), vec![1; 6 << 20])],
            failure: vec![],
        });
        Entry {
            log_id: log_id(1, index),
            payload: EntryPayload::Normal(command),
        }
    };
    let written: Vec<Entry> = (1..=4).map(big).collect();
    append(&mut store, written.clone()).await.unwrap();
    let first = store.limited_get_log_entries(1, 5).await.unwrap();
    assert_eq!(written[..2].to_vec(), first);
    let last = store.limited_get_log_entries(4, 5).await.unwrap();
    assert_eq!(written[3..].to_vec(), last);
}

// Entries evicted from the cache are read back from the segments, across segment boundaries.
#[tokio::test]
async fn reads_beyond_the_cache_come_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = LogStore::open(dir.path(), options(700, 4)).unwrap();
    let written = entries(2, 1..=40);
    for one in &written {
        append(&mut store, vec![one.clone()]).await.unwrap();
    }
    assert_eq!(written, read_all(&mut store).await);
    assert_eq!(
        written[9..=20].to_vec(),
        store.try_get_log_entries(10..=21).await.unwrap()
    );
    assert_eq!(
        written[5..15].to_vec(),
        store.limited_get_log_entries(6, 16).await.unwrap()
    );
    // Empty and inverted ranges answer nothing rather than panic.
    assert!(
        store
            .limited_get_log_entries(9, 3)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(store.try_get_log_entries(5..5).await.unwrap().is_empty());
    let inverted = (std::ops::Bound::Excluded(9), std::ops::Bound::Excluded(3));
    assert!(
        store
            .try_get_log_entries(inverted)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(store.try_get_log_entries(100..).await.unwrap().is_empty());
}

// R-RES-004: a crash mid-write leaves a torn record at the end; it was never reported durable,
// so it is cut off and the log continues after the last whole entry.
#[tokio::test]
async fn torn_tail_is_cut_and_appends_continue() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut store = LogStore::open(dir.path(), options(1 << 20, 8)).unwrap();
        append(&mut store, entries(1, 1..=10)).await.unwrap();
    }
    let first = segment_files(dir.path())[0];
    let path = dir.path().join(segment::file_name(first));
    let whole = std::fs::read(&path).unwrap();
    let record_len = whole.len() / 10;

    for torn in [
        // Half of an eleventh record's bytes.
        [whole.clone(), whole[..record_len / 2].to_vec()].concat(),
        // A zero-filled tail, as a crash during file extension leaves.
        [whole.clone(), vec![0; 64]].concat(),
        // The tenth record with its last byte flipped.
        {
            let mut flipped = whole.clone();
            let last = flipped.len() - 1;
            flipped[last] ^= 0xff;
            flipped
        },
    ] {
        std::fs::write(&path, &torn).unwrap();
        let mut store = LogStore::open(dir.path(), options(1 << 20, 8)).unwrap();
        let kept = read_all(&mut store).await;
        let last = kept.last().unwrap().log_id.index;
        assert!(last == 10 || last == 9, "kept up to {last}");
        assert_eq!(entries(1, 1..=last), kept);
        append(&mut store, entries(1, last + 1..=12)).await.unwrap();
        drop(store);

        let mut store = LogStore::open(dir.path(), options(1 << 20, 8)).unwrap();
        assert_eq!(entries(1, 1..=12), read_all(&mut store).await);
        store.truncate_after(Some(log_id(1, 10))).await.unwrap();
    }
}

// Damage before the last segment's tail means acknowledged entries are gone: opening fails
// instead of silently dropping them.
#[tokio::test]
async fn corruption_before_the_last_segment_is_fatal() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut store = LogStore::open(dir.path(), options(512, 8)).unwrap();
        append(&mut store, entries(1, 1..=30)).await.unwrap();
    }
    let segments = segment_files(dir.path());
    assert!(segments.len() >= 3);
    let path = dir.path().join(segment::file_name(segments[1]));
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[20] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();

    let err = LogStore::open(dir.path(), options(512, 8)).unwrap_err();
    assert!(matches!(err, LogError::Corrupt { .. }), "{err:?}");
}

// A missing middle segment is a hole in the log: fatal.
#[tokio::test]
async fn missing_segment_is_fatal() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut store = LogStore::open(dir.path(), options(512, 8)).unwrap();
        append(&mut store, entries(1, 1..=30)).await.unwrap();
    }
    let segments = segment_files(dir.path());
    std::fs::remove_file(dir.path().join(segment::file_name(segments[1]))).unwrap();
    let err = LogStore::open(dir.path(), options(512, 8)).unwrap_err();
    assert!(matches!(err, LogError::Gap { .. }), "{err:?}");
}

#[tokio::test]
async fn purge_deletes_whole_segments_and_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let written = entries(1, 1..=40);
    let mut store = LogStore::open(dir.path(), options(512, 4)).unwrap();
    append(&mut store, written.clone()).await.unwrap();
    let before = segment_files(dir.path());
    assert!(before.len() >= 4);

    // Purge up to the middle of the third segment: the first two go, the third stays.
    let purge_to = before[2] + 1;
    store.purge(log_id(1, purge_to)).await.unwrap();
    assert_eq!(before[2..].to_vec(), segment_files(dir.path()));
    let state = store.get_log_state().await.unwrap();
    assert_eq!(Some(log_id(1, purge_to)), state.last_purged_log_id);
    assert_eq!(Some(log_id(1, 40)), state.last_log_id);
    let rest = written[purge_to as usize..].to_vec();
    assert_eq!(rest, read_all(&mut store).await);
    drop(store);

    let mut store = LogStore::open(dir.path(), options(512, 4)).unwrap();
    let state = store.get_log_state().await.unwrap();
    assert_eq!(Some(log_id(1, purge_to)), state.last_purged_log_id);
    assert_eq!(rest, read_all(&mut store).await);

    // Purging everything removes every segment; the log then continues after the purged id.
    store.purge(log_id(1, 40)).await.unwrap();
    assert!(segment_files(dir.path()).is_empty());
    let state = store.get_log_state().await.unwrap();
    assert_eq!(Some(log_id(1, 40)), state.last_log_id);
    append(&mut store, entries(2, 41..=43)).await.unwrap();
    drop(store);

    let mut store = LogStore::open(dir.path(), options(512, 4)).unwrap();
    assert_eq!(entries(2, 41..=43), read_all(&mut store).await);
    assert_eq!(
        Some(log_id(1, 40)),
        store.get_log_state().await.unwrap().last_purged_log_id
    );
}

// A purge persists the purged log id before deleting segments; a crash in between leaves purged
// segments behind, which the next open deletes.
#[tokio::test]
async fn open_finishes_an_interrupted_purge() {
    let dir = tempfile::tempdir().unwrap();
    let saved = tempfile::tempdir().unwrap();
    {
        let mut store = LogStore::open(dir.path(), options(512, 4)).unwrap();
        append(&mut store, entries(1, 1..=30)).await.unwrap();
        for first in segment_files(dir.path()) {
            let name = segment::file_name(first);
            std::fs::copy(dir.path().join(&name), saved.path().join(&name)).unwrap();
        }
        store.purge(log_id(1, 25)).await.unwrap();
    }
    let after_purge = segment_files(dir.path());
    assert!(after_purge.len() < segment_files(saved.path()).len());
    // Put the deleted segments back, as if the crash came before the deletes.
    for first in segment_files(saved.path()) {
        let name = segment::file_name(first);
        std::fs::copy(saved.path().join(&name), dir.path().join(&name)).unwrap();
    }
    let mut store = LogStore::open(dir.path(), options(512, 4)).unwrap();
    assert_eq!(entries(1, 26..=30), read_all(&mut store).await);
    assert_eq!(after_purge, segment_files(dir.path()));
}

// R-HA-001: a follower's conflicting tail is replaced by the leader's entries.
#[tokio::test]
async fn truncate_then_append_replaces_the_tail() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = LogStore::open(dir.path(), options(512, 4)).unwrap();
    append(&mut store, entries(1, 1..=30)).await.unwrap();
    let segments = segment_files(dir.path());

    // Cut inside the second segment: later segments are deleted.
    let keep_to = segments[1] + 1;
    store
        .truncate_after(Some(log_id(1, keep_to)))
        .await
        .unwrap();
    assert_eq!(segments[..2].to_vec(), segment_files(dir.path()));
    assert_eq!(
        Some(log_id(1, keep_to)),
        store.get_log_state().await.unwrap().last_log_id
    );
    append(&mut store, entries(2, keep_to + 1..=35))
        .await
        .unwrap();
    let expected = [entries(1, 1..=keep_to), entries(2, keep_to + 1..=35)].concat();
    assert_eq!(expected, read_all(&mut store).await);
    drop(store);

    let mut store = LogStore::open(dir.path(), options(512, 4)).unwrap();
    assert_eq!(expected, read_all(&mut store).await);

    // Truncating everything leaves an empty log that starts again at index 1.
    store.truncate_after(None).await.unwrap();
    assert_eq!(None, store.get_log_state().await.unwrap().last_log_id);
    append(&mut store, entries(3, 1..=2)).await.unwrap();
    drop(store);
    let mut store = LogStore::open(dir.path(), options(512, 4)).unwrap();
    assert_eq!(entries(3, 1..=2), read_all(&mut store).await);
}

// Appends that leave a hole are refused, not written.
#[tokio::test]
async fn append_with_a_hole_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = LogStore::open(dir.path(), LogOptions::default()).unwrap();
    append(&mut store, entries(1, 1..=3)).await.unwrap();
    let err = append(&mut store, entries(1, 5..=6)).await.unwrap_err();
    assert_eq!(io::ErrorKind::InvalidInput, err.kind());
    let err = append(&mut store, entries(1, 3..=4)).await.unwrap_err();
    assert_eq!(io::ErrorKind::InvalidInput, err.kind());
    assert_eq!(entries(1, 1..=3), read_all(&mut store).await);
}

/// Counts writes and syncs, can make `fdatasync` slow (so appends pile up behind it) and can
/// make it fail.
#[derive(Default)]
pub(super) struct Probe {
    writes: AtomicU64,
    syncs: AtomicU64,
    /// The value of `writes` at the last completed sync: writes up to it are durable.
    durable_writes: AtomicU64,
    /// State-file writes (vote, committed, purged).
    pub(super) state_writes: AtomicU64,
    slow_sync: AtomicBool,
    fail_sync: AtomicBool,
}

struct ProbeFs(Arc<Probe>);

struct ProbeFile {
    inner: Box<dyn LogFile>,
    probe: Arc<Probe>,
}

impl LogFs for ProbeFs {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        StdFs.create_dir_all(dir)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        StdFs.list(dir)
    }
    fn read(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        StdFs.read(path)
    }
    fn read_at(&self, path: &Path, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        StdFs.read_at(path, offset, buf)
    }
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn LogFile>> {
        Ok(Box::new(ProbeFile {
            inner: StdFs.open_append(path)?,
            probe: self.0.clone(),
        }))
    }
    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        StdFs.truncate(path, len)
    }
    fn write_synced(&self, path: &Path, parts: &[&[u8]]) -> io::Result<()> {
        self.0.state_writes.fetch_add(1, Ordering::SeqCst);
        StdFs.write_synced(path, parts)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        StdFs.rename(from, to)
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        StdFs.remove(path)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        StdFs.sync_dir(dir)
    }
}

impl LogFile for ProbeFile {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.probe.writes.fetch_add(1, Ordering::SeqCst);
        self.inner.write_all(buf)
    }
    fn sync_data(&mut self) -> io::Result<()> {
        if self.probe.fail_sync.load(Ordering::SeqCst) {
            return Err(io::Error::other("injected fdatasync failure"));
        }
        let writes = self.probe.writes.load(Ordering::SeqCst);
        if self.probe.slow_sync.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.inner.sync_data()?;
        self.probe.syncs.fetch_add(1, Ordering::SeqCst);
        self.probe
            .durable_writes
            .fetch_max(writes, Ordering::SeqCst);
        Ok(())
    }
}

pub(super) fn probed(probe: &Arc<Probe>) -> LogOptions {
    LogOptions {
        fs: Arc::new(ProbeFs(probe.clone())),
        ..LogOptions::default()
    }
}

// R-RES-004: group commit. Appends issued while a sync is in flight share the next sync, and no
// append is reported durable before a sync that covers its write. Committed-id saves between the
// appends (as openraft issues them) are coalesced too, and the last one survives a reopen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_commit_syncs_once_per_batch_and_never_reports_early() {
    let dir = tempfile::tempdir().unwrap();
    let probe = Arc::new(Probe::default());
    probe.slow_sync.store(true, Ordering::SeqCst);
    let mut store = LogStore::open(dir.path(), probed(&probe)).unwrap();

    const APPENDS: u64 = 200;
    let completions = Arc::new(Mutex::new(Vec::new()));
    let mut waiters = Vec::new();
    for index in 1..=APPENDS {
        let (tx, rx) = TypeConfig::oneshot();
        store
            .append(vec![entry(1, index)], IOFlushed::signal(tx))
            .await
            .unwrap();
        store
            .save_committed(Some(log_id(1, index - 1)))
            .await
            .unwrap();
        let probe = probe.clone();
        let completions = completions.clone();
        waiters.push(tokio::spawn(async move {
            rx.await.unwrap().unwrap();
            // Each append is exactly one write, so append `index` is durable once `index` writes
            // are.
            let durable = probe.durable_writes.load(Ordering::SeqCst);
            completions.lock().unwrap().push((index, durable));
        }));
    }
    for waiter in waiters {
        waiter.await.unwrap();
    }

    let syncs = probe.syncs.load(Ordering::SeqCst);
    assert_eq!(APPENDS, probe.writes.load(Ordering::SeqCst));
    assert!(
        syncs * 4 < APPENDS,
        "{syncs} fdatasyncs for {APPENDS} appends: no group commit"
    );
    let completions = std::mem::take(&mut *completions.lock().unwrap());
    assert_eq!(APPENDS as usize, completions.len());
    for (index, durable) in completions.iter() {
        assert!(
            durable >= index,
            "append {index} reported flushed with only {durable} writes durable"
        );
    }
    let state_writes = probe.state_writes.load(Ordering::SeqCst);
    assert!(
        state_writes * 4 < APPENDS,
        "{state_writes} state-file writes for {APPENDS} committed-id saves"
    );
    assert_eq!(entries(1, 1..=APPENDS), read_all(&mut store).await);
    drop(store);

    let mut store = LogStore::open(dir.path(), LogOptions::default()).unwrap();
    assert_eq!(
        Some(log_id(1, APPENDS - 1)),
        store.read_committed().await.unwrap()
    );
}

// A failed fdatasync stops the log: the append's callback gets the error, and every later write
// is refused, because the files are in an unknown state.
#[tokio::test]
async fn failed_sync_stops_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let probe = Arc::new(Probe::default());
    let mut store = LogStore::open(dir.path(), probed(&probe)).unwrap();
    append(&mut store, entries(1, 1..=2)).await.unwrap();

    probe.fail_sync.store(true, Ordering::SeqCst);
    assert!(append(&mut store, entries(1, 3..=3)).await.is_err());
    probe.fail_sync.store(false, Ordering::SeqCst);

    let err = append(&mut store, entries(1, 4..=4)).await.unwrap_err();
    assert_eq!(io::ErrorKind::BrokenPipe, err.kind());
    assert!(store.save_vote(&Vote::new(2, 1)).await.is_err());
}

// An interrupted purge of the whole log leaves segments whose entries are all purged; the next
// open deletes them all, so the log continues cleanly after the purged id.
#[tokio::test]
async fn open_finishes_an_interrupted_purge_of_everything() {
    let dir = tempfile::tempdir().unwrap();
    let saved = tempfile::tempdir().unwrap();
    {
        let mut store = LogStore::open(dir.path(), options(512, 4)).unwrap();
        append(&mut store, entries(1, 1..=30)).await.unwrap();
        for first in segment_files(dir.path()) {
            let name = segment::file_name(first);
            std::fs::copy(dir.path().join(&name), saved.path().join(&name)).unwrap();
        }
        store.purge(log_id(1, 30)).await.unwrap();
        assert!(segment_files(dir.path()).is_empty());
    }
    for first in segment_files(saved.path()) {
        let name = segment::file_name(first);
        std::fs::copy(saved.path().join(&name), dir.path().join(&name)).unwrap();
    }
    {
        let mut store = LogStore::open(dir.path(), options(512, 4)).unwrap();
        assert!(segment_files(dir.path()).is_empty());
        assert_eq!(
            Some(log_id(1, 30)),
            store.get_log_state().await.unwrap().last_log_id
        );
        append(&mut store, entries(2, 31..=32)).await.unwrap();
    }
    let mut store = LogStore::open(dir.path(), options(512, 4)).unwrap();
    assert_eq!(entries(2, 31..=32), read_all(&mut store).await);
}

// A record whose checksum holds but whose payload is not an entry was written whole, so it is
// not a torn write: opening fails rather than cutting it off.
#[tokio::test]
async fn intact_record_that_is_not_an_entry_is_fatal() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut store = LogStore::open(dir.path(), LogOptions::default()).unwrap();
        append(&mut store, entries(1, 1..=3)).await.unwrap();
    }
    let first = segment_files(dir.path())[0];
    let path = dir.path().join(segment::file_name(first));
    let mut bytes = std::fs::read(&path).unwrap();
    // Field 1 as a varint is not a valid `LogId` message.
    super::record::frame(&[0x08, 0x01], &mut bytes).unwrap();
    std::fs::write(&path, &bytes).unwrap();

    let err = LogStore::open(dir.path(), LogOptions::default()).unwrap_err();
    assert!(matches!(err, LogError::InvalidEntry { .. }), "{err:?}");
}
