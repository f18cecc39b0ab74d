//! The stored form of an object and the read hot path (DESIGN.md §4: never re-parse a stored
//! object on a read).
//!
//! An object is stored as its compact JSON WITHOUT `metadata.resourceVersion`, plus the byte
//! offset just inside `metadata`'s `{`. The resource version is the revision of the write
//! that stored the bytes, which is only known after the store committed them, and it differs
//! for every version of the object; keeping it out of the bytes means a read inserts
//! `"resourceVersion":"<mod_revision>",` at the offset with plain copies (no JSON parse, no
//! allocation per field), and a list is those splices joined by commas.
//!
//! The envelope is protobuf (prost) like everything else we persist, so fields can be added
//! (with new tags) without breaking replicas of an older version.

use std::io::Write;

use bytes::Bytes;
use prost::Message;
use serde_json::Value;

use crate::storage::Revision;

/// One stored object version: JSON without `metadata.resourceVersion`, and where `metadata`
/// begins.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StoredJson {
    /// Byte offset in `json` just after `metadata`'s opening `{`.
    #[prost(uint32, tag = "1")]
    pub metadata_offset: u32,
    /// The object's compact JSON, without `metadata.resourceVersion`.
    #[prost(bytes = "bytes", tag = "2")]
    pub json: Bytes,
}

/// Why an object could not be encoded for storage or read back from it.
#[derive(Debug, thiserror::Error)]
pub enum StoredJsonError {
    /// The object is not a JSON object with an object `metadata` (a pipeline bug).
    #[error("object has no metadata object")]
    NoMetadata,
    /// The stored bytes are not a valid envelope (corruption, or a foreign writer).
    #[error("stored object is corrupt: {0}")]
    Corrupt(String),
}

impl StoredJson {
    /// Encodes `obj` for storage. `metadata.resourceVersion`, if present, is left out.
    pub fn to_stored(obj: &Value) -> Result<Bytes, StoredJsonError> {
        let Value::Object(top) = obj else {
            return Err(StoredJsonError::NoMetadata);
        };
        let Some(Value::Object(meta)) = top.get("metadata") else {
            return Err(StoredJsonError::NoMetadata);
        };
        let mut json = Vec::with_capacity(256);
        let mut offset = 0usize;
        json.push(b'{');
        for (i, (key, value)) in top.iter().enumerate() {
            if i > 0 {
                json.push(b',');
            }
            write_json(&mut json, &Value::String(key.clone()));
            json.push(b':');
            if key == "metadata" {
                json.push(b'{');
                offset = json.len();
                let fields = meta.iter().filter(|(k, _)| *k != "resourceVersion");
                for (j, (k, v)) in fields.enumerate() {
                    if j > 0 {
                        json.push(b',');
                    }
                    write_json(&mut json, &Value::String(k.clone()));
                    json.push(b':');
                    write_json(&mut json, v);
                }
                json.push(b'}');
            } else {
                write_json(&mut json, value);
            }
        }
        json.push(b'}');
        let metadata_offset = u32::try_from(offset)
            .map_err(|_| StoredJsonError::Corrupt("object too large".into()))?;
        let envelope = Self {
            metadata_offset,
            json: Bytes::from(json),
        };
        Ok(Bytes::from(envelope.encode_to_vec()))
    }

    /// Reads the envelope of stored bytes without parsing the JSON (zero-copy: `json` shares
    /// `bytes`' buffer). Checks that the offset points just inside an object.
    pub fn from_stored(bytes: Bytes) -> Result<Self, StoredJsonError> {
        let this = Self::decode(bytes).map_err(|e| StoredJsonError::Corrupt(e.to_string()))?;
        let offset = this.metadata_offset as usize;
        let valid =
            offset >= 1 && offset < this.json.len() && this.json.get(offset - 1) == Some(&b'{');
        if !valid {
            return Err(StoredJsonError::Corrupt(format!(
                "metadata offset {offset} is not inside an object"
            )));
        }
        Ok(this)
    }

    /// Appends the object with `metadata.resourceVersion` = `revision` to `out`.
    pub fn write_with_resource_version(&self, revision: Revision, out: &mut Vec<u8>) {
        let offset = self.metadata_offset as usize;
        let (head, tail) = self.json.split_at(offset);
        out.extend_from_slice(head);
        // Writing into a Vec cannot fail.
        let _ = write!(out, "\"resourceVersion\":\"{revision}\"");
        // An empty metadata (`{}`) takes no separating comma.
        if tail.first() != Some(&b'}') {
            out.push(b',');
        }
        out.extend_from_slice(tail);
    }

    /// How many bytes [`Self::write_with_resource_version`] appends for `revision`.
    pub fn len_with_resource_version(&self, revision: Revision) -> usize {
        let tail = self
            .json
            .get(self.metadata_offset as usize..)
            .unwrap_or_default();
        let comma = usize::from(tail.first() != Some(&b'}'));
        let digits = revision.checked_ilog10().map_or(1, |d| d as usize + 1);
        self.json.len() + "\"resourceVersion\":\"\"".len() + digits + comma
    }

    /// The object with `metadata.resourceVersion` = `revision`, as bytes.
    pub fn with_resource_version(&self, revision: Revision) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.json.len() + 40);
        self.write_with_resource_version(revision, &mut out);
        out
    }

    /// The object parsed (writes only: an update compares against the current object), without
    /// `metadata.resourceVersion`.
    pub fn to_value(&self) -> Result<Value, StoredJsonError> {
        self.read_as()
    }

    /// The parts of the object `T` declares, the rest skipped unparsed; as
    /// [`Self::to_value`], without `metadata.resourceVersion`.
    pub fn read_as<T: serde::de::DeserializeOwned>(&self) -> Result<T, StoredJsonError> {
        serde_json::from_slice(&self.json).map_err(|e| StoredJsonError::Corrupt(e.to_string()))
    }

    /// Whether the stored bytes `stored` (envelope and all) may hold an object with a member
    /// named `name` at any depth, read without decoding anything: `false` only when no
    /// object in them has such a member, because the envelope keeps the JSON verbatim and
    /// [`Self::to_stored`] writes member names of plain letters without escapes. A member
    /// value or string that merely contains `"name":` answers `true`, never the reverse.
    pub fn may_have_member(stored: &[u8], name: &str) -> bool {
        let name = name.as_bytes();
        memchr::memmem::find_iter(stored, name).any(|at| {
            let before = at.checked_sub(1).and_then(|i| stored.get(i));
            let after = stored.get(at + name.len()..at + name.len() + 2);
            before == Some(&b'"') && after == Some(b"\":".as_slice())
        })
    }
}

fn write_json(out: &mut Vec<u8>, v: &Value) {
    // Serializing a Value into a Vec cannot fail: every map key is a string.
    let _ = serde_json::to_writer(out, v);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn round_trip(obj: Value, revision: Revision) -> Value {
        let stored = StoredJson::to_stored(&obj).expect("encodes");
        let parsed = StoredJson::from_stored(stored).expect("decodes");
        let bytes = parsed.with_resource_version(revision);
        serde_json::from_slice(&bytes).expect("splice yields valid JSON")
    }

    // R-RES-024: `resourceVersion` is the string of the revision that stored the bytes.
    #[test]
    fn splices_resource_version_into_metadata() {
        let obj = json!({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","uid":"u"},"data":{"a":"b"}});
        let out = round_trip(obj.clone(), 17);
        assert_eq!(out["metadata"]["resourceVersion"], "17");
        assert_eq!(out["metadata"]["name"], "x");
        assert_eq!(out["data"], obj["data"]);
    }

    // R-RES-024: the length a list announces before writing its items is what the splice
    // writes, with and without other metadata, for revisions of every width.
    #[test]
    fn spliced_length_is_known_before_writing() {
        for obj in [
            json!({"metadata":{}}),
            json!({"metadata":{"name":"n"},"kind":"X"}),
        ] {
            let stored = StoredJson::from_stored(StoredJson::to_stored(&obj).expect("encodes"))
                .expect("decodes");
            for revision in [0, 7, 10, 99, 12345, u64::MAX] {
                let written = stored.with_resource_version(revision);
                assert_eq!(stored.len_with_resource_version(revision), written.len());
            }
        }
    }

    #[test]
    fn a_member_name_is_found_in_the_stored_bytes_at_any_depth() {
        let obj = json!({"metadata":{"name":"x","ownerReferences":[{"uid":"u"}]},
            "data":{"note":"deletionTimestamp"}});
        let stored = StoredJson::to_stored(&obj).expect("encodes");
        assert!(StoredJson::may_have_member(&stored, "ownerReferences"));
        assert!(StoredJson::may_have_member(&stored, "uid"));
        assert!(!StoredJson::may_have_member(&stored, "deletionTimestamp"));
        assert!(!StoredJson::may_have_member(&stored, "owner"));
        assert!(!StoredJson::may_have_member(&stored, "References"));
        let escaped = br#"{"metadata":{"owner\u0052eferences":[]}}"#;
        let parsed: Value = serde_json::from_slice(escaped).expect("valid JSON");
        let stored = StoredJson::to_stored(&parsed).expect("encodes");
        assert!(StoredJson::may_have_member(&stored, "ownerReferences"));
    }

    #[test]
    fn empty_metadata_takes_no_comma() {
        let out = round_trip(json!({"metadata":{}}), 3);
        assert_eq!(out, json!({"metadata":{"resourceVersion":"3"}}));
        let first = round_trip(json!({"metadata":{},"kind":"X"}), 4);
        assert_eq!(
            first,
            json!({"metadata":{"resourceVersion":"4"},"kind":"X"})
        );
    }

    // R-RES-024: a client-sent `resourceVersion` is never stored; reads report the store's.
    #[test]
    fn stale_resource_version_is_not_stored() {
        let obj = json!({"metadata":{"resourceVersion":"9"},"kind":"X"});
        let stored = StoredJson::from_stored(StoredJson::to_stored(&obj).expect("encodes"))
            .expect("decodes");
        assert_eq!(&stored.json[..], br#"{"metadata":{},"kind":"X"}"#);
        let only_rv = round_trip(obj, 10);
        assert_eq!(only_rv["metadata"], json!({"resourceVersion":"10"}));
        let mixed = json!({"metadata":{"resourceVersion":"9","name":"n"}});
        assert_eq!(
            round_trip(mixed, 11)["metadata"],
            json!({"resourceVersion":"11","name":"n"})
        );
    }

    #[test]
    fn objects_without_metadata_are_refused() {
        assert!(StoredJson::to_stored(&json!({"kind":"X"})).is_err());
        assert!(StoredJson::to_stored(&json!({"metadata":[]})).is_err());
        assert!(StoredJson::to_stored(&json!([1])).is_err());
    }

    #[test]
    fn corrupt_envelopes_are_errors_not_panics() {
        assert!(StoredJson::from_stored(Bytes::from_static(b"\xff\xff\xff")).is_err());
        let bad_offset = StoredJson {
            metadata_offset: 99,
            json: Bytes::from_static(b"{}"),
        };
        assert!(StoredJson::from_stored(Bytes::from(bad_offset.encode_to_vec())).is_err());
        let not_brace = StoredJson {
            metadata_offset: 1,
            json: Bytes::from_static(b"[]"),
        };
        assert!(StoredJson::from_stored(Bytes::from(not_brace.encode_to_vec())).is_err());
        let at_end = StoredJson {
            metadata_offset: 2,
            json: Bytes::from_static(b"{}"),
        };
        assert!(StoredJson::from_stored(Bytes::from(at_end.encode_to_vec())).is_err());
        assert!(StoredJson::from_stored(Bytes::new()).is_err());
    }
}
