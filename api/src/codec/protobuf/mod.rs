//! Protobuf (`application/vnd.<flavor>.protobuf`, spec 000 "Protobuf wrapper") for every
//! built-in kind with a Kubernetes message: JSON values to message bytes and back through a
//! message table generated from k8s-pb's sources, in the envelope Kubernetes writes
//! (`6b 38 73 00` and `runtime.Unknown`), and the length-prefixed frames of watch streams.
//!
//! - `descriptor`: the table's types and lookups; `descriptor_table` is the generated data.
//! - `encode` / `decode`: JSON <-> message bytes; `well_known`: the types with an encoding of
//!   their own.
//! - `cache`: each stored version's message bytes, encoded once per replica.
//! - `envelope`: the prefix and `Unknown`; `wire`: varints and bounded reads.
//! - `events`: watch streams of length-prefixed `WatchEvent` frames.
//! - `list`: a list written around its items' cached messages, while it is sent.
//!
//! Message bytes are what prost writes for the same k8s-pb value (fields by number, as Go's
//! generated marshalers write them too).

mod cache;
mod decode;
mod descriptor;
#[rustfmt::skip]
mod descriptor_table;
mod encode;
mod envelope;
mod events;
mod list;
mod well_known;
mod wire;

use serde_json::Map;
use serde_json::Value;

pub use cache::EncodingCache;
pub use cache::MAX_CACHED_BYTES;
pub use decode::decode_message;
pub use descriptor::MessageId;
pub use encode::encode_message;
pub use envelope::PREFIX;
pub use envelope::Unwrapped;
pub use envelope::unwrap;
pub use envelope::wrap;
pub use events::ProtobufEvents;
pub use list::ListLayout;

use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::request::RequestInfo;

/// Why bytes could not be read as a Protobuf object (a 400 naming the problem).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtobufError {
    /// The body does not start with the envelope prefix.
    #[error("the body does not start with the Protobuf envelope prefix 6b 38 73 00")]
    MissingPrefix,
    /// The envelope names a content encoding.
    #[error("the Protobuf envelope names a content encoding, which is not supported")]
    ContentEncoding,
    /// The envelope names a kind without a message.
    #[error("no Protobuf message for kind {kind:?} in {api_version:?}")]
    UnknownKind {
        /// `typeMeta.apiVersion`.
        api_version: String,
        /// `typeMeta.kind`.
        kind: String,
    },
    /// The bytes are not a message.
    #[error("malformed Protobuf message: {0}")]
    Malformed(&'static str),
    /// The bytes at a field are not that field's message.
    #[error("malformed Protobuf message at {path}: {reason}")]
    MalformedAt {
        /// The field's JSON path (`spec.containers`).
        path: String,
        /// What was wrong.
        reason: &'static str,
    },
    /// Messages nested deeper than [`crate::limits::MAX_NESTING_DEPTH`].
    #[error("the Protobuf message is nested too deeply")]
    TooDeep,
}

impl ProtobufError {
    /// The error with `field` put in front of its path.
    fn at(self, field: &str) -> Self {
        match self {
            Self::Malformed(reason) => Self::MalformedAt {
                path: field.to_owned(),
                reason,
            },
            Self::MalformedAt { path, reason } => Self::MalformedAt {
                path: format!("{field}.{path}"),
                reason,
            },
            other => other,
        }
    }
}

impl From<EncodeError> for ApiError {
    fn from(e: EncodeError) -> Self {
        ApiError::Internal(e.to_string())
    }
}

impl From<ProtobufError> for ApiError {
    fn from(e: ProtobufError) -> Self {
        ApiError::BadRequest(e.to_string())
    }
}

/// Why a JSON value could not be written as its message (a stored object the table does not
/// fit: a server fault).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot encode {path} as Protobuf: {reason}")]
pub struct EncodeError {
    /// The field's JSON path.
    pub path: String,
    /// What was wrong.
    pub reason: &'static str,
}

impl EncodeError {
    fn new(reason: &'static str) -> Self {
        Self {
            path: String::new(),
            reason,
        }
    }

    fn at(mut self, field: &str) -> Self {
        self.path = if self.path.is_empty() {
            field.to_owned()
        } else {
            format!("{field}.{}", self.path)
        };
        self
    }
}

/// The message of kind `kind` in `api_version` (as `flavor` spells groups), if it has one.
pub fn message_of_kind(flavor: Flavor, api_version: &str, kind: &str) -> Option<MessageId> {
    descriptor::message_of_kind(flavor, api_version, kind)
}

/// Whether `info`'s target is a built-in resource with a message (custom resources have
/// none: R-RES-125).
pub fn serves(flavor: Flavor, info: &RequestInfo) -> bool {
    descriptor::serves_resource(flavor, &info.api_group, &info.api_version, &info.resource)
}

/// A request body in Protobuf as the JSON the decode pipeline reads.
pub fn body_to_json(flavor: Flavor, body: &[u8]) -> Result<Vec<u8>, ProtobufError> {
    let value = decode_object(flavor, body)?;
    Ok(value.to_string().into_bytes())
}

/// The enveloped Protobuf of JSON object `value`, typed by its `apiVersion` and `kind`
/// (nothing cached).
pub fn encode_object(flavor: Flavor, value: &Value) -> Result<Vec<u8>, EncodeError> {
    encode_object_with(flavor, value, &EncodingCache::new(0))
}

/// [`encode_object`] through a replica's `cache`: an object version, and each item of a
/// list, is encoded once while cached, so gets, lists and watch events share one encoding.
pub fn encode_object_with(
    flavor: Flavor,
    value: &Value,
    cache: &EncodingCache,
) -> Result<Vec<u8>, EncodeError> {
    let text = |k: &str| value.get(k).and_then(Value::as_str).unwrap_or_default();
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    let id = message_of_kind(flavor, api_version, kind)
        .ok_or_else(|| EncodeError::new("the kind has no Protobuf message"))?;
    let raw = if value.get("items").is_some_and(Value::is_array) {
        encode::encode_list(id, value, &mut |item_id, item| {
            cache.get_or_encode(item, api_version, || encode_message(item_id, item))
        })?
    } else {
        cache
            .get_or_encode(value, api_version, || encode_message(id, value))?
            .to_vec()
    };
    Ok(wrap(api_version, kind, &raw))
}

/// The JSON object of enveloped Protobuf `bytes`, with `apiVersion` and `kind` from the
/// envelope.
pub fn decode_object(flavor: Flavor, bytes: &[u8]) -> Result<Value, ProtobufError> {
    let unwrapped = unwrap(bytes)?;
    let id = message_of_kind(flavor, &unwrapped.api_version, &unwrapped.kind).ok_or_else(|| {
        ProtobufError::UnknownKind {
            api_version: unwrapped.api_version.clone(),
            kind: unwrapped.kind.clone(),
        }
    })?;
    let Value::Object(fields) = decode_message(id, unwrapped.raw)? else {
        return Err(ProtobufError::Malformed("an object that is not a message"));
    };
    let mut object = Map::with_capacity(fields.len() + 2);
    object.insert("apiVersion".into(), Value::String(unwrapped.api_version));
    object.insert("kind".into(), Value::String(unwrapped.kind));
    object.extend(fields);
    Ok(Value::Object(object))
}

/// One watch frame: a 4-byte big-endian length, then the `WatchEvent` message (`type`, and
/// `object` as a `RawExtension` holding the enveloped object), as Kubernetes streams them.
pub fn watch_frame(event_type: &str, enveloped_object: &[u8]) -> Vec<u8> {
    let mut raw = Vec::with_capacity(enveloped_object.len() + 8);
    wire::put_bytes(&mut raw, 1, enveloped_object);
    let mut event = Vec::with_capacity(raw.len() + event_type.len() + 8);
    wire::put_bytes(&mut event, 1, event_type.as_bytes());
    wire::put_bytes(&mut event, 2, &raw);
    let mut frame = Vec::with_capacity(event.len() + 4);
    frame.extend_from_slice(&(event.len() as u32).to_be_bytes());
    frame.extend_from_slice(&event);
    frame
}

#[cfg(test)]
mod fuzz_test;
#[cfg(test)]
mod generate_test;
#[cfg(test)]
#[rustfmt::skip]
mod k8s_pb_test_table;
#[cfg(test)]
mod round_trip_test;
