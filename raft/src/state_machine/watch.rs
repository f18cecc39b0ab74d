//! A watch on one replica: the changes under a key prefix after a revision, replayed from the
//! MVCC history and then followed live on the apply notices (DESIGN.md §3, "Watches").
//!
//! A watch pulls; apply never waits for it. It follows the broadcast of apply notices, and when
//! it falls behind (the broadcast dropped notices it had not read, or a snapshot replaced the
//! store) it catches up from the store's history, so a slow watcher costs nothing until it
//! reads again, and fails with [`MvccError::Compacted`] only once the history it still needs is
//! compacted away.

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

use super::ApplyNotice;
use super::SharedState;
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
    notices: broadcast::Receiver<Arc<ApplyNotice>>,
    /// Batches read from history and not yet returned.
    pending: VecDeque<WatchBatch>,
    /// Every change up to here has been returned (or is not under the prefix).
    delivered: Revision,
    /// History has been read up to here; notices up to it are skipped.
    read: Revision,
    /// Whether the next changes must come from history rather than the notices.
    catching_up: bool,
}

impl WatchStream {
    /// Watches the keys under `prefix` for changes after `after`. Fails with
    /// [`MvccError::Compacted`] when `after` is below the compaction point. A revision the
    /// store has not reached yet is fine: the watch waits for it.
    pub fn new(shared: Arc<SharedState>, prefix: &str, after: Revision) -> Result<Self, MvccError> {
        // Subscribe before looking at the store, so no notice falls between the two.
        let notices = shared.subscribe_notices();
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
        })
    }

    /// The revision up to which every change under the prefix has been returned: a watch
    /// resumed after it misses nothing (what a BOOKMARK reports).
    pub fn progress(&self) -> Revision {
        self.delivered
    }

    /// The next revision's changes under the prefix. Waits while there are none; `Ok(None)`
    /// when the replica stopped. Fails with [`MvccError::Compacted`] when this watch fell so
    /// far behind that the history it needs is gone.
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
            match self.notices.recv().await {
                Ok(notice) => {
                    if let Some(batch) = self.follow(&notice) {
                        self.delivered = batch.revision;
                        return Ok(Some(batch));
                    }
                }
                Err(RecvError::Lagged(_)) => self.catching_up = true,
                Err(RecvError::Closed) => return Ok(None),
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
