//! The scalar types of the built-in schemas and how a JSON or YAML scalar becomes one: range
//! and integer-ness of integers, base64 of bytes, RFC 3339 of times, the syntax of quantities
//! (R-RES-031). Each outcome is the value as k8s-openapi's typed round trip wrote it.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chrono::DateTime;
use chrono::SecondsFormat;
use chrono::Utc;
use serde_json::Value;

use super::excerpt::excerpt;

/// A value without parts, as the schema types it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    /// `type: string`.
    String,
    /// `type: integer, format: int32`.
    Int32,
    /// `type: integer` (`int64` or no format).
    Int64,
    /// `type: number` (Go `float64`).
    Number,
    /// `type: boolean`.
    Bool,
    /// `x-kubernetes-int-or-string` (`intstr.IntOrString`): a 32-bit integer or a string.
    IntOrString,
    /// `resource.Quantity`: a quantity string, or a number that is written as one.
    Quantity,
    /// `format: date-time`: RFC 3339, written in UTC (`micro`: with microseconds, `MicroTime`).
    Time {
        /// Whether the value keeps microseconds (`metav1.MicroTime`).
        micro: bool,
    },
    /// `format: byte`: standard base64, written canonically.
    Bytes,
}

/// A scalar that does not fit its type: either a type mismatch (`json: cannot unmarshal ...`,
/// which needs the field's place to be worded) or a malformed value with its own message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Misfit {
    /// The JSON kind of the value as Go names it in `cannot unmarshal <what>` (`string`,
    /// `number`, `number 1.5`, `bool`, `array`, `object`).
    Kind(String),
    /// The value's own error (base64, time, quantity), worded as Kubernetes does.
    Malformed(String),
}

/// A JSON scalar as serde hands it over.
#[derive(Debug, Clone, Copy)]
pub(super) enum Raw<'a> {
    Bool(bool),
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Str(&'a str),
}

/// The Go spelling of a number literal in an error (`number 1.5`), as an excerpt (a JSON
/// number literal may be as long as the body).
fn number(text: impl fmt::Display) -> Misfit {
    Misfit::Kind(format!("number {}", excerpt(&text.to_string())))
}

/// `v` as Go's `encoding/json` writes a float64: shortest digits, in exponent form below
/// 1e-6 and from 1e21 on (`1e+21`, `1e-7`), plain otherwise (`100`, `-0`, `2.5`). Kubernetes
/// converts a YAML body to JSON this way before decoding it, so an integral YAML float is an
/// integer to an integer field.
fn go_float_text(v: f64) -> String {
    let abs = v.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let text = format!("{v:e}");
        match text.split_once('e') {
            Some((digits, exponent)) if !exponent.starts_with('-') => {
                format!("{digits}e+{exponent:0>2}")
            }
            _ => text,
        }
    } else {
        v.to_string()
    }
}

/// The regular expression Kubernetes quotes when a quantity does not parse.
const QUANTITY_FORMAT: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/// The suffixes a quantity may carry (binary, decimal SI, or none).
const QUANTITY_SUFFIXES: [&str; 16] = [
    "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E",
];

/// Whether `s` is a quantity as Kubernetes' `ParseQuantity` reads one: a signed decimal
/// number, then a binary or SI suffix or a decimal exponent.
fn check_quantity(s: &str) -> Result<(), Misfit> {
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    let digits = unsigned
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(unsigned.len());
    let (num, suffix) = unsigned.split_at(digits);
    let dots = num.matches('.').count();
    if num.is_empty() || num == "." || dots > 1 {
        return Err(Misfit::Malformed(QUANTITY_FORMAT.to_owned()));
    }
    if QUANTITY_SUFFIXES.contains(&suffix) {
        return Ok(());
    }
    let exponent = suffix
        .strip_prefix(['e', 'E'])
        .map(|e| e.strip_prefix(['+', '-']).unwrap_or(e));
    match exponent {
        Some(e) if !e.is_empty() && e.bytes().all(|b| b.is_ascii_digit()) => Ok(()),
        _ if suffix
            .bytes()
            .all(|b| b"eEinumkKMGTP+-0123456789".contains(&b)) =>
        {
            Err(Misfit::Malformed(
                "unable to parse quantity's suffix".to_owned(),
            ))
        }
        _ => Err(Misfit::Malformed(QUANTITY_FORMAT.to_owned())),
    }
}

/// Go's `base64.CorruptInputError` wording, at the offset the decoder stopped.
fn check_bytes(s: &str) -> Result<Value, Misfit> {
    let at = |n: usize| Misfit::Malformed(format!("illegal base64 data at input byte {n}"));
    match STANDARD.decode(s) {
        Ok(raw) => Ok(Value::String(STANDARD.encode(raw))),
        Err(
            base64::DecodeError::InvalidByte(n, _) | base64::DecodeError::InvalidLastSymbol(n, _),
        ) => Err(at(n)),
        Err(base64::DecodeError::InvalidLength(n)) => Err(at(n)),
        Err(base64::DecodeError::InvalidPadding) => Err(at(s.len())),
    }
}

/// `metav1.Time`'s wording for a value that is not RFC 3339.
fn check_time(s: &str, micro: bool) -> Result<Value, Misfit> {
    let parsed = DateTime::parse_from_rfc3339(s).map_err(|_| {
        let s = excerpt(s);
        Misfit::Malformed(format!(
            "parsing time \"{s}\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"{s}\" as \"2006\""
        ))
    })?;
    let utc = parsed.with_timezone(&Utc);
    let text = if micro {
        utc.to_rfc3339_opts(SecondsFormat::Micros, true)
    } else {
        utc.to_rfc3339_opts(SecondsFormat::Secs, true)
    };
    Ok(Value::String(text))
}

impl Scalar {
    /// The Go type Kubernetes' decoder names in a type error.
    pub fn go_type(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Int32 => "int32",
            Self::Int64 => "int64",
            Self::Number => "float64",
            Self::Bool => "bool",
            Self::IntOrString => "intstr.IntOrString",
            Self::Quantity => "resource.Quantity",
            Self::Time { micro: false } => "v1.Time",
            Self::Time { micro: true } => "v1.MicroTime",
            Self::Bytes => "[]uint8",
        }
    }

    /// The value Go leaves in a field of this type that was not sent, as the typed round trip
    /// wrote it; `None` where that is no value at all (a zero time).
    pub fn zero(self) -> Option<Value> {
        match self {
            Self::String | Self::Quantity | Self::Bytes => Some(Value::String(String::new())),
            Self::Int32 | Self::Int64 | Self::IntOrString => Some(0.into()),
            Self::Number => Some(0.0.into()),
            Self::Bool => Some(false.into()),
            Self::Time { .. } => None,
        }
    }

    /// The number literal `text` (JSON's, or Go's spelling of a YAML float) at an integer
    /// field, read as Go's decoder reads it (`strconv.ParseInt`, then the field's range):
    /// `-0` is 0, `1e2` and `-0.0` are not integers, and a misfit quotes the literal.
    pub(super) fn accept_integer_text(self, text: &str) -> Result<Value, Misfit> {
        match text.parse::<i64>() {
            Ok(v) => self.accept(Raw::Signed(v)),
            Err(_) => Err(number(text)),
        }
    }

    /// `raw` as a value of this type, or why it is not one. A float at an integer field is
    /// read as the JSON Kubernetes converts a YAML body into (see [`go_float_text`]): JSON
    /// bodies hand integer fields their literal instead ([`Self::accept_integer_text`]).
    pub(super) fn accept(self, raw: Raw<'_>) -> Result<Value, Misfit> {
        match (self, raw) {
            (Self::Bool, Raw::Bool(b)) => Ok(b.into()),
            (_, Raw::Bool(_)) => Err(Misfit::Kind("bool".to_owned())),
            (Self::String, Raw::Str(s)) | (Self::IntOrString, Raw::Str(s)) => Ok(s.into()),
            (Self::Quantity, Raw::Str(s)) => check_quantity(s).map(|()| s.into()),
            (Self::Time { micro }, Raw::Str(s)) => check_time(s, micro),
            (Self::Bytes, Raw::Str(s)) => check_bytes(s),
            (_, Raw::Str(_)) => Err(Misfit::Kind("string".to_owned())),
            (Self::Int32 | Self::IntOrString, Raw::Signed(v)) => {
                i32::try_from(v).map(Value::from).map_err(|_| number(v))
            }
            (Self::Int32 | Self::IntOrString, Raw::Unsigned(v)) => {
                i32::try_from(v).map(Value::from).map_err(|_| number(v))
            }
            (Self::Int64, Raw::Signed(v)) => Ok(v.into()),
            (Self::Int64, Raw::Unsigned(v)) => {
                i64::try_from(v).map(Value::from).map_err(|_| number(v))
            }
            (Self::Int32 | Self::Int64 | Self::IntOrString, Raw::Float(v)) => {
                self.accept_integer_text(&go_float_text(v))
            }
            // serde_json writes a float64 with its fraction (`1.0`), as the typed struct did.
            (Self::Number, Raw::Signed(v)) => Ok((v as f64).into()),
            (Self::Number, Raw::Unsigned(v)) => Ok((v as f64).into()),
            (Self::Number, Raw::Float(v)) => Ok(v.into()),
            (Self::Quantity, Raw::Signed(v)) => Ok(v.to_string().into()),
            (Self::Quantity, Raw::Unsigned(v)) => Ok(v.to_string().into()),
            (Self::Quantity, Raw::Float(v)) => Ok(v.to_string().into()),
            (Self::String | Self::Bool | Self::Time { .. } | Self::Bytes, _) => {
                Err(Misfit::Kind("number".to_owned()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn kind(s: &str) -> Misfit {
        Misfit::Kind(s.to_owned())
    }

    // R-RES-031: integers are whole and in range; numbers are refused for strings.
    #[test]
    fn integers_are_whole_and_in_range() {
        assert_eq!(Scalar::Int32.accept(Raw::Unsigned(80)), Ok(json!(80)));
        assert_eq!(
            Scalar::Int32.accept(Raw::Unsigned(3_000_000_000)),
            Err(kind("number 3000000000"))
        );
        assert_eq!(
            Scalar::Int32.accept(Raw::Float(1.5)),
            Err(kind("number 1.5"))
        );
        assert_eq!(
            Scalar::Int64.accept(Raw::Unsigned(3_000_000_000)),
            Ok(json!(3_000_000_000_i64))
        );
        assert_eq!(Scalar::Int32.accept(Raw::Str("1")), Err(kind("string")));
        assert_eq!(Scalar::String.accept(Raw::Signed(-1)), Err(kind("number")));
        assert_eq!(Scalar::Bool.accept(Raw::Str("true")), Err(kind("string")));
        assert_eq!(Scalar::String.accept(Raw::Bool(true)), Err(kind("bool")));
        assert_eq!(Scalar::Number.accept(Raw::Unsigned(1)), Ok(json!(1.0)));
    }

    // R-RES-031: a number literal at an integer field reads as Go's strconv.ParseInt reads it;
    // a YAML float is first written as Go's encoding/json writes a float64.
    #[test]
    fn integer_literals_and_go_float_text() {
        assert_eq!(Scalar::Int32.accept_integer_text("-0"), Ok(json!(0)));
        assert_eq!(Scalar::Int64.accept_integer_text("-42"), Ok(json!(-42)));
        for literal in ["-0.0", "1e2", "1.0", "99999999999999999999"] {
            assert_eq!(
                Scalar::Int64.accept_integer_text(literal),
                Err(kind(&format!("number {literal}")))
            );
        }
        assert_eq!(
            Scalar::Int32.accept_integer_text("3000000000"),
            Err(kind("number 3000000000"))
        );
        for (v, text) in [
            (100.0, "100"),
            (-0.0, "-0"),
            (2.5, "2.5"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (1.5e300, "1.5e+300"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (-1.5e-10, "-1.5e-10"),
        ] {
            assert_eq!(go_float_text(v), text, "{v}");
        }
        assert_eq!(Scalar::Int32.accept(Raw::Float(1e2)), Ok(json!(100)));
        assert_eq!(Scalar::Int32.accept(Raw::Float(-0.0)), Ok(json!(0)));
        assert_eq!(
            Scalar::Int64.accept(Raw::Float(1e21)),
            Err(kind("number 1e+21"))
        );
    }

    // R-RES-031: int-or-string takes either; a quantity takes a number as its text.
    #[test]
    fn int_or_string_and_quantities() {
        assert_eq!(Scalar::IntOrString.accept(Raw::Signed(-3)), Ok(json!(-3)));
        assert_eq!(
            Scalar::IntOrString.accept(Raw::Str("25%")),
            Ok(json!("25%"))
        );
        assert_eq!(
            Scalar::IntOrString.accept(Raw::Float(0.5)),
            Err(kind("number 0.5"))
        );
        assert_eq!(Scalar::Quantity.accept(Raw::Unsigned(2)), Ok(json!("2")));
        for ok in ["1Gi", "500m", "0.5", "+1e3", "1E-3", "12", ".5", "1.5Mi"] {
            assert_eq!(Scalar::Quantity.accept(Raw::Str(ok)), Ok(json!(ok)), "{ok}");
        }
        for bad in ["", "Gi", "1.2.3", "abc", "1 Gi", "--1"] {
            assert_eq!(
                Scalar::Quantity.accept(Raw::Str(bad)),
                Err(Misfit::Malformed(QUANTITY_FORMAT.to_owned())),
                "{bad}"
            );
        }
        assert_eq!(
            Scalar::Quantity.accept(Raw::Str("1Gb")),
            Err(Misfit::Malformed(QUANTITY_FORMAT.to_owned()))
        );
        assert_eq!(
            Scalar::Quantity.accept(Raw::Str("1KM")),
            Err(Misfit::Malformed(
                "unable to parse quantity's suffix".into()
            ))
        );
    }

    // R-RES-031: base64 for bytes (Secret data), RFC 3339 for times, both written canonically.
    #[test]
    fn bytes_and_times() {
        assert_eq!(Scalar::Bytes.accept(Raw::Str("eA==")), Ok(json!("eA==")));
        assert_eq!(
            Scalar::Bytes.accept(Raw::Str("not base64!")),
            Err(Misfit::Malformed(
                "illegal base64 data at input byte 3".into()
            ))
        );
        assert_eq!(
            Scalar::Time { micro: false }.accept(Raw::Str("2026-01-01T01:00:00.5+01:00")),
            Ok(json!("2026-01-01T00:00:00Z"))
        );
        assert_eq!(
            Scalar::Time { micro: true }.accept(Raw::Str("2026-01-01T00:00:00Z")),
            Ok(json!("2026-01-01T00:00:00.000000Z"))
        );
        assert!(matches!(
            Scalar::Time { micro: false }.accept(Raw::Str("yesterday")),
            Err(Misfit::Malformed(m)) if m.starts_with("parsing time \"yesterday\"")
        ));
    }
}
