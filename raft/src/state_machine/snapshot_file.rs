//! The on-disk form of one snapshot: a small header (magic, body length, CRC-32 of the body)
//! followed by a protobuf body holding the snapshot's metadata and the encoded MVCC store.
//!
//! A backup (`apiary snapshot save`, [`super::backup`]) is the same file with one more body field,
//! [`BackupInfo`], and a SHA-256 trailer.
//!
//! The CRC catches torn or bit-rotted files; a file that fails it is ignored at start-up (the
//! log still holds everything after the previous durable snapshot, because the log is only
//! purged up to a snapshot that was fully written, fsynced and renamed into place).

use std::io;

use bytes::Bytes;
use prost::Message;
use prost::encoding::WireType;

use super::backup::BackupInfo;
use crate::typ;
use crate::version::SNAPSHOT_FORMAT;
use crate::wire;

/// Identifies a snapshot file; the byte after it is the file's format
/// ([`crate::version::SNAPSHOT_FORMAT`]).
const MAGIC_PREFIX: &[u8; 7] = b"APSNAP\x00";
/// Magic, then the body length (u64 LE), then the body's CRC-32 (u32 LE).
const HEADER_LEN: usize = 8 + 8 + 4;

/// The tag of [`SnapshotFileBody::store`].
const STORE_TAG: u32 = 2;

/// The protobuf body of a snapshot file. Fields are only ever added, with new tags.
#[derive(Clone, PartialEq, prost::Message)]
pub(super) struct SnapshotFileBody {
    /// The snapshot's metadata. Required.
    #[prost(message, optional, tag = "1")]
    pub(super) meta: Option<wire::SnapshotMeta>,
    /// The encoded [`crate::mvcc::StoreSnapshot`].
    #[prost(bytes = "bytes", tag = "2")]
    pub(super) store: Bytes,
    /// What a backup records beyond a raft snapshot; absent in the raft snapshot directory.
    #[prost(message, optional, tag = "3")]
    pub(super) backup: Option<BackupInfo>,
}

/// A decoded snapshot file.
#[derive(Debug, Clone)]
pub struct SnapshotFile {
    /// What the snapshot covers.
    pub meta: typ::SnapshotMeta,
    /// The encoded [`crate::mvcc::StoreSnapshot`], as sent to lagging replicas.
    pub store: Bytes,
}

impl SnapshotFile {
    /// The file as two parts to write one after the other: the header and the body up to
    /// the store's bytes, then the store's bytes themselves, not copied. The store is nearly
    /// all of a snapshot (the whole MVCC store, encoded), so a file built in one buffer held
    /// two more copies of it while it was written. The bytes are those [`encode_body`] gives.
    pub fn parts(&self) -> (Vec<u8>, &Bytes) {
        let fields = SnapshotFileBody {
            meta: Some(wire::SnapshotMeta::from(&self.meta)),
            store: Bytes::new(),
            backup: None,
        };
        let store_key_and_len = 1 + prost::encoding::encoded_len_varint(self.store.len() as u64);
        let mut head = start_frame(fields.encoded_len() + store_key_and_len);
        fields.encode_raw(&mut head);
        if !self.store.is_empty() {
            prost::encoding::encode_key(STORE_TAG, WireType::LengthDelimited, &mut head);
            prost::encoding::encode_varint(self.store.len() as u64, &mut head);
        }
        let mut crc = crc32fast::Hasher::new();
        crc.update(&head[HEADER_LEN..]);
        crc.update(&self.store);
        finish_header(&mut head, crc.finalize(), self.store.len());
        (head, &self.store)
    }

    /// Decodes a file, checking its magic, length and CRC.
    pub fn decode(bytes: &[u8]) -> io::Result<Self> {
        let (meta, body) = decode_body(bytes)?;
        Ok(Self {
            meta,
            store: body.store,
        })
    }
}

/// Frames `body`: header, then the encoded body, in one buffer.
pub(super) fn encode_body(body: &SnapshotFileBody) -> Vec<u8> {
    let mut out = start_frame(body.encoded_len());
    body.encode_raw(&mut out);
    let crc = crc32fast::hash(&out[HEADER_LEN..]);
    finish_header(&mut out, crc, 0);
    out
}

/// A buffer for a file whose body takes `body_capacity` bytes, holding the header with its
/// magic and format and room for the length and CRC ([`finish_header`]).
fn start_frame(body_capacity: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + body_capacity);
    out.extend_from_slice(MAGIC_PREFIX);
    out.push(SNAPSHOT_FORMAT);
    out.resize(HEADER_LEN, 0);
    out
}

/// Writes the body's length and CRC into the header at the start of `head`, for a body of
/// `head`'s bytes after the header and `more` bytes after them.
fn finish_header(head: &mut [u8], crc: u32, more: usize) {
    let body_len = (head.len() - HEADER_LEN + more) as u64;
    head[8..16].copy_from_slice(&body_len.to_le_bytes());
    head[16..HEADER_LEN].copy_from_slice(&crc.to_le_bytes());
}

/// Checks the magic, length and CRC of a framed body and decodes it with its metadata.
pub(super) fn decode_body(bytes: &[u8]) -> io::Result<(typ::SnapshotMeta, SnapshotFileBody)> {
    let invalid = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
    if bytes.len() < HEADER_LEN || &bytes[..7] != MAGIC_PREFIX {
        return Err(invalid("snapshot file: bad magic"));
    }
    let format = bytes[7];
    if format > SNAPSHOT_FORMAT {
        return Err(invalid(&format!(
            "snapshot file: format {format} is newer than this build reads (up to \
             {SNAPSHOT_FORMAT}); a newer build wrote it"
        )));
    }
    if format == 0 {
        return Err(invalid("snapshot file: bad magic"));
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&bytes[8..16]);
    let mut crc = [0u8; 4];
    crc.copy_from_slice(&bytes[16..20]);
    let body = &bytes[HEADER_LEN..];
    if u64::from_le_bytes(len) != body.len() as u64 {
        return Err(invalid("snapshot file: truncated or overlong body"));
    }
    if crc32fast::hash(body) != u32::from_le_bytes(crc) {
        return Err(invalid("snapshot file: CRC mismatch"));
    }
    let mut body = SnapshotFileBody::decode(body)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    let meta = body
        .meta
        .take()
        .ok_or_else(|| invalid("snapshot file: missing metadata"))?;
    let meta = typ::SnapshotMeta::try_from(meta)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    Ok((meta, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> SnapshotFile {
        SnapshotFile {
            meta: typ::SnapshotMeta {
                last_log_id: Some(typ::LogId::from(wire::LogId {
                    term: 2,
                    node_id: 1,
                    index: 17,
                })),
                last_membership: typ::StoredMembership::default(),
            },
            store: Bytes::from_static(b"store bytes"),
        }
    }

    fn encoded(file: &SnapshotFile) -> Vec<u8> {
        let (head, store) = file.parts();
        [head.as_slice(), store].concat()
    }

    #[test]
    fn the_parts_are_the_body_framed_whole() {
        let empty = SnapshotFile {
            store: Bytes::new(),
            ..sample()
        };
        for file in [sample(), empty] {
            let whole = encode_body(&SnapshotFileBody {
                meta: Some(wire::SnapshotMeta::from(&file.meta)),
                store: file.store.clone(),
                backup: None,
            });
            assert_eq!(encoded(&file), whole);
        }
    }

    #[test]
    fn round_trips() {
        let back = SnapshotFile::decode(&encoded(&sample())).unwrap();
        assert_eq!(sample().meta, back.meta);
        assert_eq!(sample().store, back.store);
    }

    #[test]
    fn every_flipped_byte_is_rejected() {
        let good = encoded(&sample());
        for i in 0..good.len() {
            let mut bad = good.clone();
            bad[i] ^= 0x40;
            assert!(SnapshotFile::decode(&bad).is_err(), "flip at {i} accepted");
        }
    }

    // R-HA-015: a snapshot file of a newer format is refused with an error naming the format,
    // never misread.
    #[test]
    fn a_newer_format_is_refused_by_name() {
        let mut newer = encoded(&sample());
        assert_eq!(newer[7], SNAPSHOT_FORMAT);
        newer[7] = SNAPSHOT_FORMAT + 1;
        let error = SnapshotFile::decode(&newer).unwrap_err().to_string();
        assert!(
            error.contains(&format!("format {} is newer", SNAPSHOT_FORMAT + 1)),
            "{error}"
        );
    }

    #[test]
    fn truncated_and_empty_files_are_rejected() {
        let good = encoded(&sample());
        for len in [0, 5, HEADER_LEN, good.len() - 1] {
            assert!(SnapshotFile::decode(&good[..len]).is_err(), "len {len}");
        }
    }
}
