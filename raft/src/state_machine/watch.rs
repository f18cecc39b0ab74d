//! A watch on one replica: the changes under a key prefix after a revision, replayed from the
//! MVCC history and then followed live on the apply notices (DESIGN.md §3, "Watches").
//!
//! A watch pulls; apply never waits for it. It follows the apply notices that concern its prefix
//! (the watch hub hands each revision only to the watches whose prefix one of its keys starts
//! with), and when it falls behind (its bounded queue overflowed, or a snapshot replaced the
//! store) it catches up from the store's history, so a slow watcher costs nothing until it
//! reads again, and fails with [`MvccError::Compacted`] only once the history it still needs is
//! compacted away.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

use super::ApplyNotice;
use super::SharedState;
use super::watch_hub::Received;
use super::watch_hub::Registration;
use crate::mvcc::Event;
use crate::mvcc::MvccError;
use crate::mvcc::Revision;

/// How many revisions a catch-up reads from history at a time, so a watcher far behind does not
/// copy its whole backlog at once.
const CATCH_UP_REVISIONS: usize = 256;

/// The changes one revision made under the watched prefix, in operation order.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchBatch {
    /// The revision of the changes.
    pub revision: Revision,
    /// The changes (never empty).
    pub events: Vec<Event>,
}

/// The changes under a prefix after a revision, in revision order, each revision once.
#[derive(Debug)]
pub struct WatchStream {
    shared: Arc<SharedState>,
    prefix: String,
    notices: Registration,
    /// Batches read from history and not yet returned.
    pending: VecDeque<WatchBatch>,
    /// Every change up to here has been returned (or is not under the prefix).
    delivered: Revision,
    /// History has been read up to here; notices up to it are skipped.
    read: Revision,
    /// Whether the next changes must come from history rather than the notices.
    catching_up: bool,
    /// The highest progress reported while nothing was queued (revisions that did not concern
    /// the prefix are never queued, yet move the progress).
    reported: AtomicU64,
}

impl WatchStream {
    /// Watches the keys under `prefix` for changes after `after`. Fails with
    /// [`MvccError::Compacted`] when `after` is below the compaction point. A revision the
    /// store has not reached yet is fine: the watch waits for it.
    pub fn new(shared: Arc<SharedState>, prefix: &str, after: Revision) -> Result<Self, MvccError> {
        // Register before looking at the store, so no notice falls between the two.
        let notices = shared.register_watch(prefix);
        let compacted = shared.with_store(|s| s.compacted());
        if after < compacted {
            return Err(MvccError::Compacted {
                requested: after,
                compacted,
            });
        }
        Ok(Self {
            shared,
            prefix: prefix.to_owned(),
            notices,
            pending: VecDeque::new(),
            delivered: after,
            read: after,
            catching_up: true,
            reported: AtomicU64::new(after),
        })
    }

    /// The revision up to which every change under the prefix has been returned: a watch
    /// resumed after it misses nothing (what a BOOKMARK reports).
    pub fn progress(&self) -> Revision {
        let progress = self.delivered.max(self.reported.load(Ordering::Relaxed));
        if self.catching_up || !self.pending.is_empty() {
            return progress;
        }
        // Every notice up to the applied revision was queued before that revision was
        // published, so when the queue, looked at after it, holds nothing unread, all the
        // changes up to it have been returned.
        let applied = self.shared.applied();
        if !self.notices.nothing_after(self.read) {
            return progress;
        }
        let progress = progress.max(applied);
        self.reported.fetch_max(progress, Ordering::Relaxed);
        progress
    }

    /// The next revision's changes under the prefix. Waits while there are none (the stream
    /// lasts as long as the replica's state, so it never answers `Ok(None)`). Fails with
    /// [`MvccError::Compacted`] when this watch fell so far behind that the history it needs is
    /// gone.
    ///
    /// Cancel safe: dropping the future loses nothing.
    pub async fn next(&mut self) -> Result<Option<WatchBatch>, MvccError> {
        loop {
            if let Some(batch) = self.pending.pop_front() {
                self.delivered = batch.revision;
                if self.pending.is_empty() {
                    self.delivered = self.read;
                }
                return Ok(Some(batch));
            }
            self.delivered = self.delivered.max(self.read);
            if self.catching_up {
                self.catch_up()?;
                continue;
            }
            match self.notices.try_next() {
                Some(Received::Notice(notice)) => {
                    if let Some(batch) = self.follow(&notice) {
                        self.delivered = batch.revision;
                        return Ok(Some(batch));
                    }
                }
                Some(Received::Lagged) => self.catching_up = true,
                None => self.notices.queued().await,
            }
        }
    }

    /// Reads the next stretch of history into `pending`; done once it reaches the store's
    /// revision (later changes arrive as notices).
    fn catch_up(&mut self) -> Result<(), MvccError> {
        let (read, newest) = self.shared.with_store(|s| {
            s.events_after(&self.prefix, self.read, CATCH_UP_REVISIONS)
                .map(|r| (r, s.revision()))
        })?;
        for event in read.events {
            match self.pending.back_mut() {
                Some(batch) if batch.revision == event.revision() => batch.events.push(event),
                _ => self.pending.push_back(WatchBatch {
                    revision: event.revision(),
                    events: vec![event],
                }),
            }
        }
        self.read = read.through;
        self.catching_up = read.through < newest;
        Ok(())
    }

    /// A live notice: the changes it carries under the prefix, if it is new to this watch.
    fn follow(&mut self, notice: &ApplyNotice) -> Option<WatchBatch> {
        match notice {
            ApplyNotice::Applied { revision, events } if *revision > self.read => {
                self.read = *revision;
                let events: Vec<Event> = events
                    .iter()
                    .filter(|e| e.kv.key.starts_with(&self.prefix))
                    .cloned()
                    .collect();
                (!events.is_empty()).then_some(WatchBatch {
                    revision: *revision,
                    events,
                })
            }
            // The store was replaced wholesale: what changed in between is only in its history.
            ApplyNotice::Restored { .. } => {
                self.catching_up = true;
                None
            }
            ApplyNotice::Applied { .. } | ApplyNotice::Compacted { .. } => None,
        }
    }
}

#[cfg(test)]
#[path = "watch_test.rs"]
mod watch_test;
