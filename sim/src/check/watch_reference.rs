//! What the watch checkers compare a watcher with: every change the history knows happened
//! (acknowledged writes with their revisions, and every change any watcher was delivered),
//! acknowledged deletes whose revision is known only to lie between two others, and each
//! watcher's log cut into segments (from a list to the next) and streams (from an open to its
//! end).

use std::collections::BTreeMap;
use std::fmt;
use std::ops::RangeInclusive;

use bytes::Bytes;

use crate::history::History;
use crate::history::WriteOp;
use crate::watch_history::ChangeKind;
use crate::watch_history::ObservedChange;
use crate::watch_history::WatchEntry;
use crate::watch_history::WatchLog;

/// A change the history knows happened at a revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KnownChange {
    pub kind: ChangeKind,
    pub key: String,
    pub revision: u64,
    /// The value, when known (a delete's acknowledgement does not say it).
    pub value: Option<Bytes>,
    /// Who says so: a write, or the watcher that was delivered it first.
    pub source: String,
}

impl KnownChange {
    /// Whether `change` is this change, as far as the history knows it.
    pub fn matches(&self, change: &ObservedChange) -> bool {
        change.kind == self.kind
            && change.key == self.key
            && change.revision == self.revision
            && self.value.as_ref().is_none_or(|v| *v == change.value)
    }
}

impl fmt::Display for KnownChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} {} at {}", self.kind, self.key, self.revision)?;
        if let Some(value) = &self.value {
            write!(f, " ({:?})", String::from_utf8_lossy(value))?;
        }
        write!(f, ", per {}", self.source)
    }
}

/// An acknowledged delete of `key`: its revision is above `after` (a write acknowledged before
/// it was sent) and below `before` (a write sent after it was acknowledged).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BoundedDelete {
    pub key: String,
    pub after: u64,
    pub before: u64,
}

/// The changes the history knows of.
#[derive(Debug, Default)]
pub(crate) struct Reference {
    /// By revision, then key.
    changes: BTreeMap<u64, BTreeMap<String, KnownChange>>,
    pub bounded_deletes: Vec<BoundedDelete>,
}

impl Reference {
    /// Acknowledged creates and updates first (their revisions are facts), then every change a
    /// watcher was delivered at a (revision, key) nothing claimed yet.
    pub fn build(history: &History) -> Self {
        let mut reference = Self::default();
        for write in &history.writes {
            let kind = match write.op {
                WriteOp::Create => ChangeKind::Added,
                WriteOp::Update | WriteOp::UpdateIf { .. } => ChangeKind::Modified,
                WriteOp::Delete => continue,
            };
            if let Some(revision) = write.acked_revision() {
                reference.insert(KnownChange {
                    kind,
                    key: write.key.clone(),
                    revision,
                    value: Some(write.value.clone()),
                    source: format!("the acknowledged write via {}", write.replica),
                });
            }
        }
        for log in &history.watches {
            for change in events(log) {
                reference.insert(KnownChange {
                    kind: change.kind,
                    key: change.key.clone(),
                    revision: change.revision,
                    value: Some(change.value.clone()),
                    source: format!("watcher {}", log.watcher),
                });
            }
        }
        for delete in history
            .writes
            .iter()
            .filter(|w| w.op == WriteOp::Delete && w.is_acked())
        {
            // Writes are linearizable: one acknowledged before the delete was sent has a lower
            // revision, one sent after the delete was acknowledged a higher one.
            let after = history
                .writes
                .iter()
                .filter(|w| w.done_at < delete.sent_at)
                .filter_map(|w| w.acked_revision())
                .max()
                .unwrap_or(0);
            let before = history
                .writes
                .iter()
                .filter(|w| w.sent_at > delete.done_at)
                .filter_map(|w| w.acked_revision())
                .min();
            if let Some(before) = before {
                reference.bounded_deletes.push(BoundedDelete {
                    key: delete.key.clone(),
                    after,
                    before,
                });
            }
        }
        reference
    }

    fn insert(&mut self, change: KnownChange) {
        self.changes
            .entry(change.revision)
            .or_default()
            .entry(change.key.clone())
            .or_insert(change);
    }

    /// The known changes with revisions in `range` (none if it is empty), in revision then
    /// key order.
    pub fn within(&self, range: RangeInclusive<u64>) -> impl Iterator<Item = &KnownChange> {
        // `BTreeMap::range` panics on a range that ends before it starts.
        let range = (range.start() <= range.end()).then(|| self.changes.range(range));
        range
            .into_iter()
            .flatten()
            .flat_map(|(_, by_key)| by_key.values())
    }

    /// The known changes at `revision`, by key.
    pub fn at(&self, revision: u64) -> Option<&BTreeMap<String, KnownChange>> {
        self.changes.get(&revision)
    }
}

/// The changes a watcher was delivered, in order.
pub(crate) fn events(log: &WatchLog) -> impl Iterator<Item = &ObservedChange> {
    log.entries.iter().filter_map(|entry| match entry {
        WatchEntry::Event { change, .. } => Some(change),
        _ => None,
    })
}

/// A stretch of a watcher's log from a list to the next list (or a 410): the watcher is
/// accountable for every change after `start` up to the newest revision it saw in it.
#[derive(Debug)]
pub(crate) struct Segment<'a> {
    pub start: u64,
    pub entries: &'a [WatchEntry],
}

impl Segment<'_> {
    /// The newest revision an event or bookmark of the segment reached (`start` if none).
    pub fn reached(&self) -> u64 {
        self.entries
            .iter()
            .filter_map(|entry| match entry {
                WatchEntry::Event { change, .. } => Some(change.revision),
                WatchEntry::Bookmark { revision, .. } => Some(*revision),
                _ => None,
            })
            .fold(self.start, u64::max)
    }

    /// The changes delivered in the segment, in order.
    pub fn events(&self) -> impl Iterator<Item = &ObservedChange> {
        self.entries.iter().filter_map(|entry| match entry {
            WatchEntry::Event { change, .. } => Some(change),
            _ => None,
        })
    }
}

/// The watcher's segments, in order.
pub(crate) fn segments(log: &WatchLog) -> Vec<Segment<'_>> {
    let mut segments = Vec::new();
    let mut current: Option<(u64, usize)> = None;
    let mut close = |current: Option<(u64, usize)>, end: usize| {
        if let Some((start, from)) = current {
            segments.push(Segment {
                start,
                entries: &log.entries[from..end],
            });
        }
    };
    for (i, entry) in log.entries.iter().enumerate() {
        match entry {
            WatchEntry::Listed { revision, .. } => {
                close(current, i);
                current = Some((*revision, i + 1));
            }
            WatchEntry::Gone { .. } => {
                close(current.take(), i);
            }
            _ => {}
        }
    }
    close(current, log.entries.len());
    segments
}

/// One watch stream: where it was opened, from which revision, and what it delivered.
#[derive(Debug)]
pub(crate) struct Stream<'a> {
    pub replica: &'a str,
    pub from: u64,
    pub events: Vec<&'a ObservedChange>,
}

/// The watcher's streams, in order.
pub(crate) fn streams(log: &WatchLog) -> Vec<Stream<'_>> {
    let mut streams: Vec<Stream<'_>> = Vec::new();
    let mut open = false;
    for entry in &log.entries {
        match entry {
            WatchEntry::Opened { replica, from, .. } => {
                streams.push(Stream {
                    replica,
                    from: *from,
                    events: Vec::new(),
                });
                open = true;
            }
            WatchEntry::Event { change, .. } if open => {
                if let Some(stream) = streams.last_mut() {
                    stream.events.push(change);
                }
            }
            WatchEntry::Listed { .. } | WatchEntry::Gone { .. } | WatchEntry::Closed { .. } => {
                open = false;
            }
            WatchEntry::Event { .. } | WatchEntry::Bookmark { .. } => {}
        }
    }
    streams
}

#[cfg(test)]
pub(crate) mod testing {
    //! Hand-made watch histories for the checkers' tests.

    use std::time::Duration;

    use super::*;
    use crate::history::WriteOutcome;
    use crate::history::WriteRecord;

    /// A change of `key` at `revision`, valued `v<revision>`.
    pub fn change(kind: ChangeKind, key: &str, revision: u64) -> ObservedChange {
        ObservedChange {
            kind,
            key: key.to_owned(),
            revision,
            value: Bytes::from(format!("v{revision}")),
        }
    }

    /// An acknowledged create of `key` at `revision` (valued as [`change`] values it), sent
    /// and acknowledged at `revision` milliseconds.
    pub fn acked_create(key: &str, revision: u64) -> WriteRecord {
        WriteRecord {
            op: WriteOp::Create,
            key: key.to_owned(),
            value: Bytes::from(format!("v{revision}")),
            replica: "replica-1".to_owned(),
            sent_at: Duration::from_millis(revision),
            done_at: Duration::from_millis(revision),
            outcome: WriteOutcome::Acked {
                revision: Some(revision),
            },
        }
    }

    /// A log builder.
    pub struct Log(pub WatchLog);

    impl Log {
        pub fn new() -> Self {
            Self(WatchLog::new("w"))
        }
        pub fn listed(mut self, revision: u64) -> Self {
            self.0.entries.push(WatchEntry::Listed {
                replica: "replica-1".to_owned(),
                revision,
                at: Duration::ZERO,
            });
            self
        }
        pub fn opened(mut self, replica: &str, from: u64) -> Self {
            self.0.entries.push(WatchEntry::Opened {
                replica: replica.to_owned(),
                from,
                at: Duration::ZERO,
            });
            self
        }
        pub fn event(mut self, kind: ChangeKind, key: &str, revision: u64) -> Self {
            self.0.entries.push(WatchEntry::Event {
                change: change(kind, key, revision),
                at: Duration::ZERO,
            });
            self
        }
        pub fn added(self, key: &str, revision: u64) -> Self {
            self.event(ChangeKind::Added, key, revision)
        }
        pub fn bookmark(mut self, revision: u64) -> Self {
            self.0.entries.push(WatchEntry::Bookmark {
                revision,
                at: Duration::ZERO,
            });
            self
        }
        pub fn closed(mut self) -> Self {
            self.0.entries.push(WatchEntry::Closed {
                reason: "switch".to_owned(),
                at: Duration::ZERO,
            });
            self
        }
        pub fn gone(mut self) -> Self {
            self.0.entries.push(WatchEntry::Gone { at: Duration::ZERO });
            self
        }
    }

    /// A history of acknowledged creates of `a`, `b`, ... at `revisions` and the watchers'
    /// `logs`.
    pub fn history(revisions: &[u64], logs: Vec<Log>) -> History {
        let mut history = History::default();
        for (i, revision) in revisions.iter().enumerate() {
            let key = char::from(b'a' + u8::try_from(i).unwrap_or(0)).to_string();
            history.record_write(acked_create(&key, *revision));
        }
        history.watches = logs.into_iter().map(|log| log.0).collect();
        history
    }
}
