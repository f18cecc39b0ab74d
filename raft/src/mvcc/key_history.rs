//! The version chain of one key: every value it held since the compaction point, with
//! tombstones where it was deleted. Each value is kept in an allocation of its own
//! ([`owned`]).

use bytes::Bytes;

use super::Revision;
use super::event::Event;
use super::event::EventKind;
use crate::command::KeyValue;

/// One version of a key: a value, or a tombstone that ends a generation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Version {
    pub(crate) mod_revision: Revision,
    pub(crate) create_revision: Revision,
    pub(crate) version: u64,
    /// `None` for a tombstone.
    pub(crate) value: Option<Bytes>,
}

/// A key's versions in increasing `mod_revision` order.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct KeyHistory {
    pub(crate) versions: Vec<Version>,
}

/// `value` as the store keeps it: copied into an allocation of exactly its size.
///
/// A value arrives as a slice of a larger buffer: a peer's request body or an append-entries
/// message (of which it is a part), the HTTP connection's read buffer the body was cut from, a
/// whole snapshot file. A `Bytes` slice keeps its whole buffer alive, and kept for the life
/// of the version, slices of short-lived buffers pinned several kilobytes per 1 KiB object on
/// the replica that received the writes. The copy costs one allocation and a `memcpy` per
/// write; the stored size is then the value's own.
pub(crate) fn owned(value: &[u8]) -> Bytes {
    Bytes::copy_from_slice(value)
}

impl Version {
    /// The version as a key-value pair; `None` for a tombstone.
    fn key_value(&self, key: &str) -> Option<KeyValue> {
        Some(KeyValue {
            key: key.to_owned(),
            value: self.value.clone()?,
            create_revision: self.create_revision,
            mod_revision: self.mod_revision,
            version: self.version,
        })
    }
}

impl KeyHistory {
    /// The version visible at `at`: the newest with `mod_revision <= at`, unless a tombstone.
    pub(crate) fn visible_at(&self, key: &str, at: Revision) -> Option<KeyValue> {
        let idx = self.versions.partition_point(|v| v.mod_revision <= at);
        self.versions[..idx].last()?.key_value(key)
    }

    /// Whether a value (not a tombstone) is visible at `at`; [`Self::visible_at`] without
    /// copying the key.
    pub(crate) fn is_visible_at(&self, at: Revision) -> bool {
        let idx = self.versions.partition_point(|v| v.mod_revision <= at);
        idx > 0 && self.versions[idx - 1].value.is_some()
    }

    /// The changes this key went through at `revision`, in order, each with the value before
    /// it. Empty when the key did not change then (or that history is compacted).
    pub(crate) fn events_at(&self, key: &str, revision: Revision) -> Vec<Event> {
        let start = self.versions.partition_point(|v| v.mod_revision < revision);
        let end = self
            .versions
            .partition_point(|v| v.mod_revision <= revision);
        (start..end)
            .map(|i| {
                let prev_kv = i
                    .checked_sub(1)
                    .and_then(|p| self.versions[p].key_value(key));
                match self.versions[i].key_value(key) {
                    Some(kv) => Event {
                        kind: EventKind::Put,
                        kv,
                        prev_kv,
                    },
                    None => Event {
                        kind: EventKind::Delete,
                        kv: KeyValue {
                            key: key.to_owned(),
                            mod_revision: revision,
                            ..Default::default()
                        },
                        prev_kv,
                    },
                }
            })
            .collect()
    }

    /// The current value, if the key exists now.
    pub(crate) fn current(&self, key: &str) -> Option<KeyValue> {
        self.visible_at(key, Revision::MAX)
    }

    /// The key's current `mod_revision`, 0 when it does not exist.
    pub(crate) fn current_mod_revision(&self) -> Revision {
        match self.versions.last() {
            Some(v) if v.value.is_some() => v.mod_revision,
            _ => 0,
        }
    }

    /// Appends a write of (a copy of, see [`owned`]) `value` at `revision`.
    pub(crate) fn put(&mut self, revision: Revision, value: &[u8]) {
        let (create_revision, version) = match self.versions.last() {
            Some(v) if v.value.is_some() => (v.create_revision, v.version + 1),
            _ => (revision, 1),
        };
        self.versions.push(Version {
            mod_revision: revision,
            create_revision,
            version,
            value: Some(owned(value)),
        });
    }

    /// Appends a tombstone at `revision`; the key must currently exist.
    pub(crate) fn delete(&mut self, revision: Revision) {
        self.versions.push(Version {
            mod_revision: revision,
            create_revision: 0,
            version: 0,
            value: None,
        });
    }

    /// Drops every version that no read at or after `revision` can see. Returns true when
    /// nothing is left (the key can be forgotten).
    pub(crate) fn compact(&mut self, revision: Revision) -> bool {
        // The newest version at or below the compaction point stays visible to reads at the
        // compaction point, unless it is a tombstone; everything before it is unreachable.
        let idx = self
            .versions
            .partition_point(|v| v.mod_revision <= revision);
        if idx > 0 {
            let keep_from = if self.versions[idx - 1].value.is_some() {
                idx - 1
            } else {
                idx
            };
            self.versions.drain(..keep_from);
        }
        self.versions.is_empty()
    }
}
