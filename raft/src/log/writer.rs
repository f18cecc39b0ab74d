//! The log's single writer: executes queued writes in order and commits appends in groups, on a
//! dedicated thread ([`WriterMode::Thread`]) or as a tokio task ([`WriterMode::Task`]).
//!
//! Appends waiting in the queue are written together and made durable with ONE `fdatasync`, and
//! only then are their callbacks completed: nothing is reported flushed before it is durable.
//! Running on its own thread keeps `fdatasync` off tokio's worker threads; the task mode exists
//! for file systems that never block (the simulation's in-memory disk), where a thread would run
//! outside the simulation's virtual time and make runs irreproducible.

use std::io;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::mpsc::RecvTimeoutError;
use std::thread::JoinHandle;
use std::time::Duration;
use std::time::Instant;

use openraft::storage::IOFlushed;
use prometheus_client::metrics::counter::Counter;
use tokio::sync::oneshot;

use super::error::LogError;
use super::fs::LogFile;
use super::fs::LogFs;
use super::hard_state::HardState;
use super::segment;
use crate::metrics::DISK_BUCKETS;
use crate::metrics::LatencyHistogram;
use crate::typ::TypeConfig;

/// At most this many queued operations are taken into one group.
const MAX_BATCH: usize = 4096;

/// The default of [`super::LogOptions::commit_save_interval`]: in [`WriterMode::Thread`], a
/// committed log id that moved is written to the state file at most this often (and when the queue falls idle or closes). Each state write costs two
/// syncs and a rename; made once per group, it doubled the syncs of a replica that commits
/// one write at a time, and the next group's appends queued behind them. A stale committed
/// id only means a little more is re-applied after a restart.
pub(crate) const COMMIT_SAVE_INTERVAL: Duration = Duration::from_millis(100);

/// Bytes to append to one segment.
#[derive(Debug)]
pub(crate) struct SegmentWrite {
    /// The segment (its first index).
    pub(crate) segment: u64,
    /// Whether this write starts a new segment file.
    pub(crate) create: bool,
    /// Framed records.
    pub(crate) bytes: Vec<u8>,
}

/// Who to tell when an operation is done.
pub(crate) enum Done {
    /// openraft's append callback.
    Flushed(IOFlushed<TypeConfig>),
    /// A caller awaiting the result.
    Waiter(oneshot::Sender<io::Result<()>>),
}

impl Done {
    fn complete(self, result: io::Result<()>) {
        match self {
            Done::Flushed(callback) => callback.io_completed(result),
            // The waiter may have given up (its future dropped); nothing is left to tell.
            Done::Waiter(tx) => {
                let _ = tx.send(result);
            }
        }
    }
}

/// One queued write. `seq` numbers operations in queue order.
pub(crate) enum Op {
    /// Append records and make them durable.
    Append {
        /// Queue position.
        seq: u64,
        /// The records, in order (more than one segment when the append rolls).
        writes: Vec<SegmentWrite>,
        /// Completed once the records are durable.
        done: Done,
    },
    /// Replace the state file.
    SaveState {
        /// Queue position.
        seq: u64,
        /// The whole state to write.
        state: HardState,
        /// Completed once the state is durable.
        done: Done,
    },
    /// Replace the state file because the committed log id moved. Nobody waits for it: it is
    /// written after the group it arrived in, once the commit save interval has passed since
    /// the last state write (at once in [`WriterMode::Task`]), unless a later state write
    /// supersedes it. Deferring it is safe because a stale committed id only means less is
    /// re-applied on restart, and it is never ahead of the log, since it follows in queue order
    /// the appends of the entries it names.
    SaveCommitted {
        /// Queue position.
        seq: u64,
        /// The whole state to write.
        state: HardState,
    },
    /// Remove the log's tail: delete whole segments from the end backward, then cut one.
    Truncate {
        /// Queue position.
        seq: u64,
        /// Segments to delete, last first.
        remove: Vec<u64>,
        /// The segment to cut, and the length to cut it to.
        cut: (u64, u64),
        /// Completed once the cut is durable.
        done: Done,
    },
    /// Record the purged log id, then delete segments holding only purged entries.
    Purge {
        /// Queue position.
        seq: u64,
        /// The state to write, with the new purged log id.
        state: HardState,
        /// Segments to delete.
        remove: Vec<u64>,
        /// Completed once the state is durable and the segments are gone.
        done: Done,
    },
}

/// Progress the writer shares with readers.
#[derive(Debug)]
pub(crate) struct Progress {
    /// The `seq` of the last operation finished: records it wrote can be read from the files.
    pub(crate) finished: AtomicU64,
    /// Set when a write failed: the files are in an unknown state and the log is stopped.
    pub(crate) stopped: AtomicBool,
    /// The latency of each segment `fdatasync` (etcd's `etcd_disk_wal_fsync_duration_seconds`).
    pub(crate) fsync: LatencyHistogram,
    /// Committed votes saved for a leader other than the previous vote's (etcd's
    /// `etcd_server_leader_changes_seen_total`).
    pub(crate) leader_changes: Counter,
}

impl Default for Progress {
    fn default() -> Self {
        Self {
            finished: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
            fsync: LatencyHistogram::new(&DISK_BUCKETS),
            leader_changes: Counter::default(),
        }
    }
}

/// Where the log's writer runs (see [`super::LogOptions::writer`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum WriterMode {
    /// A dedicated OS thread that blocks in `fdatasync`: the production mode, for real disks.
    #[default]
    Thread,
    /// A task on the tokio runtime that opens the log (opening outside a runtime fails). Its
    /// file calls run on that runtime's workers, so use it only with a [`LogFs`] that never
    /// blocks — the simulation's in-memory disk, where it keeps every write inside virtual time.
    /// Dropping the log does not wait for queued writes: the task finishes them when it next
    /// runs, or never if its runtime is shut down first (a crash, as far as the disk knows).
    Task,
}

/// The sending end of the writer's queue.
enum Queue {
    Thread(mpsc::Sender<Op>),
    Task(tokio::sync::mpsc::UnboundedSender<Op>),
}

/// The queue to the writer, and its thread in [`WriterMode::Thread`].
///
/// In thread mode, dropping it closes the queue and waits for the thread to drain it, so that a
/// log reopened in the same process never races with writes still queued by its previous
/// instance.
pub(crate) struct WriterHandle {
    tx: Option<Queue>,
    thread: Option<JoinHandle<()>>,
}

impl WriterHandle {
    /// Queues `op`; fails only when the writer is gone.
    pub(crate) fn send(&self, op: Op) -> Result<(), LogError> {
        match self.tx.as_ref().ok_or(LogError::Stopped)? {
            Queue::Thread(tx) => tx.send(op).map_err(|_| LogError::Stopped),
            Queue::Task(tx) => tx.send(op).map_err(|_| LogError::Stopped),
        }
    }
}

impl Drop for WriterHandle {
    fn drop(&mut self) {
        drop(self.tx.take());
        if let Some(thread) = self.thread.take() {
            // The writer never panics on input; if it did, there is nothing left to clean up.
            let _ = thread.join();
        }
    }
}

/// Starts the writer for the log in `dir`, in `mode`.
pub(crate) fn spawn(
    fs: Arc<dyn LogFs>,
    dir: PathBuf,
    progress: Arc<Progress>,
    mode: WriterMode,
    commit_interval: Duration,
) -> Result<WriterHandle, LogError> {
    let writer = Writer {
        fs,
        dir: dir.clone(),
        current: None,
        progress,
        pending_commit: None,
        // The simulation's task writes each committed id at the end of its group: no clock
        // decides anything there, so runs stay reproducible.
        commit_interval: match mode {
            WriterMode::Thread => commit_interval,
            WriterMode::Task => Duration::ZERO,
        },
        last_state_write: Instant::now(),
    };
    match mode {
        WriterMode::Thread => {
            let (tx, rx) = mpsc::channel();
            let thread = std::thread::Builder::new()
                .name("raft-log-writer".to_string())
                .spawn(move || writer.run(rx))
                .map_err(|source| LogError::Io {
                    op: "start writer thread for",
                    path: dir,
                    source,
                })?;
            Ok(WriterHandle {
                tx: Some(Queue::Thread(tx)),
                thread: Some(thread),
            })
        }
        WriterMode::Task => {
            let runtime = tokio::runtime::Handle::try_current().map_err(|error| LogError::Io {
                op: "start writer task (no tokio runtime) for",
                path: dir,
                source: io::Error::other(error),
            })?;
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            runtime.spawn(writer.run_task(rx));
            Ok(WriterHandle {
                tx: Some(Queue::Task(tx)),
                thread: None,
            })
        }
    }
}

struct Writer {
    fs: Arc<dyn LogFs>,
    dir: PathBuf,
    /// The segment file appends go to, open.
    current: Option<(u64, Box<dyn LogFile>)>,
    progress: Arc<Progress>,
    /// The newest committed-only state write not yet made, with its queue position.
    pending_commit: Option<(u64, HardState)>,
    /// How long after the last state write a pending committed id is written.
    commit_interval: Duration,
    /// When the state file was last written.
    last_state_write: Instant,
}

/// An append taken out of its [`Op`].
struct Append {
    seq: u64,
    writes: Vec<SegmentWrite>,
    done: Done,
}

impl Writer {
    fn run(mut self, rx: mpsc::Receiver<Op>) {
        loop {
            let next = match self.pending_commit {
                None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                Some(_) => {
                    let due = self.last_state_write + self.commit_interval;
                    rx.recv_timeout(due.saturating_duration_since(Instant::now()))
                }
            };
            let first = match next {
                Ok(op) => op,
                Err(RecvTimeoutError::Timeout) => {
                    self.save_pending_commit();
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            };
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH {
                match rx.try_recv() {
                    Ok(op) => batch.push(op),
                    Err(_) => break,
                }
            }
            self.run_batch(batch);
        }
        // The queue closed (the log is dropped): the last committed id is not left behind.
        self.save_pending_commit();
    }

    /// [`Writer::run`] as a task: the same batches, taken from an async queue.
    async fn run_task(mut self, mut rx: tokio::sync::mpsc::UnboundedReceiver<Op>) {
        while let Some(first) = rx.recv().await {
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH {
                match rx.try_recv() {
                    Ok(op) => batch.push(op),
                    Err(_) => break,
                }
            }
            self.run_batch(batch);
        }
    }

    /// Executes one batch of queued operations in order, grouping consecutive appends under one
    /// sync and consecutive state writes into one write.
    fn run_batch(&mut self, batch: Vec<Op>) {
        let mut ops = batch.into_iter().peekable();
        while let Some(op) = ops.next() {
            match op {
                Op::Append { seq, writes, done } => {
                    let mut group = vec![Append { seq, writes, done }];
                    // Committed-only writes are deferred, so they do not split the group.
                    loop {
                        match ops.next_if(|op| {
                            matches!(op, Op::Append { .. } | Op::SaveCommitted { .. })
                        }) {
                            Some(Op::Append { seq, writes, done }) => {
                                group.push(Append { seq, writes, done });
                            }
                            Some(Op::SaveCommitted { seq, state }) => {
                                self.pending_commit = Some((seq, state));
                            }
                            _ => break,
                        }
                    }
                    self.append_group(group);
                }
                Op::SaveCommitted { seq, state } => self.pending_commit = Some((seq, state)),
                Op::SaveState { seq, state, done } => {
                    // Each state write carries the whole state, newest last, so one write of
                    // the last state of a run serves the run and any earlier pending commit.
                    self.pending_commit = None;
                    let mut waiters = vec![done];
                    let (mut seq, mut state) = (seq, state);
                    loop {
                        match ops.next_if(|op| {
                            matches!(op, Op::SaveState { .. } | Op::SaveCommitted { .. })
                        }) {
                            Some(Op::SaveState {
                                seq: next_seq,
                                state: next_state,
                                done,
                            }) => {
                                waiters.push(done);
                                (seq, state) = (next_seq, next_state);
                            }
                            Some(Op::SaveCommitted {
                                seq: next_seq,
                                state: next_state,
                            }) => (seq, state) = (next_seq, next_state),
                            _ => break,
                        }
                    }
                    let result = self.store_state(&state);
                    self.finish(seq, waiters, result);
                }
                Op::Truncate {
                    seq,
                    remove,
                    cut,
                    done,
                } => {
                    let result = self.guarded(|w| w.truncate(&remove, cut));
                    self.finish(seq, vec![done], result);
                }
                Op::Purge {
                    seq,
                    state,
                    remove,
                    done,
                } => {
                    // The purge's state is newer than any pending commit's.
                    self.pending_commit = None;
                    let result = self
                        .store_state(&state)
                        .and_then(|()| self.guarded(|w| w.remove_segments(&remove)));
                    self.finish(seq, vec![done], result);
                }
            }
        }
        if self.last_state_write.elapsed() >= self.commit_interval {
            self.save_pending_commit();
        }
    }

    /// Writes the pending committed-only state, if any.
    fn save_pending_commit(&mut self) {
        if let Some((seq, state)) = self.pending_commit.take() {
            let result = self.store_state(&state);
            self.finish(seq, Vec::new(), result);
        }
    }

    /// Replaces the state file with `state`.
    fn store_state(&mut self, state: &HardState) -> Result<(), LogError> {
        let result = self.guarded(|w| state.store(w.fs.as_ref(), &w.dir));
        self.last_state_write = Instant::now();
        result
    }

    /// Writes a group of appends, syncs once, then completes them all.
    fn append_group(&mut self, group: Vec<Append>) {
        let result = self.guarded(|w| {
            let mut created = false;
            for write in group.iter().flat_map(|append| &append.writes) {
                created |= w.write(write)?;
            }
            if let Some((first, file)) = &mut w.current {
                let path = w.dir.join(segment::file_name(*first));
                let started = Instant::now();
                file.sync_data().map_err(io("sync segment", &path))?;
                w.progress.fsync.observe(started.elapsed());
            }
            if created {
                w.fs.sync_dir(&w.dir)
                    .map_err(io("sync log directory", &w.dir))?;
            }
            Ok(())
        });
        let last_seq = group.last().map_or(0, |append| append.seq);
        let dones = group.into_iter().map(|append| append.done).collect();
        self.finish(last_seq, dones, result);
    }

    /// Appends one segment's records; `true` when it created the segment file.
    fn write(&mut self, write: &SegmentWrite) -> Result<bool, LogError> {
        let path = self.dir.join(segment::file_name(write.segment));
        let file = match &mut self.current {
            Some((first, file)) if *first == write.segment => file,
            current => {
                // Leaving a segment: what this group wrote to it must be durable before any
                // later record is, or a crash could leave a hole in the middle of the log.
                if let Some((first, mut old)) = current.take() {
                    let old_path = self.dir.join(segment::file_name(first));
                    let started = Instant::now();
                    old.sync_data().map_err(io("sync segment", &old_path))?;
                    self.progress.fsync.observe(started.elapsed());
                }
                let file = self
                    .fs
                    .open_append(&path)
                    .map_err(io("open segment", &path))?;
                &mut current.insert((write.segment, file)).1
            }
        };
        file.write_all(&write.bytes)
            .map_err(io("append to segment", &path))?;
        Ok(write.create)
    }

    fn truncate(&mut self, remove: &[u64], (segment, len): (u64, u64)) -> Result<(), LogError> {
        self.remove_segments(remove)?;
        let path = self.dir.join(segment::file_name(segment));
        self.fs
            .truncate(&path, len)
            .map_err(io("truncate segment", &path))
    }

    fn remove_segments(&mut self, remove: &[u64]) -> Result<(), LogError> {
        for first in remove {
            if self.current.as_ref().is_some_and(|(open, _)| open == first) {
                self.current = None;
            }
            let path = self.dir.join(segment::file_name(*first));
            self.fs.remove(&path).map_err(io("remove segment", &path))?;
        }
        if !remove.is_empty() {
            self.fs
                .sync_dir(&self.dir)
                .map_err(io("sync log directory", &self.dir))?;
        }
        Ok(())
    }

    /// Runs `work` unless the log is stopped, and stops it when `work` fails.
    fn guarded(
        &mut self,
        work: impl FnOnce(&mut Self) -> Result<(), LogError>,
    ) -> Result<(), LogError> {
        if self.progress.stopped.load(Ordering::Acquire) {
            return Err(LogError::Stopped);
        }
        let result = work(self);
        if let Err(err) = &result {
            tracing::error!(error = %err, "raft log: write failed; stopping the log");
            self.progress.stopped.store(true, Ordering::Release);
            // The open file's state is unknown; never write to it again.
            self.current = None;
        }
        result
    }

    /// Publishes progress, then completes every `done` with `result`.
    fn finish(&self, seq: u64, dones: Vec<Done>, result: Result<(), LogError>) {
        match result {
            Ok(()) => {
                self.progress.finished.fetch_max(seq, Ordering::AcqRel);
                for done in dones {
                    done.complete(Ok(()));
                }
            }
            Err(err) => {
                let kind = io::Error::from(LogError::Stopped).kind();
                let message = err.to_string();
                for done in dones {
                    done.complete(Err(io::Error::new(kind, message.clone())));
                }
            }
        }
    }
}

/// Wraps an io error with the operation and path it failed on.
fn io(op: &'static str, path: &Path) -> impl FnOnce(io::Error) -> LogError + use<> {
    let path = path.to_path_buf();
    move |source| LogError::Io { op, path, source }
}
