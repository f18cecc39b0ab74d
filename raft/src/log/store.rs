//! [`LogStore`]: the durable raft log, implementing openraft's [`RaftLogStorage`] and
//! [`RaftLogReader`] over segment files written by the group-commit writer.

use std::collections::BTreeMap;
use std::fmt;
use std::fmt::Debug;
use std::io;
use std::ops::Bound;
use std::ops::RangeBounds;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::MutexGuard;
use std::sync::PoisonError;
use std::sync::atomic::Ordering;
use std::time::Duration;

use openraft::LogState;
use openraft::OptionalSend;
use openraft::RaftLogReader;
use openraft::storage::IOFlushed;
use openraft::storage::RaftLogStorage;
use tokio::sync::oneshot;

use super::error::LogError;
use super::fs::LogFs;
use super::fs::StdFs;
use super::hard_state::HardState;
use super::record;
use super::recovery;
use super::segment::Slot;
use super::writer;
use super::writer::COMMIT_SAVE_INTERVAL;
use super::writer::Done;
use super::writer::Op;
use super::writer::Progress;
use super::writer::SegmentWrite;
use super::writer::WriterHandle;
use super::writer::WriterMode;
use crate::metrics::LogMetrics;
use crate::typ::Entry;
use crate::typ::LogId;
use crate::typ::TypeConfig;
use crate::typ::Vote;
use crate::wire;

/// At most this many entries are answered by one `limited_get_log_entries` call, so replicating
/// a long lagging tail does not load it all into memory at once.
const READ_BATCH: u64 = 1024;
/// ... and at most about this many bytes of records (always at least one entry).
const READ_BATCH_BYTES: u64 = 16 * 1024 * 1024;

/// The default [`LogOptions::cache_bytes`]: 32 MiB, a little over 4096 entries of 1 KiB objects
/// with their envelopes (the replication window of a busy leader), and a dozen of the largest.
pub const DEFAULT_CACHE_BYTES: u64 = 32 * 1024 * 1024;

/// How a [`LogStore`] is set up.
#[derive(Clone)]
pub struct LogOptions {
    /// A segment is closed and a new one started once it holds this many bytes.
    pub segment_bytes: u64,
    /// How many of the last entries are kept in memory, so that reads of the tail (replication,
    /// apply) do not touch the disk.
    pub cache_entries: usize,
    /// ... and at most about this many bytes of them, counted as their encoded records: a few
    /// large entries then hold no more memory than many small ones. Entries the writer has
    /// not yet written stay cached beyond both bounds (they cannot be read back yet); those
    /// are bounded by openraft's in-flight appends.
    pub cache_bytes: u64,
    /// The file system; [`StdFs`] unless a test or the simulation supplies another.
    pub fs: Arc<dyn LogFs>,
    /// Where the writer runs: its own thread ([`WriterMode::Thread`], the default, for real
    /// disks) or a task on the opening tokio runtime ([`WriterMode::Task`], only for a file
    /// system that never blocks, such as the simulation's).
    pub writer: WriterMode,
    /// With [`WriterMode::Thread`]: how often at most a moved committed log id is written to
    /// the state file (also when the writer falls idle or the log is dropped). The task
    /// writer writes it after every group.
    pub commit_save_interval: Duration,
}

impl Default for LogOptions {
    fn default() -> Self {
        Self {
            segment_bytes: 64 * 1024 * 1024,
            cache_entries: 4096,
            cache_bytes: DEFAULT_CACHE_BYTES,
            fs: Arc::new(StdFs),
            writer: WriterMode::Thread,
            commit_save_interval: COMMIT_SAVE_INTERVAL,
        }
    }
}

impl Debug for LogOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogOptions")
            .field("segment_bytes", &self.segment_bytes)
            .field("cache_entries", &self.cache_entries)
            .field("cache_bytes", &self.cache_bytes)
            .field("writer", &self.writer)
            .field("commit_save_interval", &self.commit_save_interval)
            .finish_non_exhaustive()
    }
}

/// The durable raft log of one replica: entries in segment files in a directory, plus the vote,
/// the committed log id and the purged log id in a small state file.
///
/// Clones share one log; openraft uses clones as its log readers. Writes are queued to one writer
/// thread in call order, so they are serialized as openraft requires; `append` returns once the
/// entries are readable and reports durability through its callback after the group's
/// `fdatasync`.
#[derive(Clone)]
pub struct LogStore {
    shared: Arc<Shared>,
}

struct Shared {
    dir: PathBuf,
    fs: Arc<dyn LogFs>,
    segment_bytes: u64,
    cache_entries: usize,
    cache_bytes: u64,
    progress: Arc<Progress>,
    inner: Mutex<Inner>,
}

/// The log's in-memory state. Operations are queued to the writer while this is locked, so the
/// queue order is the order of the in-memory changes.
struct Inner {
    hard: HardState,
    /// Every entry after the last purged one, by index.
    slots: BTreeMap<u64, Slot>,
    /// Every segment (by first index) and its length in bytes, including queued writes.
    segments: BTreeMap<u64, u64>,
    /// The last entries, and every entry the writer has not yet written.
    cache: BTreeMap<u64, Entry>,
    /// The encoded size of the entries in `cache` (their slots' lengths).
    cached_bytes: u64,
    /// The `seq` the next queued operation gets.
    next_seq: u64,
    writer: WriterHandle,
}

impl Debug for LogStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogStore")
            .field("dir", &self.shared.dir)
            .finish_non_exhaustive()
    }
}

impl LogStore {
    /// Opens (creating if needed) the log in `dir` and starts its writer (a thread, or a task on
    /// the current tokio runtime in [`WriterMode::Task`]).
    ///
    /// A torn write at the end of the last segment is cut off with a warning; any other damage
    /// is an error, since entries reported durable would be lost.
    pub fn open(dir: impl AsRef<Path>, options: LogOptions) -> Result<LogStore, LogError> {
        let dir = dir.as_ref().to_path_buf();
        let fs = options.fs;
        fs.create_dir_all(&dir).map_err(|source| LogError::Io {
            op: "create log directory",
            path: dir.clone(),
            source,
        })?;
        let hard = HardState::load(fs.as_ref(), &dir)?;
        let recovered = recovery::recover(
            fs.as_ref(),
            &dir,
            hard.last_purged.map(|p| p.index),
            options.cache_entries,
            options.cache_bytes,
        )?;
        let progress = Arc::new(Progress::default());
        let writer = writer::spawn(
            fs.clone(),
            dir.clone(),
            progress.clone(),
            options.writer,
            options.commit_save_interval,
        )?;
        Ok(LogStore {
            shared: Arc::new(Shared {
                dir,
                fs,
                // A zero size would start a segment per entry forever; one byte means the same
                // and terminates.
                segment_bytes: options.segment_bytes.max(1),
                cache_entries: options.cache_entries,
                cache_bytes: options.cache_bytes,
                progress,
                inner: Mutex::new(Inner {
                    hard,
                    slots: recovered.slots,
                    segments: recovered.segments,
                    cache: recovered.cache,
                    cached_bytes: recovered.cached_bytes,
                    next_seq: 1,
                    writer,
                }),
            }),
        })
    }

    /// The directory the log lives in.
    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// What the log measures: its `fdatasync` latencies and the leaders it saved a committed
    /// vote for since it was opened.
    pub fn metrics(&self) -> LogMetrics {
        LogMetrics {
            fsync: self.shared.progress.fsync.clone(),
            leader_changes: self.shared.progress.leader_changes.clone(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Nothing panics while holding the lock, and the state stays consistent between
        // statements, so a poisoned lock is still usable.
        self.shared
            .inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues an operation built from its `seq`.
    fn enqueue(&self, inner: &mut Inner, op: impl FnOnce(u64) -> Op) -> Result<(), LogError> {
        if self.shared.progress.stopped.load(Ordering::Acquire) {
            return Err(LogError::Stopped);
        }
        let seq = inner.next_seq;
        inner.next_seq += 1;
        inner.writer.send(op(seq))
    }

    /// Queues a state-file write and waits until it is durable.
    async fn save_state(&self, change: impl FnOnce(&mut HardState)) -> io::Result<()> {
        let (tx, rx) = oneshot::channel();
        {
            let mut inner = self.lock();
            change(&mut inner.hard);
            let state = inner.hard.clone();
            let done = Done::Waiter(tx);
            self.enqueue(&mut inner, |seq| Op::SaveState { seq, state, done })?;
        }
        wait(rx).await
    }

    /// Drops cached entries beyond the cache's bounds (entries and bytes), oldest first, but
    /// never one the writer has not written yet (it could not be read back from the file).
    fn trim_cache(&self, inner: &mut Inner) {
        let finished = self.shared.progress.finished.load(Ordering::Acquire);
        while inner.cache.len() > self.shared.cache_entries
            || inner.cached_bytes > self.shared.cache_bytes
        {
            let Some((&index, _)) = inner.cache.first_key_value() else {
                break;
            };
            let slot = inner.slots.get(&index);
            if slot.is_some_and(|s| s.seq > finished) {
                break;
            }
            let len = slot.map_or(0, |s| s.len);
            inner.cache.pop_first();
            inner.cached_bytes = inner.cached_bytes.saturating_sub(len);
        }
    }

    /// Counts the cached bytes again, after entries left the cache other than by trimming.
    fn recount_cache(inner: &mut Inner) {
        inner.cached_bytes = (inner.cache.keys())
            .filter_map(|index| inner.slots.get(index))
            .map(|slot| slot.len)
            .sum();
    }

    /// Reads entries whose records are at `slots` (consecutive, in order) from their segments.
    fn read_slots(&self, slots: &[Slot]) -> Result<Vec<Entry>, LogError> {
        recovery::read_entries(self.shared.fs.as_ref(), &self.shared.dir, slots)
    }
}

/// Awaits the writer's answer to a queued operation.
async fn wait(rx: oneshot::Receiver<io::Result<()>>) -> io::Result<()> {
    rx.await.map_err(|_| io::Error::from(LogError::Stopped))?
}

/// The inclusive index range `range` covers; `None` when it is empty.
fn inclusive(range: &impl RangeBounds<u64>) -> Option<(u64, u64)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.checked_add(1)?,
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e,
        Bound::Excluded(&e) => e.checked_sub(1)?,
        Bound::Unbounded => u64::MAX,
    };
    (start <= end).then_some((start, end))
}

impl RaftLogReader<TypeConfig> for LogStore {
    async fn try_get_log_entries<RB>(&mut self, range: RB) -> Result<Vec<Entry>, io::Error>
    where
        RB: RangeBounds<u64> + Clone + Debug + OptionalSend,
    {
        let Some((start, end)) = inclusive(&range) else {
            return Ok(Vec::new());
        };
        // Cached entries are cloned under the lock; the rest are read from disk after it.
        let mut cached = Vec::new();
        let mut on_disk = Vec::new();
        {
            let inner = self.lock();
            for (index, slot) in inner.slots.range(start..=end) {
                match inner.cache.get(index) {
                    Some(entry) => cached.push(entry.clone()),
                    None => on_disk.push(*slot),
                }
            }
        }
        let mut entries = self.read_slots(&on_disk)?;
        entries.extend(cached);
        // The cache holds a suffix of the log, so this is already sorted unless that changes.
        entries.sort_by_key(|entry| entry.log_id.index);
        Ok(entries)
    }

    async fn read_vote(&mut self) -> Result<Option<Vote>, io::Error> {
        Ok(self.lock().hard.vote)
    }

    async fn limited_get_log_entries(
        &mut self,
        start: u64,
        end: u64,
    ) -> Result<Vec<Entry>, io::Error> {
        let mut end = end.min(start.saturating_add(READ_BATCH));
        if start >= end {
            return Ok(Vec::new());
        }
        {
            let inner = self.lock();
            let mut bytes = 0;
            for (&index, slot) in inner.slots.range(start..end) {
                if bytes > 0 && bytes + slot.len > READ_BATCH_BYTES {
                    end = index;
                    break;
                }
                bytes += slot.len;
            }
        }
        self.try_get_log_entries(start..end).await
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, io::Error> {
        let inner = self.lock();
        let last_purged_log_id = inner.hard.last_purged;
        let last_log_id = inner
            .slots
            .last_key_value()
            .map(|(_, slot)| slot.log_id)
            .or(last_purged_log_id);
        Ok(LogState {
            last_purged_log_id,
            last_log_id,
        })
    }

    async fn get_log_reader(&mut self) -> LogStore {
        self.clone()
    }

    /// Also counts a leader change when the vote is a leader's committed vote and names
    /// another leader than the vote it replaces (every replica saves each new leader's vote).
    async fn save_vote(&mut self, vote: &Vote) -> Result<(), io::Error> {
        let vote = *vote;
        let previous = self.lock().hard.vote;
        if vote.is_committed()
            && previous.is_none_or(|p| !p.is_committed() || p.leader_id() != vote.leader_id())
        {
            self.shared.progress.leader_changes.inc();
        }
        self.save_state(|hard| hard.vote = Some(vote)).await
    }

    /// Returns once the new committed log id is queued; it becomes durable with the writer's
    /// current group (see the writer's `SaveCommitted`). openraft awaits this call before its
    /// next log write, so waiting for a state-file sync here would stall the pipeline.
    async fn save_committed(&mut self, committed: Option<LogId>) -> Result<(), io::Error> {
        let mut inner = self.lock();
        inner.hard.committed = committed;
        let state = inner.hard.clone();
        self.enqueue(&mut inner, |seq| Op::SaveCommitted { seq, state })?;
        Ok(())
    }

    async fn read_committed(&mut self) -> Result<Option<LogId>, io::Error> {
        Ok(self.lock().hard.committed)
    }

    async fn append<I>(&mut self, entries: I, callback: IOFlushed<TypeConfig>) -> io::Result<()>
    where
        I: IntoIterator<Item = Entry> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        // Encoding needs no lock.
        let mut encoded = Vec::new();
        for entry in entries {
            let len = wire::Entry::encoded_len_borrowed(&entry);
            let mut framed = Vec::new();
            record::frame_in_place(&mut framed, len, |out| {
                wire::Entry::encode_borrowed(&entry, out);
            })
            .ok_or(LogError::RecordTooLarge {
                index: entry.log_id.index,
                len,
            })?;
            encoded.push((entry, framed));
        }

        let mut inner = self.lock();
        let seq = inner.next_seq;
        let mut last = inner
            .slots
            .last_key_value()
            .map(|(&index, _)| index)
            .or(inner.hard.last_purged.map(|p| p.index));
        let mut writes: Vec<SegmentWrite> = Vec::new();
        // Validate the whole batch before changing anything.
        for (entry, _) in &encoded {
            let index = entry.log_id.index;
            if last.is_some_and(|last| last.checked_add(1) != Some(index)) {
                return Err(LogError::NotContiguous { last, found: index }.into());
            }
            last = Some(index);
        }
        for (entry, framed) in encoded {
            let index = entry.log_id.index;
            let tail = inner.segments.last_key_value().map(|(&f, &len)| (f, len));
            let (segment, offset) = match tail {
                Some((first, len)) if len < self.shared.segment_bytes => (first, len),
                _ => {
                    inner.segments.insert(index, 0);
                    writes.push(SegmentWrite {
                        segment: index,
                        create: true,
                        bytes: Vec::new(),
                    });
                    (index, 0)
                }
            };
            let len = framed.len() as u64;
            inner.segments.insert(segment, offset + len);
            match writes.last_mut() {
                Some(write) if write.segment == segment => write.bytes.extend_from_slice(&framed),
                _ => writes.push(SegmentWrite {
                    segment,
                    create: false,
                    bytes: framed,
                }),
            }
            let slot = Slot {
                log_id: entry.log_id,
                segment,
                offset,
                len,
                seq,
            };
            inner.slots.insert(index, slot);
            inner.cache.insert(index, entry);
            inner.cached_bytes += len;
        }
        let done = Done::Flushed(callback);
        self.enqueue(&mut inner, |seq| Op::Append { seq, writes, done })?;
        self.trim_cache(&mut inner);
        Ok(())
    }

    async fn truncate_after(&mut self, last_log_id: Option<LogId>) -> Result<(), io::Error> {
        let (tx, rx) = oneshot::channel();
        {
            let mut inner = self.lock();
            let from = match last_log_id {
                Some(log_id) => log_id.index.saturating_add(1),
                None => 0,
            };
            let Some(&cut_at) = inner.slots.range(from..).next().map(|(_, slot)| slot) else {
                return Ok(());
            };
            let remove: Vec<u64> = inner
                .segments
                .range(cut_at.segment + 1..)
                .rev()
                .map(|(&first, _)| first)
                .collect();
            for first in &remove {
                inner.segments.remove(first);
            }
            inner.segments.insert(cut_at.segment, cut_at.offset);
            inner.slots.split_off(&from);
            inner.cache.split_off(&from);
            Self::recount_cache(&mut inner);
            let done = Done::Waiter(tx);
            let cut = (cut_at.segment, cut_at.offset);
            self.enqueue(&mut inner, |seq| Op::Truncate {
                seq,
                remove,
                cut,
                done,
            })?;
        }
        wait(rx).await
    }

    async fn purge(&mut self, log_id: LogId) -> Result<(), io::Error> {
        let (tx, rx) = oneshot::channel();
        {
            let mut inner = self.lock();
            if inner.hard.last_purged.is_some_and(|p| p >= log_id) {
                return Ok(());
            }
            let last_index = inner.slots.last_key_value().map(|(&index, _)| index);
            inner.hard.last_purged = Some(log_id);
            let keep_from = log_id.index.saturating_add(1);
            inner.slots = inner.slots.split_off(&keep_from);
            inner.cache = inner.cache.split_off(&keep_from);
            Self::recount_cache(&mut inner);

            // A segment goes when every entry in it is purged: the next segment starts at or
            // before the first kept entry, or, for the last segment, the log's last entry is
            // purged too.
            let firsts: Vec<u64> = inner.segments.keys().copied().collect();
            let mut remove = Vec::new();
            for (position, &first) in firsts.iter().enumerate() {
                let all_purged = match firsts.get(position + 1) {
                    Some(&next) => next <= keep_from,
                    None => last_index.is_none_or(|last| last < keep_from),
                };
                if !all_purged {
                    break;
                }
                remove.push(first);
            }
            for first in &remove {
                inner.segments.remove(first);
            }
            let state = inner.hard.clone();
            let done = Done::Waiter(tx);
            self.enqueue(&mut inner, |seq| Op::Purge {
                seq,
                state,
                remove,
                done,
            })?;
        }
        wait(rx).await
    }
}
