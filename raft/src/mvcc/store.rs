//! The MVCC store: applies transactions at revisions and answers reads at any revision since the
//! compaction point.

use std::collections::BTreeMap;
use std::ops::Bound;

use super::MvccError;
use super::Revision;
use super::event::Event;
use super::event::EventKind;
use super::history::History;
use super::key_history::KeyHistory;
use super::snapshot::KeySnapshot;
use super::snapshot::StoreSnapshot;
use super::snapshot::VersionSnapshot;
use crate::command::CommandResponse;
use crate::command::Compare;
use crate::command::KeyValue;
use crate::command::Op;
use crate::command::OpResult;
use crate::command::Txn;
use crate::command::compare;
use crate::command::op;

/// What the live keys of a store hold ([`Store::live_size`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LiveSize {
    /// The keys that hold a value.
    pub keys: usize,
    /// The bytes of their values.
    pub bytes: u64,
}

/// An in-memory multi-version key-value store.
///
/// ### Invariants
/// - `revision` only grows: [`Store::apply_txn`] and [`Store::advance`] take revisions greater
///   than the current one (the raft log index of the entry being applied).
/// - Reads at `compacted <= at <= revision` see exactly the writes with `mod_revision <= at`.
/// - Every change after `compacted` can be replayed ([`Store::events_after`]).
#[derive(Debug, Clone, Default)]
pub struct Store {
    keys: BTreeMap<String, KeyHistory>,
    history: History,
    revision: Revision,
    compacted: Revision,
    cluster_id: String,
}

/// The answer of a history read: changes in revision order, and how far they reach.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryRead {
    /// The changes under the prefix, in revision order (operation order within a revision).
    pub events: Vec<Event>,
    /// Every change under the prefix up to this revision is in `events`: the store's revision,
    /// or the last revision returned when the read stopped at its limit.
    pub through: Revision,
}

/// The answer of a range read.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeResult {
    /// Matching keys in key order, at most `limit` of them.
    pub kvs: Vec<KeyValue>,
    /// Matching keys not returned because of the limit.
    pub remaining: u64,
    /// The revision the read was served at.
    pub revision: Revision,
}

/// The answer of a chunked range read ([`Store::range_chunk`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RangeChunk {
    /// Matching keys in key order, at most the chunk's limit of them.
    pub kvs: Vec<KeyValue>,
    /// Whether matching keys follow the chunk.
    pub more: bool,
    /// The revision the read was served at.
    pub revision: Revision,
}

impl Store {
    /// An empty store at revision 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// The newest revision applied.
    pub fn revision(&self) -> Revision {
        self.revision
    }

    /// The compaction point: reads below it fail with [`MvccError::Compacted`].
    pub fn compacted(&self) -> Revision {
        self.compacted
    }

    /// How many keys hold a value now, and the bytes of those values (deleted keys whose
    /// history remains are not counted). One pass over the keys: for status, not hot paths.
    pub fn live_size(&self) -> LiveSize {
        self.keys
            .values()
            .filter_map(|h| h.versions.last()?.value.as_ref())
            .fold(LiveSize::default(), |size, value| LiveSize {
                keys: size.keys + 1,
                bytes: size.bytes + value.len() as u64,
            })
    }

    /// The cluster identity recorded in the store (empty: none recorded).
    pub fn cluster_id(&self) -> &str {
        &self.cluster_id
    }

    /// Records the cluster identity (a restore gives the restored cluster a new one).
    pub fn set_cluster_id(&mut self, cluster_id: String) {
        self.cluster_id = cluster_id;
    }

    /// Moves the store to `revision` without writing (an entry that carries no write).
    pub fn advance(&mut self, revision: Revision) {
        debug_assert!(revision >= self.revision, "revisions only grow");
        self.revision = self.revision.max(revision);
    }

    /// Applies `txn` at `revision` and returns its answer plus the events it produced, in the
    /// order of the operations.
    pub fn apply_txn(&mut self, revision: Revision, txn: &Txn) -> (CommandResponse, Vec<Event>) {
        self.advance(revision);
        let succeeded = txn.compares.iter().all(|c| self.holds(c));
        let ops = if succeeded {
            &txn.success
        } else {
            &txn.failure
        };
        let mut events = Vec::new();
        let results = ops
            .iter()
            .map(|op| self.apply_op(revision, op, &mut events))
            .collect();
        (
            CommandResponse {
                revision,
                succeeded,
                results,
                error: None,
            },
            events,
        )
    }

    fn holds(&self, c: &Compare) -> bool {
        let current = self
            .keys
            .get(&c.key)
            .map_or(0, KeyHistory::current_mod_revision);
        match c.target {
            Some(compare::Target::ModRevision(r)) => current == r,
            Some(compare::Target::Exists(e)) => (current != 0) == e,
            None => true,
        }
    }

    fn apply_op(&mut self, revision: Revision, op: &Op, events: &mut Vec<Event>) -> OpResult {
        match &op.kind {
            Some(op::Kind::Put(put)) => {
                let history = self.keys.entry(put.key.clone()).or_default();
                let prev_kv = history.current(&put.key);
                history.put(revision, &put.value);
                let kv = history.current(&put.key);
                self.history.record(revision, &put.key);
                if let Some(kv) = kv {
                    events.push(Event {
                        kind: EventKind::Put,
                        kv,
                        prev_kv: prev_kv.clone(),
                    });
                }
                OpResult { kv: prev_kv }
            }
            Some(op::Kind::Delete(key)) => {
                let Some(history) = self.keys.get_mut(key) else {
                    return OpResult { kv: None };
                };
                let prev_kv = history.current(key);
                if let Some(prev) = &prev_kv {
                    history.delete(revision);
                    self.history.record(revision, key);
                    let kv = KeyValue {
                        key: key.clone(),
                        mod_revision: revision,
                        ..Default::default()
                    };
                    events.push(Event {
                        kind: EventKind::Delete,
                        kv,
                        prev_kv: Some(prev.clone()),
                    });
                }
                OpResult { kv: prev_kv }
            }
            Some(op::Kind::Get(key)) => OpResult {
                kv: self.keys.get(key).and_then(|h| h.current(key)),
            },
            None => OpResult { kv: None },
        }
    }

    fn check_read(&self, at: Revision) -> Result<(), MvccError> {
        if at > self.revision {
            return Err(MvccError::FutureRevision {
                requested: at,
                current: self.revision,
            });
        }
        if at < self.compacted {
            return Err(MvccError::Compacted {
                requested: at,
                compacted: self.compacted,
            });
        }
        Ok(())
    }

    /// The value of `key` at revision `at` (`None`: the current revision).
    ///
    /// Fails with [`MvccError::Compacted`] below the compaction point and
    /// [`MvccError::FutureRevision`] beyond the newest applied revision.
    pub fn get(&self, key: &str, at: Option<Revision>) -> Result<Option<KeyValue>, MvccError> {
        let at = at.unwrap_or(self.revision);
        self.check_read(at)?;
        Ok(self.keys.get(key).and_then(|h| h.visible_at(key, at)))
    }

    /// Keys in `[start, end)` (`end = None`: unbounded) visible at `at` (`None`: current), at
    /// most `limit` of them (0: no limit). Errors as for [`Store::get`].
    pub fn range(
        &self,
        start: &str,
        end: Option<&str>,
        at: Option<Revision>,
        limit: usize,
    ) -> Result<RangeResult, MvccError> {
        let at = at.unwrap_or(self.revision);
        self.check_read(at)?;
        let upper = end.map_or(Bound::Unbounded, Bound::Excluded);
        let mut kvs = Vec::new();
        let mut remaining = 0u64;
        for (key, history) in self.keys.range::<str, _>((Bound::Included(start), upper)) {
            if limit == 0 || kvs.len() < limit {
                kvs.extend(history.visible_at(key, at));
            } else if history.is_visible_at(at) {
                remaining += 1;
            }
        }
        Ok(RangeResult {
            kvs,
            remaining,
            revision: at,
        })
    }

    /// The first `limit` (at least one) keys in `[start, end)` visible at `at` (`None`:
    /// current), and whether more follow; [`Store::range`] without counting the rest, so a
    /// read of a large range in chunks holds the store for no longer than each chunk takes.
    /// Errors as for [`Store::get`].
    pub fn range_chunk(
        &self,
        start: &str,
        end: Option<&str>,
        at: Option<Revision>,
        limit: usize,
    ) -> Result<RangeChunk, MvccError> {
        let at = at.unwrap_or(self.revision);
        self.check_read(at)?;
        let upper = end.map_or(Bound::Unbounded, Bound::Excluded);
        let limit = limit.max(1);
        let mut kvs = Vec::with_capacity(limit.min(1024));
        let mut more = false;
        for (key, history) in self.keys.range::<str, _>((Bound::Included(start), upper)) {
            if kvs.len() == limit {
                more = history.is_visible_at(at);
                if more {
                    break;
                }
            } else {
                kvs.extend(history.visible_at(key, at));
            }
        }
        Ok(RangeChunk {
            kvs,
            more,
            revision: at,
        })
    }

    /// Keys under `prefix` visible at `at`; see [`Store::range`].
    pub fn range_prefix(
        &self,
        prefix: &str,
        at: Option<Revision>,
        limit: usize,
    ) -> Result<RangeResult, MvccError> {
        let end = prefix_end(prefix);
        self.range(prefix, end.as_deref(), at, limit)
    }

    /// Forgets history before `revision`. Compacting to or below the current compaction point
    /// is a no-op; beyond the newest revision it fails with [`MvccError::FutureRevision`].
    pub fn compact(&mut self, revision: Revision) -> Result<(), MvccError> {
        if revision > self.revision {
            return Err(MvccError::FutureRevision {
                requested: revision,
                current: self.revision,
            });
        }
        if revision <= self.compacted {
            return Ok(());
        }
        self.keys.retain(|_, h| !h.compact(revision));
        self.history.compact(revision);
        self.compacted = revision;
        Ok(())
    }

    /// The changes to keys under `prefix` after revision `after`, in revision order, covering
    /// at most `limit` revisions that changed such keys (0: no limit); a revision's changes are
    /// never split. After the newest revision there is nothing yet: an empty read through it.
    ///
    /// Fails with [`MvccError::Compacted`] when `after` is below the compaction point (the
    /// changes just after it are gone).
    pub fn events_after(
        &self,
        prefix: &str,
        after: Revision,
        limit: usize,
    ) -> Result<HistoryRead, MvccError> {
        if after < self.compacted {
            return Err(MvccError::Compacted {
                requested: after,
                compacted: self.compacted,
            });
        }
        let mut events = Vec::new();
        let mut revisions = 0;
        for (revision, keys) in self.history.after(after) {
            if limit != 0 && revisions == limit {
                return Ok(HistoryRead {
                    events,
                    through: revision - 1,
                });
            }
            let before = events.len();
            for key in keys.iter().filter(|k| k.starts_with(prefix)) {
                if let Some(h) = self.keys.get(key) {
                    events.extend(h.events_at(key, revision));
                }
            }
            if events.len() > before {
                revisions += 1;
            }
        }
        Ok(HistoryRead {
            events,
            through: self.revision.max(after),
        })
    }

    /// The whole store, history included, as its protobuf snapshot form.
    pub fn to_snapshot(&self) -> StoreSnapshot {
        let keys = self
            .keys
            .iter()
            .map(|(key, h)| KeySnapshot {
                key: key.clone(),
                versions: h
                    .versions
                    .iter()
                    .map(|v| VersionSnapshot {
                        mod_revision: v.mod_revision,
                        create_revision: v.create_revision,
                        version: v.version,
                        value: v.value.clone(),
                    })
                    .collect(),
            })
            .collect();
        StoreSnapshot {
            revision: self.revision,
            compacted: self.compacted,
            keys,
            cluster_id: self.cluster_id.clone(),
        }
    }

    /// Rebuilds a store from [`Store::to_snapshot`]'s output.
    pub fn from_snapshot(snapshot: StoreSnapshot) -> Self {
        let keys = snapshot
            .keys
            .into_iter()
            .map(|k| {
                let versions = k
                    .versions
                    .into_iter()
                    .map(|v| super::key_history::Version {
                        mod_revision: v.mod_revision,
                        create_revision: v.create_revision,
                        version: v.version,
                        value: v.value.as_deref().map(super::key_history::owned),
                    })
                    .collect();
                (k.key, KeyHistory { versions })
            })
            .collect::<BTreeMap<_, _>>();
        let mut history = History::default();
        for (key, h) in &keys {
            for v in h
                .versions
                .iter()
                .filter(|v| v.mod_revision > snapshot.compacted)
            {
                history.record(v.mod_revision, key);
            }
        }
        Self {
            keys,
            history,
            revision: snapshot.revision,
            compacted: snapshot.compacted,
            cluster_id: snapshot.cluster_id,
        }
    }
}

/// The smallest string greater than every string starting with `prefix` (`None`: unbounded).
pub fn prefix_end(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        if let Some(next) = char::from_u32(u32::from(last) + 1) {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

#[cfg(test)]
#[path = "store_test.rs"]
mod store_test;
