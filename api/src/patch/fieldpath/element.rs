//! One step of a field path, ordered and printed as structured-merge-diff orders and prints
//! them: field names first, then list keys, set values, indices.

use std::cmp::Ordering;
use std::fmt;

use serde_json::Value;

/// One step of a path.
#[derive(Debug, Clone)]
pub enum PathElement {
    /// A struct field or map key (`f:<name>`).
    Field(String),
    /// An item of a list of type `map`, by its key fields sorted by name (`k:{...}`).
    Key(Vec<(String, Value)>),
    /// An item of a list of type `set`, by its value (`v:<json>`).
    Value(Value),
    /// An item of another list, by position (`i:<n>`).
    Index(usize),
}

impl PathElement {
    fn rank(&self) -> u8 {
        match self {
            Self::Field(_) => 0,
            Self::Key(_) => 1,
            Self::Value(_) => 2,
            Self::Index(_) => 3,
        }
    }
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Self::Field(a), Self::Field(b)) => a.cmp(b),
            (Self::Key(a), Self::Key(b)) => compare_fields(a, b),
            (Self::Value(a), Self::Value(b)) => compare_values(a, b),
            (Self::Index(a), Self::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

/// Key field lists compared field by field (name, then value), a shorter prefix first.
fn compare_fields(a: &[(String, Value)], b: &[(String, Value)]) -> Ordering {
    for ((an, av), (bn, bv)) in a.iter().zip(b) {
        let by_field = an.cmp(bn).then_with(|| compare_values(av, bv));
        if by_field != Ordering::Equal {
            return by_field;
        }
    }
    a.len().cmp(&b.len())
}

/// structured-merge-diff's order of values: numbers, strings, booleans, lists, maps, null.
fn compare_values(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Array(_) => 3,
            Value::Object(_) => 4,
            Value::Null => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => {
                let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
                x.total_cmp(&y)
            }
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (x, y) in x.iter().zip(y) {
                let by_item = compare_values(x, y);
                if by_item != Ordering::Equal {
                    return by_item;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            let mut x: Vec<_> = x.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            let mut y: Vec<_> = y.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            x.sort_by(|a, b| a.0.cmp(&b.0));
            y.sort_by(|a, b| a.0.cmp(&b.0));
            compare_fields(&x, &y)
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

impl fmt::Display for PathElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Field(name) => write!(f, ".{name}"),
            Self::Key(fields) => {
                f.write_str("[")?;
                for (i, (name, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{name}={value}")?;
                }
                f.write_str("]")
            }
            Self::Value(value) => write!(f, "[={value}]"),
            Self::Index(i) => write!(f, "[{i}]"),
        }
    }
}
