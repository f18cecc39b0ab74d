//! The Kubernetes types with an encoding of their own (apimachinery's hand-written
//! marshalers): Time and MicroTime as `{seconds, nanos}`, Quantity as its string, IntOrString as `{type, intVal, strVal}`, RawExtension, FieldsV1 and
//! apiextensions JSON as raw JSON bytes, named string slices as `{items}`, and the
//! apiextensions schema-or-X unions.

use chrono::DateTime;
use chrono::SecondsFormat;
use chrono::Utc;
use serde_json::Value;

use super::EncodeError;
use super::ProtobufError;
use super::decode;
use super::descriptor::MessageId;
use super::descriptor::Special;
use super::descriptor::Ty;
use super::descriptor::message_named;
use super::encode;
use super::wire;
use super::wire::Reader;

/// Writes the message of special type `special` (named `name`) for `value`.
pub(super) fn encode(
    special: Special,
    name: &str,
    value: &Value,
    out: &mut Vec<u8>,
    depth: usize,
) -> Result<(), EncodeError> {
    match special {
        Special::Time | Special::MicroTime => {
            let text = value
                .as_str()
                .ok_or_else(|| EncodeError::new("expected a time"))?;
            if !text.is_empty() {
                let time = DateTime::parse_from_rfc3339(text)
                    .map_err(|_| EncodeError::new("expected an RFC 3339 time"))?;
                wire::put_varint_field(out, 1, time.timestamp() as u64);
                wire::put_varint_field(out, 2, u64::from(time.timestamp_subsec_nanos()));
            }
        }
        Special::Quantity => {
            let text = match value {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => return Err(EncodeError::new("expected a quantity")),
            };
            wire::put_bytes(out, 1, text.as_bytes());
        }
        Special::IntOrString => match value {
            Value::String(s) => {
                wire::put_varint_field(out, 1, 1);
                wire::put_varint_field(out, 2, 0);
                wire::put_bytes(out, 3, s.as_bytes());
            }
            number => {
                wire::put_varint_field(out, 1, 0);
                encode::value_into(2, Ty::Int32, number, out, depth)?;
                wire::put_bytes(out, 3, b"");
            }
        },
        Special::RawJson => {
            let bytes =
                serde_json::to_vec(value).map_err(|_| EncodeError::new("unencodable JSON"))?;
            wire::put_bytes(out, 1, &bytes);
        }
        Special::StringList => {
            let Value::Array(items) = value else {
                return Err(EncodeError::new("expected an array"));
            };
            for item in items {
                encode::value_into(1, Ty::String, item, out, depth)?;
            }
        }
        Special::SchemaOrArray => {
            let schema = Ty::Message(schema_message(name)?);
            match value {
                Value::Array(items) => {
                    for item in items {
                        encode::value_into(2, schema, item, out, depth)?;
                    }
                }
                other => encode::value_into(1, schema, other, out, depth)?,
            }
        }
        Special::SchemaOrBool => match value {
            Value::Bool(b) => wire::put_varint_field(out, 1, u64::from(*b)),
            other => {
                wire::put_varint_field(out, 1, 1);
                encode::value_into(2, Ty::Message(schema_message(name)?), other, out, depth)?;
            }
        },
        Special::SchemaOrStringArray => match value {
            Value::Array(items) => {
                for item in items {
                    encode::value_into(2, Ty::String, item, out, depth)?;
                }
            }
            other => {
                encode::value_into(1, Ty::Message(schema_message(name)?), other, out, depth)?;
            }
        },
    }
    Ok(())
}

/// The `JSONSchemaProps` message of the package of union `name`.
fn schema_message(name: &str) -> Result<MessageId, EncodeError> {
    let package = name.rsplit_once('.').map_or("", |(p, _)| p);
    message_named(&format!("{package}.JsonSchemaProps"))
        .ok_or_else(|| EncodeError::new("no schema message"))
}

/// The JSON of special type `special` (named `name`) read from `bytes`; `None` for the zero
/// Time, which Go's JSON writes as `null`.
pub(super) fn decode(
    special: Special,
    name: &str,
    bytes: &[u8],
    depth: usize,
) -> Result<Option<Value>, ProtobufError> {
    let mut reader = Reader::new(bytes);
    let mut ints = [0i64; 3];
    let mut texts: [Option<&[u8]>; 3] = [None; 3];
    let mut many: Vec<&[u8]> = Vec::new();
    while let Some((tag, value)) = reader.next_field()? {
        let slot = usize::try_from(tag).unwrap_or(usize::MAX).wrapping_sub(1);
        match value {
            wire::Value::Varint(v) if slot < 3 => ints[slot] = v as i64,
            wire::Value::Bytes(b) if slot < 3 => {
                let repeated = matches!(
                    (special, tag),
                    (Special::StringList, 1)
                        | (Special::SchemaOrArray, 2)
                        | (Special::SchemaOrStringArray, 2)
                );
                if repeated {
                    many.push(b);
                } else {
                    texts[slot] = Some(b);
                }
            }
            _ => {}
        }
    }
    let text = |b: Option<&[u8]>| -> Result<String, ProtobufError> {
        String::from_utf8(b.unwrap_or_default().to_vec())
            .map_err(|_| ProtobufError::Malformed("a string that is not UTF-8"))
    };
    let schema = |b: &[u8]| -> Result<Value, ProtobufError> {
        let id = message_named(&format!(
            "{}.JsonSchemaProps",
            name.rsplit_once('.').map_or("", |(p, _)| p)
        ))
        .ok_or(ProtobufError::Malformed("no schema message"))?;
        decode::message_value(id, b, depth + 1)
    };
    Ok(Some(match special {
        Special::Time | Special::MicroTime => {
            if bytes.is_empty() {
                return Ok(None);
            }
            // Go's Time keeps whole seconds only; MicroTime keeps microseconds.
            let micro = special == Special::MicroTime;
            let nanos = if micro {
                ints[1].clamp(0, 999_999_999) as u32
            } else {
                0
            };
            let time = DateTime::<Utc>::from_timestamp(ints[0], nanos)
                .ok_or(ProtobufError::Malformed("a time out of range"))?;
            let format = if micro {
                SecondsFormat::Micros
            } else {
                SecondsFormat::Secs
            };
            Value::String(time.to_rfc3339_opts(format, true))
        }
        Special::Quantity => Value::String(text(texts[0])?),
        Special::IntOrString if ints[0] == 1 => Value::String(text(texts[2])?),
        Special::IntOrString => Value::from(ints[1] as i32),
        Special::RawJson => match texts[0] {
            None | Some([]) => return Ok(None),
            Some(raw) => serde_json::from_slice(raw).map_err(|_| {
                ProtobufError::Malformed("an embedded JSON value that does not parse")
            })?,
        },
        Special::StringList => Value::Array(
            many.into_iter()
                .map(|b| text(Some(b)).map(Value::String))
                .collect::<Result<_, _>>()?,
        ),
        Special::SchemaOrArray => match texts[0] {
            Some(b) => schema(b)?,
            None => Value::Array(many.into_iter().map(schema).collect::<Result<_, _>>()?),
        },
        Special::SchemaOrBool => match texts[1] {
            Some(b) => schema(b)?,
            None => Value::Bool(ints[0] != 0),
        },
        Special::SchemaOrStringArray => match texts[0] {
            Some(b) => schema(b)?,
            None => Value::Array(
                many.into_iter()
                    .map(|b| text(Some(b)).map(Value::String))
                    .collect::<Result<_, _>>()?,
            ),
        },
    }))
}
