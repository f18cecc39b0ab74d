//! What one watcher saw, in order: the lists it started from, the watch streams it opened on
//! which replica and from which revision, every event and bookmark each stream delivered, and
//! how each stream ended. The watch checkers (`crate::check::watch_*`) judge these logs.

use std::fmt;
use std::time::Duration;

use bytes::Bytes;

/// The kind of a change a watch event reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChangeKind {
    /// `ADDED`: the object was created.
    Added,
    /// `MODIFIED`: the object was replaced.
    Modified,
    /// `DELETED`: the object was removed (the event carries its last value).
    Deleted,
}

/// One change as a watch event reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservedChange {
    /// What happened.
    pub kind: ChangeKind,
    /// The object's name.
    pub key: String,
    /// The revision of the change: `metadata.resourceVersion` of the event's object.
    pub revision: u64,
    /// The object's value (`data.value`); for a deletion, the last value before it.
    pub value: Bytes,
}

impl fmt::Display for ObservedChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?} {} at {} ({:?})",
            self.kind,
            self.key,
            self.revision,
            String::from_utf8_lossy(&self.value)
        )
    }
}

/// One step of a watcher's life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchEntry {
    /// A quorum list on `replica` served the state at `revision`: the watcher (re)starts
    /// from there, and is accountable for every change after it.
    Listed {
        /// The replica host listed.
        replica: String,
        /// The list's `metadata.resourceVersion`.
        revision: u64,
        /// Virtual time of the answer.
        at: Duration,
    },
    /// A watch stream opened on `replica`, from `from`: the newest revision the watcher had
    /// seen (a list, an event or a bookmark).
    Opened {
        /// The replica host watched.
        replica: String,
        /// The watch's `resourceVersion`.
        from: u64,
        /// Virtual time the request was sent.
        at: Duration,
    },
    /// The open stream delivered a change.
    Event {
        /// The change.
        change: ObservedChange,
        /// Virtual time of arrival.
        at: Duration,
    },
    /// The open stream delivered a `BOOKMARK` at `revision`.
    Bookmark {
        /// The bookmark's `metadata.resourceVersion`.
        revision: u64,
        /// Virtual time of arrival.
        at: Duration,
    },
    /// The replica answered that the start revision is compacted (HTTP 410, or an `ERROR`
    /// event carrying a 410 Status): the watcher must list again.
    Gone {
        /// Virtual time of the answer.
        at: Duration,
    },
    /// The stream (or the attempt to open it) ended.
    Closed {
        /// Why: a deliberate switch, silence past the idle timeout, the server closing it, an
        /// error.
        reason: String,
        /// Virtual time it ended.
        at: Duration,
    },
}

/// Everything one watcher saw, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchLog {
    /// The watcher's name.
    pub watcher: String,
    /// Its entries, in the order they happened.
    pub entries: Vec<WatchEntry>,
}

impl WatchLog {
    /// An empty log for `watcher`.
    pub fn new(watcher: &str) -> Self {
        Self {
            watcher: watcher.to_owned(),
            entries: Vec::new(),
        }
    }

    /// The revision the watcher has seen everything up to: the newest list, event or
    /// bookmark (`None` before the first list).
    pub fn progress(&self) -> Option<u64> {
        self.entries.iter().rev().find_map(|entry| match entry {
            WatchEntry::Listed { revision, .. } | WatchEntry::Bookmark { revision, .. } => {
                Some(*revision)
            }
            WatchEntry::Event { change, .. } => Some(change.revision),
            WatchEntry::Opened { .. } | WatchEntry::Gone { .. } | WatchEntry::Closed { .. } => None,
        })
    }

    /// How often the watcher was told its revision was compacted (410), and so listed again.
    pub fn relists(&self) -> u64 {
        let gone = self
            .entries
            .iter()
            .filter(|e| matches!(e, WatchEntry::Gone { .. }))
            .count();
        u64::try_from(gone).unwrap_or(u64::MAX)
    }

    /// How many changes the watcher was delivered.
    pub fn events(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| matches!(e, WatchEntry::Event { .. }))
            .count()
    }
}
