//! Why a CBOR body is refused: [`CborError`], worded as Kubernetes' decoder (apimachinery
//! `runtime/serializer/cbor/internal/modes/decode.go`, fxamacker/cbor) words it.

use std::fmt;

use super::decode::MAX_TAGS;
use crate::limits::MAX_NESTING_DEPTH;

/// The eight major types, named as Kubernetes' decoder names them in its errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MajorType {
    /// 0: an unsigned integer.
    PositiveInteger,
    /// 1: a negative integer.
    NegativeInteger,
    /// 2: a byte string.
    ByteString,
    /// 3: a UTF-8 text string.
    TextString,
    /// 4: an array.
    Array,
    /// 5: a map.
    Map,
    /// 6: a tagged item.
    Tag,
    /// 7: floats and simple values.
    Primitives,
}

impl MajorType {
    pub(super) fn of(initial: u8) -> Self {
        match initial >> 5 {
            0 => Self::PositiveInteger,
            1 => Self::NegativeInteger,
            2 => Self::ByteString,
            3 => Self::TextString,
            4 => Self::Array,
            5 => Self::Map,
            6 => Self::Tag,
            _ => Self::Primitives,
        }
    }
}

impl fmt::Display for MajorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::PositiveInteger => "positive integer",
            Self::NegativeInteger => "negative integer",
            Self::ByteString => "byte string",
            Self::TextString => "UTF-8 text string",
            Self::Array => "array",
            Self::Map => "map",
            Self::Tag => "tag",
            Self::Primitives => "primitives",
        })
    }
}

/// A well-formed data item that Kubernetes' decoder refuses to accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unacceptable {
    /// A NaN float (JSON has none).
    NaN,
    /// An infinite float (JSON has none).
    Infinity,
    /// A simple value other than false, true and null.
    SimpleValue(u8),
    /// A bignum (tags 2 and 3): no JSON number holds it faithfully.
    Bignum,
}

impl fmt::Display for Unacceptable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NaN => f.write_str("floating-point NaN"),
            Self::Infinity => f.write_str("floating-point infinity"),
            Self::SimpleValue(value) => write!(f, "simple value {value} is not recognized"),
            Self::Bignum => f.write_str("bignum"),
        }
    }
}

/// Why a CBOR body was refused; every one is the client's fault (400 BadRequest).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CborError {
    /// The body is empty.
    #[error("EOF")]
    Empty,
    /// The body ends inside a data item.
    #[error("unexpected EOF")]
    UnexpectedEof,
    /// An item's head uses a reserved additional information value (28 to 30), or marks an
    /// indefinite length where the major type has none.
    #[error("cbor: invalid additional information {info} for type {major}")]
    InvalidAdditionalInfo {
        /// The low five bits of the head.
        info: u8,
        /// The head's major type.
        major: MajorType,
    },
    /// A "break" stop code outside an indefinite-length item.
    #[error("cbor: unexpected \"break\" code")]
    UnexpectedBreak,
    /// A two-byte simple value below 32 (not well-formed).
    #[error("cbor: invalid simple value {0} for type primitives")]
    ReservedSimpleValue(u8),
    /// A chunk of an indefinite-length string that is not a definite-length string of the
    /// same major type.
    #[error("cbor: wrong element type {chunk} for indefinite-length {string}")]
    WrongChunk {
        /// The chunk's major type.
        chunk: MajorType,
        /// The string's major type.
        string: MajorType,
    },
    /// Bytes after the body's one data item.
    #[error("cbor: {count} bytes of extraneous data starting at index {index}")]
    Extraneous {
        /// How many bytes follow the item.
        count: usize,
        /// Where they start.
        index: usize,
    },
    /// Arrays and maps nested deeper than [`MAX_NESTING_DEPTH`].
    #[error("cbor: exceeded max nested level {MAX_NESTING_DEPTH}")]
    TooDeep,
    /// More than [`MAX_TAGS`] tags enclosing one item.
    #[error("cbor: exceeded max number of nested tags {MAX_TAGS}")]
    TooManyTags,
    /// A text string that is not UTF-8.
    #[error("cbor: invalid UTF-8 string")]
    InvalidUtf8,
    /// A well-formed item that is refused.
    #[error("cbor: data item of cbor type {major} is not accepted by protocol: {what}")]
    Unacceptable {
        /// The item's major type.
        major: MajorType,
        /// What is refused.
        what: Unacceptable,
    },
    /// An integer outside int64.
    #[error(
        "cbor: cannot unmarshal {major} into Go value of type int64 ({value} overflows Go's int64)"
    )]
    IntegerOverflow {
        /// Positive or negative integer.
        major: MajorType,
        /// The integer.
        value: i128,
    },
    /// A map key that is not a string (objects have string keys only).
    #[error("cbor: cannot unmarshal {0} into Go value of type string")]
    NonStringKey(MajorType),
    /// A map with the same key twice (invalid CBOR, refused outright rather than reported as
    /// a duplicate field).
    #[error("cbor: found duplicate map key {key:?} at map element index {index}")]
    DuplicateKey {
        /// The key.
        key: String,
        /// The position of its second occurrence among the map's entries.
        index: usize,
    },
    /// A time tag (0 or 1) around the wrong kind of item.
    #[error("cbor: tag number {tag} must be followed by {expected}, got {got}")]
    TagContent {
        /// The tag.
        tag: u64,
        /// What it must enclose.
        expected: &'static str,
        /// What it encloses.
        got: MajorType,
    },
    /// A tag 0 text that is not an RFC 3339 time.
    #[error("cbor: cannot set text for time.Time: {text:?} is not an RFC 3339 time")]
    NotRfc3339 {
        /// The text.
        text: String,
    },
    /// A tag 1 time outside the years RFC 3339 can write.
    #[error(
        "cbor: decoded time cannot be represented in RFC3339 format with sub-second precision: Time.MarshalText: year outside of range [0,9999]"
    )]
    TimeOutOfRange,
}
