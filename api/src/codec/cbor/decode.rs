//! CBOR to JSON values with the checks of Kubernetes' decoder (apimachinery
//! `runtime/serializer/cbor/internal/modes/decode.go`), errors worded as its own.
//!
//! The decoder reads the input once, allocating no more than the input's length: a declared
//! length or count is checked against the bytes left before anything is reserved. Nested
//! arrays and maps stop at [`MAX_NESTING_DEPTH`]; the tags enclosing one item are read in a
//! loop, at most [`MAX_TAGS`] of them, so recursion is bounded by the nesting alone.
//!
//! What a value becomes: integers within int64 stay integers (outside it, an error), floats
//! of any width become JSON numbers, byte and text strings become strings (a byte string in
//! the "expected later encoding" tags 21, 22, 23 becomes its base64url, base64 or base16
//! text; other bytes that are not UTF-8 become U+FFFD, as they do once Kubernetes stores
//! them as JSON), tag 0 and tag 1 times become RFC 3339 strings, other tags their content.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::DateTime;
use chrono::Datelike as _;
use chrono::FixedOffset;
use chrono::Timelike as _;
use serde_json::Map;
use serde_json::Number;
use serde_json::Value;

use super::error::CborError;
use super::error::MajorType;
use super::error::Unacceptable;
use crate::limits::MAX_NESTING_DEPTH;

/// The most tags that may enclose one data item: the self-described tag and a few more fit,
/// a long chain is refused.
pub(crate) const MAX_TAGS: usize = 16;

/// The "break" stop code ending an indefinite-length item.
const BREAK: u8 = 0xff;

/// `body`, which must be exactly one CBOR data item, as a JSON value.
pub fn decode(body: &[u8]) -> Result<Value, CborError> {
    if body.is_empty() {
        return Err(CborError::Empty);
    }
    let mut decoder = Decoder {
        input: body,
        pos: 0,
    };
    let value = decoder.tagged(0)?.into_value();
    match body.len().checked_sub(decoder.pos) {
        Some(0) | None => Ok(value),
        Some(count) => Err(CborError::Extraneous {
            count,
            index: decoder.pos,
        }),
    }
}

/// An item's argument: its value, length or count, or an indefinite length.
#[derive(Debug, Clone, Copy)]
enum Argument {
    Value(u64),
    Indefinite,
}

/// An item's head: its major type, the low five bits and the argument they announce.
#[derive(Debug, Clone, Copy)]
struct Head {
    major: MajorType,
    info: u8,
    argument: Argument,
}

/// A decoded item before it becomes a value: the tags it is in may still convert it.
enum Item {
    Bytes(Vec<u8>),
    Text(String),
    Other(Value, MajorType),
}

impl Item {
    fn major(&self) -> MajorType {
        match self {
            Self::Bytes(_) => MajorType::ByteString,
            Self::Text(_) => MajorType::TextString,
            Self::Other(_, major) => *major,
        }
    }

    fn into_value(self) -> Value {
        match self {
            Self::Bytes(bytes) => Value::String(String::from_utf8_lossy(&bytes).into_owned()),
            Self::Text(text) => Value::String(text),
            Self::Other(value, _) => value,
        }
    }
}

struct Decoder<'a> {
    input: &'a [u8],
    pos: usize,
}

impl<'a> Decoder<'a> {
    fn peek(&self) -> Result<u8, CborError> {
        self.input
            .get(self.pos)
            .copied()
            .ok_or(CborError::UnexpectedEof)
    }

    /// The next `n` bytes, if there are that many.
    fn take(&mut self, n: u64) -> Result<&'a [u8], CborError> {
        let end = usize::try_from(n)
            .ok()
            .and_then(|n| self.pos.checked_add(n))
            .filter(|end| *end <= self.input.len())
            .ok_or(CborError::UnexpectedEof)?;
        let bytes = self
            .input
            .get(self.pos..end)
            .ok_or(CborError::UnexpectedEof)?;
        self.pos = end;
        Ok(bytes)
    }

    /// How many bytes are left: the most items a declared count can still have.
    fn remaining(&self) -> usize {
        self.input.len().saturating_sub(self.pos)
    }

    /// Consumes a "break" if it comes next.
    fn at_break(&mut self) -> Result<bool, CborError> {
        let found = self.peek()? == BREAK;
        if found {
            self.pos = self.pos.saturating_add(1);
        }
        Ok(found)
    }

    fn head(&mut self) -> Result<Head, CborError> {
        let initial = self.take(1)?.first().copied().unwrap_or_default();
        let major = MajorType::of(initial);
        let info = initial & 0x1f;
        let argument = match info {
            0..=23 => Argument::Value(u64::from(info)),
            24..=27 => {
                let bytes = self.take(1 << (info - 24))?;
                Argument::Value(bytes.iter().fold(0, |n, b| (n << 8) | u64::from(*b)))
            }
            31 if matches!(
                major,
                MajorType::ByteString
                    | MajorType::TextString
                    | MajorType::Array
                    | MajorType::Map
                    | MajorType::Primitives
            ) =>
            {
                Argument::Indefinite
            }
            _ => return Err(CborError::InvalidAdditionalInfo { info, major }),
        };
        Ok(Head {
            major,
            info,
            argument,
        })
    }

    /// The next item with the tags enclosing it applied, innermost first. `depth` is the
    /// number of arrays and maps around it.
    fn tagged(&mut self, depth: usize) -> Result<Item, CborError> {
        let mut tags = Vec::new();
        let mut head = self.head()?;
        while let (MajorType::Tag, Argument::Value(tag)) = (head.major, head.argument) {
            if tags.len() == MAX_TAGS {
                return Err(CborError::TooManyTags);
            }
            tags.push(tag);
            head = self.head()?;
        }
        let mut item = self.untagged(head, depth)?;
        for tag in tags.into_iter().rev() {
            item = apply_tag(tag, item)?;
        }
        Ok(item)
    }

    fn untagged(&mut self, head: Head, depth: usize) -> Result<Item, CborError> {
        let major = head.major;
        let number = |value: Value| Item::Other(value, major);
        match (major, head.argument) {
            (MajorType::PositiveInteger, Argument::Value(n)) => i64::try_from(n)
                .map(|n| number(n.into()))
                .map_err(|_| CborError::IntegerOverflow {
                    major,
                    value: i128::from(n),
                }),
            (MajorType::NegativeInteger, Argument::Value(n)) => i64::try_from(n)
                .map(|n| number((-1 - n).into()))
                .map_err(|_| CborError::IntegerOverflow {
                    major,
                    value: -1 - i128::from(n),
                }),
            (MajorType::ByteString, argument) => Ok(Item::Bytes(self.string(major, argument)?)),
            (MajorType::TextString, argument) => {
                let bytes = self.string(major, argument)?;
                String::from_utf8(bytes)
                    .map(Item::Text)
                    .map_err(|_| CborError::InvalidUtf8)
            }
            (MajorType::Array, argument) => self.array(argument, nested(depth)?),
            (MajorType::Map, argument) => self.map(argument, nested(depth)?),
            (MajorType::Primitives, _) => primitive(head).map(number),
            (MajorType::PositiveInteger | MajorType::NegativeInteger, Argument::Indefinite)
            | (MajorType::Tag, _) => Err(CborError::InvalidAdditionalInfo {
                info: head.info,
                major,
            }),
        }
    }

    /// A byte or text string's bytes: one definite-length run, or the chunks of an
    /// indefinite-length one up to its "break".
    fn string(&mut self, major: MajorType, argument: Argument) -> Result<Vec<u8>, CborError> {
        if let Argument::Value(length) = argument {
            return Ok(self.take(length)?.to_vec());
        }
        let mut bytes = Vec::new();
        while !self.at_break()? {
            let chunk = self.head()?;
            match (chunk.major == major, chunk.argument) {
                (true, Argument::Value(length)) => bytes.extend_from_slice(self.take(length)?),
                _ => {
                    return Err(CborError::WrongChunk {
                        chunk: chunk.major,
                        string: major,
                    });
                }
            }
        }
        Ok(bytes)
    }

    fn array(&mut self, argument: Argument, depth: usize) -> Result<Item, CborError> {
        let mut items = Vec::new();
        match argument {
            Argument::Value(count) => {
                items.reserve(bounded(count, self.remaining()));
                for _ in 0..count {
                    items.push(self.tagged(depth)?.into_value());
                }
            }
            Argument::Indefinite => {
                while !self.at_break()? {
                    items.push(self.tagged(depth)?.into_value());
                }
            }
        }
        Ok(Item::Other(Value::Array(items), MajorType::Array))
    }

    fn map(&mut self, argument: Argument, depth: usize) -> Result<Item, CborError> {
        let mut map = Map::new();
        let mut index = 0usize;
        let mut entry = |decoder: &mut Self| -> Result<(), CborError> {
            let key = match decoder.tagged(depth)? {
                Item::Text(text) => text,
                Item::Bytes(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Item::Other(_, major) => return Err(CborError::NonStringKey(major)),
            };
            if map.contains_key(&key) {
                return Err(CborError::DuplicateKey { key, index });
            }
            let value = decoder.tagged(depth)?.into_value();
            map.insert(key, value);
            index = index.saturating_add(1);
            Ok(())
        };
        match argument {
            Argument::Value(count) => {
                for _ in 0..count {
                    entry(self)?;
                }
            }
            Argument::Indefinite => {
                while !self.at_break()? {
                    entry(self)?;
                }
            }
        }
        Ok(Item::Other(Value::Object(map), MajorType::Map))
    }
}

/// The depth of a container's items, if the container itself is allowed at `depth`.
fn nested(depth: usize) -> Result<usize, CborError> {
    depth
        .checked_add(1)
        .filter(|inner| *inner <= MAX_NESTING_DEPTH)
        .ok_or(CborError::TooDeep)
}

/// How many items to reserve room for: the count declared, but no more than the bytes left
/// (every item takes at least one).
fn bounded(count: u64, remaining: usize) -> usize {
    usize::try_from(count).map_or(remaining, |count| count.min(remaining))
}

/// A float, false, true or null.
fn primitive(head: Head) -> Result<Value, CborError> {
    let Argument::Value(bits) = head.argument else {
        return Err(CborError::UnexpectedBreak);
    };
    let float = match head.info {
        20 => return Ok(Value::Bool(false)),
        21 => return Ok(Value::Bool(true)),
        22 => return Ok(Value::Null),
        24 => {
            let value = u8::try_from(bits).unwrap_or(u8::MAX);
            return Err(if value < 32 {
                CborError::ReservedSimpleValue(value)
            } else {
                unacceptable(Unacceptable::SimpleValue(value))
            });
        }
        25 => half(u16::try_from(bits).unwrap_or_default()),
        26 => f64::from(f32::from_bits(u32::try_from(bits).unwrap_or_default())),
        27 => f64::from_bits(bits),
        simple => return Err(unacceptable(Unacceptable::SimpleValue(simple))),
    };
    finite(float).map(Value::Number)
}

fn unacceptable(what: Unacceptable) -> CborError {
    CborError::Unacceptable {
        major: MajorType::Primitives,
        what,
    }
}

/// `float` as a JSON number, unless it is NaN or infinite.
fn finite(float: f64) -> Result<Number, CborError> {
    Number::from_f64(float).ok_or(unacceptable(if float.is_nan() {
        Unacceptable::NaN
    } else {
        Unacceptable::Infinity
    }))
}

/// An IEEE 754 half-precision float.
fn half(bits: u16) -> f64 {
    let sign = if bits & 0x8000 == 0 { 1.0 } else { -1.0 };
    let exponent = i32::from((bits >> 10) & 0x1f);
    let fraction = f64::from(bits & 0x3ff);
    match exponent {
        0 => sign * fraction * 2f64.powi(-24),
        31 if fraction == 0.0 => sign * f64::INFINITY,
        31 => f64::NAN,
        _ => sign * (1.0 + fraction / 1024.0) * 2f64.powi(exponent - 15),
    }
}

/// `item` as the tag `tag` makes it: times as RFC 3339 text, byte strings expected in a
/// later encoding as that text, bignums refused, every other tag ignored.
fn apply_tag(tag: u64, item: Item) -> Result<Item, CborError> {
    match (tag, item) {
        (0, Item::Text(text)) => match DateTime::parse_from_rfc3339(&text) {
            Ok(time) => rfc3339_nano(time).map(Item::Text),
            Err(_) => Err(CborError::NotRfc3339 { text }),
        },
        (0, item) => Err(CborError::TagContent {
            tag,
            expected: "text string",
            got: item.major(),
        }),
        (1, Item::Other(Value::Number(seconds), _)) => epoch(&seconds).map(Item::Text),
        (1, item) => Err(CborError::TagContent {
            tag,
            expected: "integer or floating-point number",
            got: item.major(),
        }),
        (2 | 3, _) => Err(CborError::Unacceptable {
            major: MajorType::Tag,
            what: Unacceptable::Bignum,
        }),
        (21, Item::Bytes(bytes)) => Ok(Item::Text(URL_SAFE_NO_PAD.encode(bytes))),
        (22, Item::Bytes(bytes)) => Ok(Item::Text(STANDARD.encode(bytes))),
        (23, Item::Bytes(bytes)) => Ok(Item::Text(
            bytes.iter().map(|b| format!("{b:02x}")).collect(),
        )),
        (_, item) => Ok(item),
    }
}

/// A tag 1 time: seconds since the epoch, whole or fractional.
fn epoch(seconds: &Number) -> Result<String, CborError> {
    let (whole, nanos) = match seconds.as_i64() {
        Some(whole) => (whole, 0),
        None => {
            let float = seconds.as_f64().unwrap_or_default();
            let whole = float.trunc();
            // Out-of-range floats saturate, and then fail the year check below.
            let nanos = ((float - whole) * 1e9) as i64;
            let whole = whole as i64;
            if nanos < 0 {
                (whole.saturating_sub(1), nanos.saturating_add(1_000_000_000))
            } else {
                (whole, nanos)
            }
        }
    };
    let nanos = u32::try_from(nanos).map_err(|_| CborError::TimeOutOfRange)?;
    let time = DateTime::from_timestamp(whole, nanos).ok_or(CborError::TimeOutOfRange)?;
    rfc3339_nano(time.fixed_offset())
}

/// `time` as Go's `time.RFC3339Nano` writes it: the fraction without trailing zeros (none
/// when whole), `Z` for UTC; years 0 to 9999 only.
fn rfc3339_nano(time: DateTime<FixedOffset>) -> Result<String, CborError> {
    if !(0..=9999).contains(&time.year()) {
        return Err(CborError::TimeOutOfRange);
    }
    let mut text = time.format("%Y-%m-%dT%H:%M:%S").to_string();
    let nanos = time.nanosecond();
    if nanos > 0 {
        let fraction = format!("{nanos:09}");
        text.push('.');
        text.push_str(fraction.trim_end_matches('0'));
    }
    let offset = time.offset().local_minus_utc();
    if offset == 0 {
        text.push('Z');
    } else {
        let sign = if offset < 0 { '-' } else { '+' };
        let minutes = offset.unsigned_abs() / 60;
        text.push_str(&format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60));
    }
    Ok(text)
}
