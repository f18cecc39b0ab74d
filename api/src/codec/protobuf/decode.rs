//! Message bytes -> JSON: reads a message of the table from untrusted bytes and gives the
//! JSON Go's encoding of the decoded struct would give. Go clients write the zero values of
//! non-pointer fields (`protocol: ""`, `generation: 0`); such a zero stays in the JSON only
//! when Go's JSON keeps it (the field is a pointer or has no `omitempty`:
//! [`Field::keep_zero`]), so defaulting and validation see what they see for a JSON client.
//! Empty lists and maps are left out (Go's `omitempty`; `null` otherwise, which reads the
//! same). Unknown fields are skipped, as Protobuf decoders do.

use base64::Engine as _;
use serde_json::Map;
use serde_json::Number;
use serde_json::Value;

use super::ProtobufError;
use super::descriptor::Card;
use super::descriptor::Field;
use super::descriptor::MessageId;
use super::descriptor::Shape;
use super::descriptor::Ty;
use super::descriptor::message;
use super::well_known;
use super::wire;
use super::wire::Reader;
use crate::limits::MAX_NESTING_DEPTH;

/// The JSON of message `id` read from `bytes` (without envelope).
pub fn decode_message(id: MessageId, bytes: &[u8]) -> Result<Value, ProtobufError> {
    message_value(id, bytes, 0)
}

/// What one field collected while its message was read.
enum Slot {
    One(Value),
    Many(Vec<Value>),
    Entries(Map<String, Value>),
    Inline(Map<String, Value>),
}

/// The JSON of message `id` read from `bytes` at nesting `depth`.
pub(super) fn message_value(
    id: MessageId,
    bytes: &[u8],
    depth: usize,
) -> Result<Value, ProtobufError> {
    value_or_null(id, bytes, depth).map(|v| v.unwrap_or(Value::Null))
}

fn value_or_null(
    id: MessageId,
    bytes: &[u8],
    depth: usize,
) -> Result<Option<Value>, ProtobufError> {
    if depth > MAX_NESTING_DEPTH {
        return Err(ProtobufError::TooDeep);
    }
    let m = message(id);
    if let Shape::Special(special) = m.shape {
        return well_known::decode(special, m.name, bytes, depth);
    }
    let mut slots: Vec<Option<Slot>> = m.fields.iter().map(|_| None).collect();
    let mut reader = Reader::new(bytes);
    while let Some((tag, raw)) = reader.next_field()? {
        let Some(index) = m.fields.iter().position(|f| f.tag == tag) else {
            continue;
        };
        let field = &m.fields[index];
        let slot = &mut slots[index];
        match field.card {
            Card::Inline => {
                if let Some(Value::Object(fields)) =
                    scalar_or_message(field.ty, raw, depth).map_err(|e| e.at(field.json))?
                {
                    *slot = Some(Slot::Inline(fields));
                }
            }
            Card::Optional => {
                if let Some(v) =
                    scalar_or_message(field.ty, raw, depth).map_err(|e| e.at(field.json))?
                {
                    *slot = Some(Slot::One(v));
                }
            }
            Card::Repeated => {
                let v = scalar_or_message(field.ty, raw, depth)
                    .map_err(|e| e.at(field.json))?
                    .unwrap_or(Value::Null);
                match slot {
                    Some(Slot::Many(items)) => items.push(v),
                    _ => *slot = Some(Slot::Many(vec![v])),
                }
            }
            Card::Map => {
                let (key, v) = entry(field, raw, depth).map_err(|e| e.at(field.json))?;
                match slot {
                    Some(Slot::Entries(entries)) => {
                        entries.insert(key, v);
                    }
                    _ => *slot = Some(Slot::Entries(Map::from_iter([(key, v)]))),
                }
            }
        }
    }
    let mut object = Map::new();
    for (field, slot) in m.fields.iter().zip(slots) {
        match slot {
            Some(Slot::One(v))
                if field.keep_zero || matches!(field.ty, Ty::Message(_)) || !is_zero(&v) =>
            {
                object.insert(field.json.to_owned(), v);
            }
            Some(Slot::Many(items)) => {
                object.insert(field.json.to_owned(), Value::Array(items));
            }
            Some(Slot::Inline(fields)) => object.extend(fields),
            Some(Slot::Entries(entries)) => {
                let mut sorted: Vec<(String, Value)> = entries.into_iter().collect();
                sorted.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                object.insert(
                    field.json.to_owned(),
                    Value::Object(sorted.into_iter().collect()),
                );
            }
            _ => {}
        }
    }
    Ok(Some(Value::Object(object)))
}

/// Whether scalar `v` is its type's zero value (a message's JSON, even `{}`, `0` or `false`,
/// is never left out: Go's `omitempty` does not apply to structs).
fn is_zero(v: &Value) -> bool {
    match v {
        Value::String(s) => s.is_empty(),
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        _ => false,
    }
}

/// One map entry `{key: 1, value: 2}` of `field`.
fn entry(
    field: &Field,
    raw: wire::Value<'_>,
    depth: usize,
) -> Result<(String, Value), ProtobufError> {
    let wire::Value::Bytes(bytes) = raw else {
        return Err(ProtobufError::Malformed(
            "a map entry that is not length-delimited",
        ));
    };
    let mut reader = Reader::new(bytes);
    let mut key = String::new();
    let mut value = None;
    while let Some((tag, raw)) = reader.next_field()? {
        match tag {
            1 => key = string(raw)?,
            2 => value = scalar_or_message(field.ty, raw, depth)?,
            _ => {}
        }
    }
    // An entry without a value holds the type's default (prost leaves defaults out).
    let value = match (value, field.ty) {
        (Some(v), _) => v,
        (None, Ty::String | Ty::Bytes) => Value::String(String::new()),
        (None, Ty::Message(id)) => value_or_null(id, &[], depth + 1)?.unwrap_or(Value::Null),
        (None, Ty::Bool) => Value::Bool(false),
        (None, _) => Value::from(0),
    };
    Ok((key, value))
}

fn string(raw: wire::Value<'_>) -> Result<String, ProtobufError> {
    let wire::Value::Bytes(bytes) = raw else {
        return Err(ProtobufError::Malformed(
            "a string that is not length-delimited",
        ));
    };
    String::from_utf8(bytes.to_vec())
        .map_err(|_| ProtobufError::Malformed("a string that is not UTF-8"))
}

/// One value of type `ty`; `None` for a message whose JSON is `null` (the zero Time).
fn scalar_or_message(
    ty: Ty,
    raw: wire::Value<'_>,
    depth: usize,
) -> Result<Option<Value>, ProtobufError> {
    let wrong = || ProtobufError::Malformed("a field of the wrong wire type");
    Ok(Some(match (ty, raw) {
        (Ty::String, raw) => Value::String(string(raw)?),
        (Ty::Bytes, wire::Value::Bytes(b)) => {
            Value::String(base64::engine::general_purpose::STANDARD.encode(b))
        }
        (Ty::Bool, wire::Value::Varint(v)) => Value::Bool(v != 0),
        (Ty::Int32, wire::Value::Varint(v)) => Value::from(v as i32),
        (Ty::Int64, wire::Value::Varint(v)) => Value::from(v as i64),
        (Ty::Double, wire::Value::Fixed64(v)) => Number::from_f64(f64::from_bits(v))
            .map(Value::Number)
            .ok_or(ProtobufError::Malformed("a number that is not finite"))?,
        (Ty::Message(id), wire::Value::Bytes(b)) => return value_or_null(id, b, depth + 1),
        _ => return Err(wrong()),
    }))
}
