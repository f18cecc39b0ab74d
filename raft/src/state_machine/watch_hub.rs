//! The dispatch of apply notices to the watches of one replica: an applied revision wakes only
//! the watches whose prefix one of its keys starts with (DESIGN.md §3, "Watches").
//!
//! Watches are filed by the part of their prefix up to and including its last `/`, so the
//! watches a key may concern are found with one lookup per `/`-boundary prefix of the key (keys
//! are `/registry/<group>/<resource>/[<ns>/]<name>`), never a scan of every watch. Each watch
//! has a bounded queue of notices: when it is full the queue is dropped and the watch is told
//! it lagged, so it catches up from the store's history and apply never waits for it.

use std::collections::HashMap;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::MutexGuard;
use std::sync::RwLock;

use tokio::sync::Notify;

use super::ApplyNotice;
use crate::mvcc::Revision;

/// How many notices a watch may hold unread before it is told it lagged.
const QUEUE_CAPACITY: usize = 1024;

/// The watches of one replica, filed by the directory part of their prefix.
#[derive(Debug, Default)]
pub(super) struct WatchHub {
    buckets: RwLock<HashMap<String, Vec<Arc<Slot>>>>,
}

/// What a watch reads from its queue.
#[derive(Debug)]
pub(super) enum Received {
    /// The next notice that concerns its prefix, in revision order.
    Notice(Arc<ApplyNotice>),
    /// Notices were dropped (its queue overflowed, or a snapshot replaced the store): the watch
    /// must catch up from history.
    Lagged,
}

/// One watch's place in the hub; leaving it (drop) removes the watch.
#[derive(Debug)]
pub(super) struct Registration {
    hub: Arc<WatchHub>,
    slot: Arc<Slot>,
}

#[derive(Debug)]
struct Slot {
    prefix: String,
    queue: Mutex<Queue>,
    wake: Notify,
}

#[derive(Debug, Default)]
struct Queue {
    notices: VecDeque<Arc<ApplyNotice>>,
    lagged: bool,
    /// The newest revision offered to this watch, so a transaction with several matching keys
    /// is queued once.
    last: Revision,
}

impl WatchHub {
    /// Files a watch on `prefix`; it receives every notice published after this returns.
    pub(super) fn register(self: &Arc<Self>, prefix: &str) -> Registration {
        let slot = Arc::new(Slot {
            prefix: prefix.to_owned(),
            queue: Mutex::new(Queue::default()),
            wake: Notify::new(),
        });
        write(&self.buckets)
            .entry(bucket_of(prefix).to_owned())
            .or_default()
            .push(slot.clone());
        Registration {
            hub: self.clone(),
            slot,
        }
    }

    /// Hands `notice` to the watches it concerns: an applied revision to those whose prefix one
    /// of its keys starts with, a restore to every watch (it must catch up from history).
    /// Compactions concern no watch (one that needs compacted history finds out when it reads
    /// it). Never waits for a watch.
    pub(super) fn dispatch(&self, notice: &Arc<ApplyNotice>) {
        let buckets = read(&self.buckets);
        if buckets.is_empty() {
            return;
        }
        match notice.as_ref() {
            ApplyNotice::Applied { revision, events } => {
                for event in events {
                    let key = event.kv.key.as_str();
                    for directory in directories(key) {
                        let Some(slots) = buckets.get(directory) else {
                            continue;
                        };
                        for slot in slots.iter().filter(|s| key.starts_with(&s.prefix)) {
                            slot.offer(*revision, notice);
                        }
                    }
                }
            }
            ApplyNotice::Restored { .. } => {
                for slot in buckets.values().flatten() {
                    slot.lag();
                }
            }
            ApplyNotice::Compacted { .. } => {}
        }
    }

    fn remove(&self, slot: &Arc<Slot>) {
        let mut buckets = write(&self.buckets);
        let bucket = bucket_of(&slot.prefix);
        if let Some(slots) = buckets.get_mut(bucket) {
            slots.retain(|s| !Arc::ptr_eq(s, slot));
            if slots.is_empty() {
                buckets.remove(bucket);
            }
        }
    }

    /// How many watches are filed (for tests).
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        read(&self.buckets).values().map(Vec::len).sum()
    }
}

impl Registration {
    /// The next thing queued for this watch, if any.
    pub(super) fn try_next(&self) -> Option<Received> {
        let mut queue = lock(&self.slot.queue);
        if std::mem::take(&mut queue.lagged) {
            return Some(Received::Lagged);
        }
        queue.notices.pop_front().map(Received::Notice)
    }

    /// Whether nothing after `revision` is queued for this watch (and it was not told to catch
    /// up): the notices queued, if any, are ones it has already read from history.
    pub(super) fn nothing_after(&self, revision: Revision) -> bool {
        let queue = lock(&self.slot.queue);
        !queue.lagged
            && queue
                .notices
                .back()
                .is_none_or(|notice| revision_of(notice) <= revision)
    }

    /// Waits until something was queued since the last [`Registration::try_next`] that found
    /// nothing (returns at once if it was queued in between). Cancel safe: the queue keeps it.
    pub(super) async fn queued(&self) {
        self.slot.wake.notified().await;
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.hub.remove(&self.slot);
    }
}

impl Slot {
    fn offer(&self, revision: Revision, notice: &Arc<ApplyNotice>) {
        {
            let mut queue = lock(&self.queue);
            if queue.last == revision {
                return;
            }
            queue.last = revision;
            if queue.notices.len() >= QUEUE_CAPACITY {
                queue.notices = VecDeque::new();
                queue.lagged = true;
            } else {
                queue.notices.push_back(notice.clone());
            }
        }
        self.wake.notify_one();
    }

    fn lag(&self) {
        {
            let mut queue = lock(&self.queue);
            queue.notices = VecDeque::new();
            queue.lagged = true;
        }
        self.wake.notify_one();
    }
}

fn revision_of(notice: &ApplyNotice) -> Revision {
    match notice {
        ApplyNotice::Applied { revision, .. }
        | ApplyNotice::Compacted { revision }
        | ApplyNotice::Restored { revision } => *revision,
    }
}

/// The bucket a prefix is filed under: up to and including its last `/` (empty without one).
fn bucket_of(prefix: &str) -> &str {
    prefix.rfind('/').map_or("", |i| &prefix[..=i])
}

/// Every bucket a key may be under: the empty one and each prefix of the key that ends with `/`.
fn directories(key: &str) -> impl Iterator<Item = &str> {
    std::iter::once("").chain(key.match_indices('/').map(|(i, _)| &key[..=i]))
}

// The locks guard plain data that every holder leaves consistent, so a poisoned one is used as is.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
#[path = "watch_hub_test.rs"]
mod watch_hub_test;
