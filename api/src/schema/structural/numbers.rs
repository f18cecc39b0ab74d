//! Numbers as kube-openapi's validators see them: a JSON number is Go's `int64` when it is
//! one and `float64` otherwise.

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

/// Whether `f` is an integer a JSON number may hold (swag's `IsFloat64AJSONInteger`).
pub(super) fn is_json_integer(f: f64) -> bool {
    if f.is_nan() || f.is_infinite() {
        return false;
    }
    f == f.trunc() && f.abs() < 1e308
}
