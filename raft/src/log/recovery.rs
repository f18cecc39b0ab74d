//! Opening the log: reading every segment back into the in-memory index, cutting a torn tail
//! off the last segment, and finishing a purge that a crash interrupted; and reading entries
//! back from their segments.
//!
//! Opening checks every record's CRC but decodes of most only the log id ([`EntryHead`]):
//! only the entries that go into the cache are decoded whole, so a restart does not build
//! (and drop) every entry of the log.

use std::collections::BTreeMap;
use std::path::Path;

use prost::Message;

use super::error::InvalidRecord;
use super::error::LogError;
use super::fs::LogFs;
use super::record;
use super::segment;
use super::segment::Slot;
use crate::typ::Entry;
use crate::typ::LogId;
use crate::wire;

/// The log as found on disk.
#[derive(Debug, Default)]
pub(crate) struct Recovered {
    /// Every entry after the last purged one, by index.
    pub(crate) slots: BTreeMap<u64, Slot>,
    /// Every segment (by first index) and its length in bytes.
    pub(crate) segments: BTreeMap<u64, u64>,
    /// The last entries, up to the cache's bounds.
    pub(crate) cache: BTreeMap<u64, Entry>,
    /// The encoded size of the entries in `cache`.
    pub(crate) cached_bytes: u64,
}

/// Reads the segments in `dir`. `last_purged` is the index of the last purged entry; entries up
/// to it are skipped and segments holding only such entries are deleted.
///
/// A damaged record in the last segment is a write torn by a crash: it was never reported
/// durable, so the segment is cut before it (with a warning). A damaged record anywhere else,
/// entries out of order, or a missing run of entries are fatal.
pub(crate) fn recover(
    fs: &dyn LogFs,
    dir: &Path,
    last_purged: Option<u64>,
    cache_entries: usize,
    cache_bytes: u64,
) -> Result<Recovered, LogError> {
    let io = |op, path: &Path| {
        let path = path.to_path_buf();
        move |source| LogError::Io { op, path, source }
    };
    let mut firsts: Vec<u64> = fs
        .list(dir)
        .map_err(io("list log directory", dir))?
        .iter()
        .filter_map(|name| segment::parse_file_name(name))
        .collect();
    firsts.sort_unstable();

    // A purge persists the purged log id before deleting segments, so after a crash there may be
    // segments left whose entries are all purged: the next segment starts at or before the first
    // entry that is not.
    let first_kept = last_purged.map_or(0, |p| p.saturating_add(1));
    let fully_purged = firsts
        .windows(2)
        .take_while(|pair| pair[1] <= first_kept)
        .count();
    for first in firsts.drain(..fully_purged) {
        let path = dir.join(segment::file_name(first));
        fs.remove(&path)
            .map_err(io("remove purged segment", &path))?;
    }
    if fully_purged > 0 {
        fs.sync_dir(dir).map_err(io("sync log directory", dir))?;
    }

    let mut recovered = Recovered::default();
    let mut expected = last_purged.map(|p| p.saturating_add(1));
    let count = firsts.len();
    for (position, first) in firsts.into_iter().enumerate() {
        let path = dir.join(segment::file_name(first));
        // The first segment may start before the first unpurged entry; every later one must
        // start right where its predecessor ended.
        if let Some(expected) = expected
            && (first > expected || (position > 0 && first != expected))
        {
            return Err(LogError::Gap {
                path,
                expected,
                found: first,
            });
        }
        let bytes = fs
            .read(&path)
            .map_err(io("read segment", &path))?
            .unwrap_or_default();
        let mut next = first;
        let mut offset = 0;
        while offset < bytes.len() {
            let record_at = offset as u64;
            let (payload, len) = match record::unframe(&bytes[offset..]) {
                Ok(found) => found,
                Err(damage) if position + 1 == count => {
                    tracing::warn!(
                        segment = %path.display(),
                        offset = record_at,
                        %damage,
                        "raft log: cutting a torn tail off the last segment"
                    );
                    fs.truncate(&path, record_at)
                        .map_err(io("cut torn segment tail", &path))?;
                    break;
                }
                Err(damage) => {
                    return Err(LogError::Corrupt {
                        path,
                        offset: record_at,
                        reason: damage.to_string(),
                    });
                }
            };
            let log_id = decode_log_id(payload).map_err(|source| LogError::InvalidEntry {
                path: path.clone(),
                offset: record_at,
                source,
            })?;
            if log_id.index != next {
                return Err(LogError::Gap {
                    path,
                    expected: next,
                    found: log_id.index,
                });
            }
            if expected.is_none_or(|expected| next >= expected) {
                let slot = Slot {
                    log_id,
                    segment: first,
                    offset: record_at,
                    len: len as u64,
                    seq: 0,
                };
                recovered.slots.insert(next, slot);
            }
            offset += len;
            next += 1;
        }
        // A last segment with no unpurged entry goes too: the next append starts a new segment
        // at the first unpurged index, which this one could not hold without a gap.
        if expected.is_some_and(|expected| next <= expected) {
            fs.remove(&path)
                .map_err(io("remove purged segment", &path))?;
            fs.sync_dir(dir).map_err(io("sync log directory", dir))?;
            continue;
        }
        recovered.segments.insert(first, offset as u64);
        expected = Some(expected.map_or(next, |expected| expected.max(next)));
    }
    fill_cache(fs, dir, &mut recovered, cache_entries, cache_bytes)?;
    Ok(recovered)
}

/// Reads the last entries into the cache: as many as fit in `cache_entries` and `cache_bytes`.
fn fill_cache(
    fs: &dyn LogFs,
    dir: &Path,
    recovered: &mut Recovered,
    cache_entries: usize,
    cache_bytes: u64,
) -> Result<(), LogError> {
    let mut tail = Vec::new();
    let mut bytes = 0;
    for slot in recovered.slots.values().rev().take(cache_entries) {
        if bytes + slot.len > cache_bytes {
            break;
        }
        bytes += slot.len;
        tail.push(*slot);
    }
    tail.reverse();
    for entry in read_entries(fs, dir, &tail)? {
        recovered.cache.insert(entry.log_id.index, entry);
    }
    recovered.cached_bytes = bytes;
    Ok(())
}

/// Reads the entries whose records are at `slots` (consecutive, in order) from their segments
/// in `dir`: one read per segment spanned.
pub(crate) fn read_entries(
    fs: &dyn LogFs,
    dir: &Path,
    slots: &[Slot],
) -> Result<Vec<Entry>, LogError> {
    let mut entries = Vec::with_capacity(slots.len());
    for run in slots.chunk_by(|a, b| a.segment == b.segment) {
        let (Some(first), Some(last)) = (run.first(), run.last()) else {
            continue;
        };
        let path = dir.join(segment::file_name(first.segment));
        let span = last.offset + last.len - first.offset;
        let mut bytes = vec![0; usize::try_from(span).unwrap_or(usize::MAX)];
        fs.read_at(&path, first.offset, &mut bytes)
            .map_err(|source| LogError::Io {
                op: "read segment",
                path: path.clone(),
                source,
            })?;
        for slot in run {
            let invalid = |source| LogError::InvalidEntry {
                path: path.clone(),
                offset: slot.offset,
                source,
            };
            let start = usize::try_from(slot.offset - first.offset).unwrap_or(usize::MAX);
            let record = bytes.get(start..).unwrap_or_default();
            let (payload, _) = record::unframe(record)
                .map_err(|damage| invalid(InvalidRecord::Framing(damage.to_string())))?;
            let entry = decode_entry(payload).map_err(invalid)?;
            if entry.log_id != slot.log_id {
                return Err(LogError::Gap {
                    path,
                    expected: slot.log_id.index,
                    found: entry.log_id.index,
                });
            }
            entries.push(entry);
        }
    }
    Ok(entries)
}

/// An entry with only its log id decoded: prost skips the payload field without building it.
#[derive(Clone, PartialEq, prost::Message)]
struct EntryHead {
    /// The entry's log id (tag 1 of `wire::Entry`).
    #[prost(message, optional, tag = "1")]
    log_id: Option<wire::LogId>,
}

/// Decodes only the log id of one record's payload.
fn decode_log_id(payload: &[u8]) -> Result<LogId, InvalidRecord> {
    let head = EntryHead::decode(payload).map_err(InvalidRecord::Decode)?;
    let log_id = head
        .log_id
        .ok_or(InvalidRecord::Wire(wire::WireError::MissingField("log_id")))?;
    Ok(LogId::from(log_id))
}

/// Decodes one record's payload into an entry.
pub(crate) fn decode_entry(payload: &[u8]) -> Result<Entry, InvalidRecord> {
    let wire = wire::Entry::decode(payload).map_err(InvalidRecord::Decode)?;
    Entry::try_from(wire).map_err(InvalidRecord::Wire)
}
