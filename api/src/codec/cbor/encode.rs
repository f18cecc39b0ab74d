//! JSON values to CBOR as Kubernetes' encoder writes them (apimachinery
//! `runtime/serializer/cbor/internal/modes/encode.go`): the self-described tag first; strings
//! (keys too) as byte strings; integers in the shortest head; floats in the shortest of half,
//! single and double precision that keeps their value; map entries in the bytewise order of
//! their encoded keys (RFC 8949 §4.2.1, core deterministic encoding). Kubernetes' servers
//! may shuffle map entries in responses; sorted is one of the orders a client must accept,
//! and it makes equal values equal bytes.

use serde_json::Number;
use serde_json::Value;

use super::SELF_DESCRIBED;

const UNSIGNED: u8 = 0;
const NEGATIVE: u8 = 1;
const BYTES: u8 = 2;
const ARRAY: u8 = 4;
const MAP: u8 = 5;

/// `value` as one self-described CBOR data item.
pub fn encode(value: &Value) -> Vec<u8> {
    let mut out = SELF_DESCRIBED.to_vec();
    write(&mut out, value);
    out
}

/// A watch event as one item of an `application/cbor-seq` watch: the self-described map
/// `{"type": event_type, "object": object}`, where `object` is an item [`encode`] wrote
/// (Kubernetes embeds the object's own encoding, tag and all).
pub fn encode_watch_event(event_type: &str, object: &[u8]) -> Vec<u8> {
    let mut out = SELF_DESCRIBED.to_vec();
    head(&mut out, MAP, 2);
    // "type" sorts before "object": its encoding is shorter.
    string(&mut out, "type");
    string(&mut out, event_type);
    string(&mut out, "object");
    out.extend_from_slice(object);
    out
}

fn write(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.push(0xf6),
        Value::Bool(false) => out.push(0xf4),
        Value::Bool(true) => out.push(0xf5),
        Value::Number(number) => self::number(out, number),
        Value::String(text) => string(out, text),
        Value::Array(items) => {
            head(out, ARRAY, items.len() as u64);
            for item in items {
                write(out, item);
            }
        }
        Value::Object(map) => {
            head(out, MAP, map.len() as u64);
            let mut entries: Vec<_> = map.iter().collect();
            // A byte string's head grows with its length, so ordering the encoded keys
            // bytewise is ordering the keys by length, then bytewise.
            entries.sort_unstable_by(|(a, _), (b, _)| {
                a.len()
                    .cmp(&b.len())
                    .then_with(|| a.as_bytes().cmp(b.as_bytes()))
            });
            for (key, value) in entries {
                string(out, key);
                write(out, value);
            }
        }
    }
}

/// The head of an item of `major` type with argument `n`, in its shortest form.
fn head(out: &mut Vec<u8>, major: u8, n: u64) {
    let major = major << 5;
    if let Ok(small) = u8::try_from(n) {
        if small < 24 {
            out.push(major | small);
        } else {
            out.extend_from_slice(&[major | 24, small]);
        }
    } else if let Ok(short) = u16::try_from(n) {
        out.push(major | 25);
        out.extend_from_slice(&short.to_be_bytes());
    } else if let Ok(word) = u32::try_from(n) {
        out.push(major | 26);
        out.extend_from_slice(&word.to_be_bytes());
    } else {
        out.push(major | 27);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

/// A string, as a byte string (Kubernetes' encoder does not check that strings are UTF-8,
/// so it never claims they are).
fn string(out: &mut Vec<u8>, text: &str) {
    head(out, BYTES, text.len() as u64);
    out.extend_from_slice(text.as_bytes());
}

fn number(out: &mut Vec<u8>, number: &Number) {
    if let Some(n) = number.as_u64() {
        head(out, UNSIGNED, n);
    } else if let Some(n) = number.as_i64() {
        // A negative integer n is written as -1 - n.
        head(out, NEGATIVE, n.unsigned_abs().saturating_sub(1));
    } else if let Some(float) = number.as_f64() {
        self::float(out, float);
    }
}

/// A float in the narrowest width that keeps its value exactly.
fn float(out: &mut Vec<u8>, float: f64) {
    let single = float as f32;
    if f64::from(single).to_bits() != float.to_bits() {
        out.push(0xfb);
        out.extend_from_slice(&float.to_bits().to_be_bytes());
    } else if let Some(half) = half(single) {
        out.push(0xf9);
        out.extend_from_slice(&half.to_be_bytes());
    } else {
        out.push(0xfa);
        out.extend_from_slice(&single.to_bits().to_be_bytes());
    }
}

/// `single` in half precision, if that holds it exactly (normal or subnormal).
fn half(single: f32) -> Option<u16> {
    let bits = single.to_bits();
    let sign = u16::try_from((bits >> 16) & 0x8000).ok()?;
    let biased = (bits >> 23) & 0xff;
    let fraction = bits & 0x7f_ffff;
    if biased == 0 {
        // Zero is exact; single-precision subnormals are far below half precision's range.
        return (fraction == 0).then_some(sign);
    }
    let exponent = i32::try_from(biased).ok()? - 127;
    match exponent {
        // Normal: the exponent fits and the fraction's 13 low bits are zero.
        -14..=15 if fraction & 0x1fff == 0 => {
            let biased = u16::try_from(exponent + 15).ok()?;
            Some(sign | (biased << 10) | u16::try_from(fraction >> 13).ok()?)
        }
        // Subnormal: the value is m * 2^-24 with m the significand shifted right.
        -24..=-15 => {
            let significand = fraction | 0x80_0000;
            let shift = u32::try_from(-exponent - 1).ok()?;
            let lost = significand & ((1 << shift) - 1);
            (lost == 0).then(|| u16::try_from(significand >> shift).ok().map(|m| sign | m))?
        }
        _ => None,
    }
}
