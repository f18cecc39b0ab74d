//! JSON -> message bytes: walks a JSON value along a message of the table and writes what
//! prost writes for the same k8s-pb value: fields in field-number order, a field only when
//! the JSON has it, lists unpacked, map entries in key order with an empty key or value left
//! out, and the special types as apimachinery writes them (`well_known`).

use std::sync::Arc;

use base64::Engine as _;
use serde_json::Map;
use serde_json::Value;

use super::EncodeError;
use super::descriptor::Card;
use super::descriptor::Field;
use super::descriptor::MessageId;
use super::descriptor::Shape;
use super::descriptor::Ty;
use super::descriptor::message;
use super::well_known;
use super::wire;
use crate::limits::MAX_NESTING_DEPTH;

/// The bytes of message `id` for `value` (without envelope).
pub fn encode_message(id: MessageId, value: &Value) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::new();
    message_into(id, value, &mut out, 0)?;
    Ok(out)
}

/// Gives the message bytes of one list item (of the message with the given id).
pub type ItemBytes<'a> = dyn FnMut(MessageId, &Value) -> Result<Arc<[u8]>, EncodeError> + 'a;

/// The bytes of list message `id` for `value`, each of its `items` written as `item` gives
/// its message bytes (the cached encodings of stored versions), never re-encoded here.
pub fn encode_list(
    id: MessageId,
    value: &Value,
    item: &mut ItemBytes<'_>,
) -> Result<Vec<u8>, EncodeError> {
    let m = message(id);
    let mut out = Vec::new();
    for field in m.by_tag.iter().map(|i| &m.fields[usize::from(*i)]) {
        match (field.json, field.ty, value.get(field.json)) {
            (_, _, None | Some(Value::Null)) => {}
            ("items", Ty::Message(item_id), Some(Value::Array(items))) => {
                for v in items {
                    wire::put_bytes(&mut out, field.tag, &item(item_id, v)?);
                }
            }
            (_, _, Some(v)) => field_into(field, v, &mut out, 0).map_err(|e| e.at(field.json))?,
        }
    }
    Ok(out)
}

/// Appends the bytes of message `id` for `value` to `out`.
pub(super) fn message_into(
    id: MessageId,
    value: &Value,
    out: &mut Vec<u8>,
    depth: usize,
) -> Result<(), EncodeError> {
    if depth > MAX_NESTING_DEPTH {
        return Err(EncodeError::new("the object is nested too deeply"));
    }
    let m = message(id);
    match m.shape {
        Shape::Special(special) => well_known::encode(special, m.name, value, out, depth),
        Shape::Struct => {
            let Value::Object(object) = value else {
                return Err(EncodeError::new("expected an object"));
            };
            for field in m.by_tag.iter().map(|i| &m.fields[usize::from(*i)]) {
                if field.card == Card::Inline {
                    value_into(field.tag, field.ty, value, out, depth)?;
                    continue;
                }
                match object.get(field.json) {
                    None | Some(Value::Null) => {}
                    Some(v) => field_into(field, v, out, depth).map_err(|e| e.at(field.json))?,
                }
            }
            Ok(())
        }
    }
}

fn field_into(
    field: &Field,
    value: &Value,
    out: &mut Vec<u8>,
    depth: usize,
) -> Result<(), EncodeError> {
    match field.card {
        Card::Optional | Card::Inline => value_into(field.tag, field.ty, value, out, depth),
        Card::Repeated => {
            let Value::Array(items) = value else {
                return Err(EncodeError::new("expected an array"));
            };
            items
                .iter()
                .try_for_each(|item| value_into(field.tag, field.ty, item, out, depth))
        }
        Card::Map => {
            let Value::Object(entries) = value else {
                return Err(EncodeError::new("expected an object"));
            };
            map_into(field, entries, out, depth)
        }
    }
}

fn map_into(
    field: &Field,
    entries: &Map<String, Value>,
    out: &mut Vec<u8>,
    depth: usize,
) -> Result<(), EncodeError> {
    let mut sorted: Vec<(&String, &Value)> = entries.iter().collect();
    sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut entry = Vec::new();
    for (key, value) in sorted {
        entry.clear();
        if !key.is_empty() {
            wire::put_bytes(&mut entry, 1, key.as_bytes());
        }
        let mut encoded = Vec::new();
        value_into(2, field.ty, value, &mut encoded, depth).map_err(|e| e.at(key))?;
        if !is_default(field.ty, &encoded) {
            entry.extend_from_slice(&encoded);
        }
        wire::put_bytes(out, field.tag, &entry);
    }
    Ok(())
}

/// Whether an encoded map value is its type's default, which prost leaves out of an entry.
fn is_default(ty: Ty, encoded: &[u8]) -> bool {
    match ty {
        // A key byte and a zero length or value.
        Ty::String | Ty::Bytes | Ty::Message(_) | Ty::Bool | Ty::Int32 | Ty::Int64 => {
            encoded.get(1..) == Some(&[0])
        }
        Ty::Double => encoded.get(1..) == Some(&[0; 8]),
    }
}

/// Writes one value of type `ty` as field `tag`.
pub(super) fn value_into(
    tag: u32,
    ty: Ty,
    value: &Value,
    out: &mut Vec<u8>,
    depth: usize,
) -> Result<(), EncodeError> {
    match ty {
        Ty::String => {
            let text = value
                .as_str()
                .ok_or_else(|| EncodeError::new("expected a string"))?;
            wire::put_bytes(out, tag, text.as_bytes());
        }
        Ty::Bytes => {
            let text = value
                .as_str()
                .ok_or_else(|| EncodeError::new("expected a base64 string"))?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|_| EncodeError::new("expected a base64 string"))?;
            wire::put_bytes(out, tag, &bytes);
        }
        Ty::Bool => {
            let b = value
                .as_bool()
                .ok_or_else(|| EncodeError::new("expected a boolean"))?;
            wire::put_varint_field(out, tag, u64::from(b));
        }
        Ty::Int32 => {
            let n = integer(value)?;
            let n = i32::try_from(n).map_err(|_| EncodeError::new("an int32 out of range"))?;
            wire::put_varint_field(out, tag, i64::from(n) as u64);
        }
        Ty::Int64 => wire::put_varint_field(out, tag, integer(value)? as u64),
        Ty::Double => {
            let f = value
                .as_f64()
                .ok_or_else(|| EncodeError::new("expected a number"))?;
            wire::put_key(out, tag, wire::FIXED64);
            out.extend_from_slice(&f.to_le_bytes());
        }
        Ty::Message(id) => {
            let mut inner = Vec::new();
            message_into(id, value, &mut inner, depth + 1)?;
            wire::put_bytes(out, tag, &inner);
        }
    }
    Ok(())
}

/// A JSON number as an integer (a float with no fraction counts, as Go's decoder takes it).
fn integer(value: &Value) -> Result<i64, EncodeError> {
    if let Some(n) = value.as_i64() {
        return Ok(n);
    }
    match value.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 9.2e18 => Ok(f as i64),
        _ => Err(EncodeError::new("expected an integer")),
    }
}
