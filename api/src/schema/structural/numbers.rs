//! Numbers as kube-openapi's validators see them: a JSON number is Go's `int64` when it is
//! one and `float64` otherwise; limits and factors are printed as Go's `%v` prints them.

use serde_json::Number;

/// A JSON number as Kubernetes' unstructured decoding holds it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Num {
    /// An integer within `int64`.
    Int(i64),
    /// Any other number.
    Float(f64),
}

impl Num {
    /// The number `n` holds.
    pub fn of(n: &Number) -> Self {
        match n.as_i64() {
            Some(i) => Self::Int(i),
            None => Self::Float(n.as_f64().unwrap_or(f64::NAN)),
        }
    }

    /// As a float.
    pub fn as_f64(self) -> f64 {
        match self {
            Self::Int(i) => i as f64,
            Self::Float(f) => f,
        }
    }
}

/// Go's `%v` of a `float64` (`%g` with the shortest digits): in exponent form when the
/// decimal exponent is below -4 or at least 6 (`1e+06`, `1.5e-05`), plain otherwise.
pub(super) fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_owned();
    }
    let sci = format!("{f:e}");
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exponent.parse().unwrap_or_default();
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        f.to_string()
    }
}

/// Whether `f` is an integer a JSON number may hold (swag's `IsFloat64AJSONInteger`).
pub(super) fn is_json_integer(f: f64) -> bool {
    if f.is_nan() || f.is_infinite() {
        return false;
    }
    f == f.trunc() && f.abs() < 1e308
}
