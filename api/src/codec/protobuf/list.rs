//! A list's Protobuf written while it is sent: the envelope and the list's own fields before
//! the items, each item's message from the replica's cache (encoded once while cached), and
//! the envelope's last fields after them. The envelope's `raw` field is length-prefixed, so
//! the items are measured before the first byte is written.

use std::sync::Arc;

use serde_json::Value;

use super::EncodeError;
use super::EncodingCache;
use super::MessageId;
use super::PREFIX;
use super::descriptor;
use super::descriptor::Ty;
use super::encode;
use super::encode_message;
use super::message_of_kind;
use super::wire;
use crate::flavor::Flavor;

/// The `runtime.Unknown` fields after `raw`: `contentEncoding` and `contentType`, empty, as
/// Go writes them.
const CLOSE: [u8; 4] = [0x1a, 0x00, 0x22, 0x00];

/// How one list kind is written around its items: the list message without items (kind,
/// apiVersion, list metadata), and the field its items go in.
#[derive(Debug)]
pub struct ListLayout {
    /// The envelope's `typeMeta` field, whole.
    type_meta: Vec<u8>,
    /// The served apiVersion (part of each item's cache key).
    api_version: String,
    /// The message of one item.
    item_id: MessageId,
    /// The field number of `items`.
    items_tag: u32,
    /// The list message's bytes without items (its metadata).
    head: Vec<u8>,
}

impl ListLayout {
    /// The layout of the list `head` (its kind, apiVersion and list metadata, without items).
    pub fn new(flavor: Flavor, head: &Value) -> Result<Self, EncodeError> {
        let text = |k: &str| head.get(k).and_then(Value::as_str).unwrap_or_default();
        let (api_version, kind) = (text("apiVersion"), text("kind"));
        let id = message_of_kind(flavor, api_version, kind)
            .ok_or_else(|| EncodeError::new("the kind has no Protobuf message"))?;
        let items_field = (descriptor::message(id).fields.iter())
            .find(|f| f.json == "items")
            .ok_or_else(|| EncodeError::new("the list message has no items"))?;
        let Ty::Message(item_id) = items_field.ty else {
            return Err(EncodeError::new("the list's items are not messages"));
        };
        let head_bytes = encode::encode_list(id, head, &mut |_, _| {
            Err(EncodeError::new("the list head holds no items"))
        })?;
        let mut type_meta_body = Vec::with_capacity(api_version.len() + kind.len() + 4);
        wire::put_bytes(&mut type_meta_body, 1, api_version.as_bytes());
        wire::put_bytes(&mut type_meta_body, 2, kind.as_bytes());
        let mut type_meta = Vec::with_capacity(type_meta_body.len() + 4);
        wire::put_bytes(&mut type_meta, 1, &type_meta_body);
        Ok(Self {
            type_meta,
            api_version: api_version.to_owned(),
            item_id,
            items_tag: items_field.tag,
            head: head_bytes,
        })
    }

    /// The message of the stored version of `key` at `revision` from `cache`, or encoded from
    /// `json` (its JSON as served, read only when not cached) and cached.
    pub fn item(
        &self,
        cache: &EncodingCache,
        key: &str,
        revision: u64,
        json: impl FnOnce() -> Vec<u8>,
    ) -> Result<Arc<[u8]>, EncodeError> {
        cache.get_or_encode_stored(key, revision, &self.api_version, || {
            let value: Value = serde_json::from_slice(&json())
                .map_err(|_| EncodeError::new("a stored object cannot be read"))?;
            encode_message(self.item_id, &value)
        })
    }

    /// [`Self::item`] again for a version measured at `len` bytes: an error if its message is
    /// no longer that long (a list written around it would be malformed).
    pub fn item_again(
        &self,
        cache: &EncodingCache,
        key: &str,
        revision: u64,
        len: usize,
        json: impl FnOnce() -> Vec<u8>,
    ) -> Result<Arc<[u8]>, EncodeError> {
        let message = self.item(cache, key, revision, json)?;
        if message.len() != len {
            return Err(EncodeError::new(
                "a stored version encoded to another length",
            ));
        }
        Ok(message)
    }

    /// The bytes an item of `len` message bytes takes in the list (its key and length too).
    pub fn framed_len(&self, len: usize) -> usize {
        varint_len(u64::from(self.items_tag) << 3) + varint_len(len as u64) + len
    }

    /// Appends one item's `message` as a field of the list.
    pub fn put_item(&self, out: &mut Vec<u8>, message: &[u8]) {
        wire::put_bytes(out, self.items_tag, message);
    }

    /// The bytes before the first item of a list whose items take `items_len` bytes (the sum
    /// of their [`Self::framed_len`]): the prefix, `typeMeta`, the key and length of `raw`,
    /// and the list's fields before its items.
    pub fn open(&self, items_len: usize) -> Vec<u8> {
        let raw_len = (self.head.len() + items_len) as u64;
        let mut out =
            Vec::with_capacity(PREFIX.len() + self.type_meta.len() + 12 + self.head.len());
        out.extend_from_slice(&PREFIX);
        out.extend_from_slice(&self.type_meta);
        wire::put_key(&mut out, 2, wire::LEN);
        wire::put_varint(&mut out, raw_len);
        out.extend_from_slice(&self.head);
        out
    }

    /// The bytes after the last item.
    pub fn close(&self) -> &'static [u8] {
        &CLOSE
    }
}

/// The bytes of `value` as a varint.
fn varint_len(value: u64) -> usize {
    (64 - value.max(1).leading_zeros() as usize).div_ceil(7)
}

#[cfg(test)]
#[path = "list_test.rs"]
mod list_test;
