//! CBOR bodies (RFC 8949; spec 000 "Media types and headers", R-RES-127, R-RES-128), as
//! Kubernetes' CBOR serializer (apimachinery `runtime/serializer/cbor`) writes and reads them,
//! served only with the feature `CBORServingAndStorage`.
//!
//! Apiary's objects are JSON values, so CBOR is a transcoding at the edge: a request body is
//! decoded into the JSON value the decode pipeline reads ([`decode`], [`decode_to_json`]), and
//! a response is the JSON answer encoded ([`encode`], [`encode_json`]); a watch answers
//! [`CBOR_SEQUENCE`], one self-described event after another ([`Events`]). Objects are still
//! stored as JSON: the gate changes what is served, not what is stored.
//!
//! # Layout
//! - `encode`: values to CBOR: every item enclosed in the self-described tag (55799, the prefix
//!   `d9 d9 f7` clients recognize CBOR by), strings as byte strings, map keys in bytewise
//!   order of their encodings, integers in their shortest head, floats in the shortest width
//!   that keeps their value.
//! - `error`: why a body is refused, in the decoder's words.
//! - `decode`: CBOR to values, refusing what Kubernetes' decoder refuses: duplicate map keys,
//!   map keys other than strings, NaN and infinities, simple values other than false, true
//!   and null, bignums, integers outside int64, invalid UTF-8 text, trailing data; nesting is
//!   bounded by [`MAX_NESTING_DEPTH`](crate::limits::MAX_NESTING_DEPTH) as for JSON.

mod decode;
mod encode;
mod error;
#[cfg(test)]
mod tests;

use bytes::Bytes;
use serde_json::Value;

use super::EventEncoder;
use crate::error::ApiError;

pub use self::decode::decode;
pub use self::encode::encode;
pub use self::encode::encode_watch_event;
pub use self::error::CborError;
pub use self::error::MajorType;
pub use self::error::Unacceptable;

/// The head of the self-described CBOR tag (55799) that encloses every encoded item, and by
/// which a client tells CBOR from other formats.
pub const SELF_DESCRIBED: [u8; 3] = [0xd9, 0xd9, 0xf7];

/// The media type of a CBOR watch: a CBOR sequence (RFC 8742), one watch event per item; a
/// watch asking for `application/cbor` gets it too, as from Kubernetes.
pub const CBOR_SEQUENCE: &str = "application/cbor-seq";

/// `body` (one CBOR data item) as the JSON text the decode pipeline reads.
pub fn decode_to_json(body: &[u8]) -> Result<Vec<u8>, CborError> {
    Ok(decode(body)?.to_string().into_bytes())
}

/// The JSON text `json` (a stored object, a list, a `Status`) encoded as CBOR.
pub fn encode_json(json: &[u8]) -> Result<Vec<u8>, serde_json::Error> {
    let value: serde_json::Value = serde_json::from_slice(json)?;
    Ok(encode(&value))
}

/// The events of a CBOR watch: each one self-described item of a [`CBOR_SEQUENCE`], the event
/// `{"type", "object"}` with the object's own encoding inside.
#[derive(Debug, Clone, Copy)]
pub struct Events;

impl EventEncoder for Events {
    fn content_type(&self) -> String {
        CBOR_SEQUENCE.to_owned()
    }

    fn event(&mut self, kind: &str, object: Value) -> Result<Bytes, ApiError> {
        Ok(Bytes::from(encode_watch_event(kind, &encode(&object))))
    }
}
