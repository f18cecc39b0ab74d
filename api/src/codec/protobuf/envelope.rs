//! The Protobuf envelope: the 4-byte prefix `6b 38 73 00` (`k8s\0`, the same in every flavor)
//! and the `runtime.Unknown` message around an object's bytes (`typeMeta`, `raw`,
//! `contentEncoding`, `contentType`), written as Go writes it: every field, the empty strings
//! included.

use super::ProtobufError;
use super::wire;
use super::wire::Reader;

/// The prefix of every enveloped Protobuf body.
pub const PREFIX: [u8; 4] = [0x6b, 0x38, 0x73, 0x00];

/// An object's type and message bytes, as read from an envelope.
#[derive(Debug, PartialEq, Eq)]
pub struct Unwrapped<'a> {
    /// `typeMeta.apiVersion`.
    pub api_version: String,
    /// `typeMeta.kind`.
    pub kind: String,
    /// The object's message bytes.
    pub raw: &'a [u8],
}

/// `raw` (the message of `kind` in `api_version`) in its envelope.
pub fn wrap(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut type_meta = Vec::with_capacity(api_version.len() + kind.len() + 4);
    wire::put_bytes(&mut type_meta, 1, api_version.as_bytes());
    wire::put_bytes(&mut type_meta, 2, kind.as_bytes());
    let mut out = Vec::with_capacity(raw.len() + type_meta.len() + 16);
    out.extend_from_slice(&PREFIX);
    wire::put_bytes(&mut out, 1, &type_meta);
    wire::put_bytes(&mut out, 2, raw);
    wire::put_bytes(&mut out, 3, b"");
    wire::put_bytes(&mut out, 4, b"");
    out
}

/// The object inside enveloped `bytes`: a missing prefix, an envelope that does not parse or
/// a content encoding (which Kubernetes never writes) is refused.
pub fn unwrap(bytes: &[u8]) -> Result<Unwrapped<'_>, ProtobufError> {
    let body = bytes
        .strip_prefix(&PREFIX)
        .ok_or(ProtobufError::MissingPrefix)?;
    let mut reader = Reader::new(body);
    let mut out = Unwrapped {
        api_version: String::new(),
        kind: String::new(),
        raw: &[],
    };
    while let Some((tag, value)) = reader.next_field()? {
        let wire::Value::Bytes(value) = value else {
            return Err(ProtobufError::Malformed(
                "an envelope field of the wrong wire type",
            ));
        };
        match tag {
            1 => {
                let mut meta = Reader::new(value);
                while let Some((tag, value)) = meta.next_field()? {
                    let text = match value {
                        wire::Value::Bytes(b) => std::str::from_utf8(b)
                            .map_err(|_| ProtobufError::Malformed("a type that is not UTF-8"))?,
                        _ => return Err(ProtobufError::Malformed("a type of the wrong wire type")),
                    };
                    match tag {
                        1 => out.api_version = text.to_owned(),
                        2 => out.kind = text.to_owned(),
                        _ => {}
                    }
                }
            }
            2 => out.raw = value,
            3 if !value.is_empty() => return Err(ProtobufError::ContentEncoding),
            _ => {}
        }
    }
    Ok(out)
}
