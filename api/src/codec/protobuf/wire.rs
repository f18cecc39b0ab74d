//! The Protobuf wire format's primitives: varints, keys and length-delimited values, written
//! to a buffer and read from hostile input with every length checked against what is left.

use super::ProtobufError;

/// The wire type of a varint (bool, int32, int64).
pub const VARINT: u8 = 0;
/// The wire type of a fixed 64-bit value (double).
pub const FIXED64: u8 = 1;
/// The wire type of a length-delimited value (string, bytes, message, map entry).
pub const LEN: u8 = 2;
/// The wire type of a fixed 32-bit value.
pub const FIXED32: u8 = 5;

/// Writes `value` as a varint.
pub fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Writes the key of field `tag` with wire type `wire`.
pub fn put_key(out: &mut Vec<u8>, tag: u32, wire: u8) {
    put_varint(out, (u64::from(tag) << 3) | u64::from(wire));
}

/// Writes field `tag` as a length-delimited value.
pub fn put_bytes(out: &mut Vec<u8>, tag: u32, bytes: &[u8]) {
    put_key(out, tag, LEN);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// Writes field `tag` as a varint.
pub fn put_varint_field(out: &mut Vec<u8>, tag: u32, value: u64) {
    put_key(out, tag, VARINT);
    put_varint(out, value);
}

/// A cursor over message bytes.
pub struct Reader<'a> {
    bytes: &'a [u8],
}

/// One field read from a message: its number and its value.
pub enum Value<'a> {
    /// A varint.
    Varint(u64),
    /// A fixed 64-bit value.
    Fixed64(u64),
    /// A length-delimited value.
    Bytes(&'a [u8]),
    /// A fixed 32-bit value (no field of the table has one: it is skipped).
    Fixed32,
}

impl<'a> Reader<'a> {
    /// A reader of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }

    /// The next field, or `None` at the end of the message.
    pub fn next_field(&mut self) -> Result<Option<(u32, Value<'a>)>, ProtobufError> {
        if self.bytes.is_empty() {
            return Ok(None);
        }
        let key = self.varint()?;
        let tag = u32::try_from(key >> 3)
            .ok()
            .filter(|t| *t != 0)
            .ok_or(ProtobufError::Malformed("a field number out of range"))?;
        let value = match (key & 7) as u8 {
            VARINT => Value::Varint(self.varint()?),
            FIXED64 => Value::Fixed64(u64::from_le_bytes(self.take_array()?)),
            LEN => {
                let len = usize::try_from(self.varint()?)
                    .map_err(|_| ProtobufError::Malformed("a length out of range"))?;
                Value::Bytes(self.take(len)?)
            }
            FIXED32 => {
                self.take(4)?;
                Value::Fixed32
            }
            _ => return Err(ProtobufError::Malformed("an unsupported wire type")),
        };
        Ok(Some((tag, value)))
    }

    fn varint(&mut self) -> Result<u64, ProtobufError> {
        let mut value = 0u64;
        for (i, byte) in self.bytes.iter().enumerate().take(10) {
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                self.bytes = &self.bytes[i + 1..];
                return Ok(value);
            }
        }
        Err(ProtobufError::Malformed("a truncated or overlong varint"))
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], ProtobufError> {
        if len > self.bytes.len() {
            return Err(ProtobufError::Malformed(
                "a length beyond the end of the message",
            ));
        }
        let (head, rest) = self.bytes.split_at(len);
        self.bytes = rest;
        Ok(head)
    }

    fn take_array<const N: usize>(&mut self) -> Result<[u8; N], ProtobufError> {
        let bytes = self.take(N)?;
        let mut out = [0; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }
}
