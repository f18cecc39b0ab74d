//! Record framing: every record on disk is `length (u32 LE) | crc32 of payload (u32 LE) |
//! payload`, so a torn or damaged write is detected instead of decoded.

/// Bytes before a record's payload.
pub(crate) const HEADER_LEN: usize = 8;

/// Appends one framed record holding `payload` to `out`. `None` when the payload is too long for
/// the 32-bit length field.
pub(crate) fn frame(payload: &[u8], out: &mut Vec<u8>) -> Option<()> {
    frame_in_place(out, payload.len(), |out| out.extend_from_slice(payload))
}

/// Appends one framed record to `out` whose payload `write` appends (`len` bytes, reserved
/// beforehand), so that the payload is encoded in place rather than copied in. `None`, with
/// `out` as it was, when the payload is too long for the 32-bit length field.
pub(crate) fn frame_in_place(
    out: &mut Vec<u8>,
    len: usize,
    write: impl FnOnce(&mut Vec<u8>),
) -> Option<()> {
    let start = out.len();
    out.reserve(HEADER_LEN + len);
    out.extend_from_slice(&[0; HEADER_LEN]);
    write(out);
    let payload = &out[start + HEADER_LEN..];
    let Ok(len) = u32::try_from(payload.len()) else {
        out.truncate(start);
        return None;
    };
    let crc = crc32fast::hash(payload);
    out[start..start + 4].copy_from_slice(&len.to_le_bytes());
    out[start + 4..start + HEADER_LEN].copy_from_slice(&crc.to_le_bytes());
    Some(())
}

/// Why the bytes at some offset are not a whole, intact record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Damage {
    /// Fewer bytes than a header remain.
    ShortHeader,
    /// The length field is zero: no record is empty, but a zero-filled tail reads this way.
    ZeroLength,
    /// The length field points past the end of the data.
    ShortPayload {
        /// The payload length the header claims.
        len: u32,
    },
    /// The payload does not match its checksum.
    Checksum,
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Damage::ShortHeader => write!(f, "truncated record header"),
            Damage::ZeroLength => write!(f, "zero record length"),
            Damage::ShortPayload { len } => write!(f, "truncated payload of {len} bytes"),
            Damage::Checksum => write!(f, "checksum mismatch"),
        }
    }
}

/// Reads the record starting at the beginning of `bytes`: its payload, and the record's whole
/// length (header included).
pub(crate) fn unframe(bytes: &[u8]) -> Result<(&[u8], usize), Damage> {
    let (Some(len), Some(crc)) = (read_u32(bytes, 0), read_u32(bytes, 4)) else {
        return Err(Damage::ShortHeader);
    };
    if len == 0 {
        return Err(Damage::ZeroLength);
    }
    let end = usize::try_from(len)
        .ok()
        .and_then(|len| len.checked_add(HEADER_LEN))
        .filter(|end| *end <= bytes.len())
        .ok_or(Damage::ShortPayload { len })?;
    let payload = &bytes[HEADER_LEN..end];
    if crc32fast::hash(payload) != crc {
        return Err(Damage::Checksum);
    }
    Ok((payload, end))
}

fn read_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let field: [u8; 4] = bytes.get(at..at + 4)?.try_into().ok()?;
    Some(u32::from_le_bytes(field))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        frame(payload, &mut out).expect("small payload");
        out
    }

    #[test]
    fn a_record_framed_in_place_is_the_record_framed_from_its_payload() {
        let mut out = b"before".to_vec();
        frame_in_place(&mut out, 5, |out| out.extend_from_slice(b"hello")).expect("small");
        assert_eq!(out, [b"before".as_slice(), &framed(b"hello")].concat());
        assert_eq!(
            unframe(&out[6..]),
            Ok((b"hello".as_slice(), HEADER_LEN + 5))
        );
    }

    #[test]
    fn frame_then_unframe_returns_payload_and_length() {
        let mut bytes = framed(b"hello");
        bytes.extend_from_slice(&framed(b"world"));
        let (payload, len) = unframe(&bytes).expect("intact");
        assert_eq!(b"hello", payload);
        assert_eq!(HEADER_LEN + 5, len);
        let (payload, _) = unframe(&bytes[len..]).expect("intact");
        assert_eq!(b"world", payload);
    }

    #[test]
    fn every_kind_of_damage_is_detected() {
        let good = framed(b"payload");
        assert_eq!(Err(Damage::ShortHeader), unframe(&good[..5]));
        assert_eq!(
            Err(Damage::ShortPayload { len: 7 }),
            unframe(&good[..good.len() - 1])
        );
        assert_eq!(Err(Damage::ZeroLength), unframe(&[0; 16]));

        let mut flipped = good.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 0x01;
        assert_eq!(Err(Damage::Checksum), unframe(&flipped));

        let mut huge = good;
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(Err(Damage::ShortPayload { len: u32::MAX }), unframe(&huge));
    }
}
