//! One validation failure of one field, worded as Kubernetes' `field.Error` so that clients
//! matching on messages (and people reading them) see what a Kubernetes API server says.

use std::fmt;

use serde_json::Value;

use crate::error::excerpt;
use crate::error::excerpt_json;

/// What is wrong with a field (Kubernetes' `field.ErrorType`).
#[derive(Debug, Clone, PartialEq)]
pub enum FieldErrorKind {
    /// The value is malformed; carries the offending value.
    Invalid(Value),
    /// The value is of the wrong type (a custom resource's schema); carries the value.
    TypeInvalid(Value),
    /// A required value is missing.
    Required,
    /// The field may not be set (or changed) here.
    Forbidden,
    /// The value is longer than `max` bytes.
    TooLong {
        /// The largest size allowed, in bytes.
        max: usize,
    },
    /// A list has `actual` items where at most `max` are allowed.
    TooMany {
        /// How many there are.
        actual: usize,
        /// The most allowed.
        max: usize,
    },
    /// The value appears twice where it must be unique; carries the value.
    Duplicate(Value),
    /// The value names something that does not exist; carries the value.
    NotFound(Value),
    /// The value is not one of `supported`.
    NotSupported {
        /// The offending value.
        value: Value,
        /// The values allowed.
        supported: Vec<String>,
    },
}

/// A validation failure of one field; a create or update collects all of them and answers
/// 422 Invalid with one cause per error.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// The field's path, e.g. `metadata.name` or `data[bad key]`.
    pub field: String,
    /// What is wrong.
    pub kind: FieldErrorKind,
    /// Why, in words (may be empty).
    pub detail: String,
}

impl FieldError {
    /// `field` holds `value`, which is malformed because of `detail`.
    pub fn invalid(
        field: impl Into<String>,
        value: impl Into<Value>,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            field: field.into(),
            kind: FieldErrorKind::Invalid(value.into()),
            detail: detail.into(),
        }
    }

    /// `field` holds `value`, which is not of the type `detail` names.
    pub fn type_invalid(
        field: impl Into<String>,
        value: impl Into<Value>,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            field: field.into(),
            kind: FieldErrorKind::TypeInvalid(value.into()),
            detail: detail.into(),
        }
    }

    /// `field` must be set; `detail` says what to set.
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            kind: FieldErrorKind::Required,
            detail: detail.into(),
        }
    }

    /// `field` may not be set or changed, because of `detail`.
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            kind: FieldErrorKind::Forbidden,
            detail: detail.into(),
        }
    }

    /// `field` is longer than `max` bytes.
    pub fn too_long(field: impl Into<String>, max: usize) -> Self {
        Self {
            field: field.into(),
            kind: FieldErrorKind::TooLong { max },
            detail: String::new(),
        }
    }

    /// `field` holds `actual` items, more than the `max` allowed.
    pub fn too_many(field: impl Into<String>, actual: usize, max: usize) -> Self {
        Self {
            field: field.into(),
            kind: FieldErrorKind::TooMany { actual, max },
            detail: String::new(),
        }
    }

    /// `field` repeats `value`.
    pub fn duplicate(field: impl Into<String>, value: impl Into<Value>) -> Self {
        Self {
            field: field.into(),
            kind: FieldErrorKind::Duplicate(value.into()),
            detail: String::new(),
        }
    }

    /// `field` names `value`, which does not exist.
    pub fn not_found(field: impl Into<String>, value: impl Into<Value>) -> Self {
        Self {
            field: field.into(),
            kind: FieldErrorKind::NotFound(value.into()),
            detail: String::new(),
        }
    }

    /// `field` holds `value`, which is none of `supported`.
    pub fn not_supported(
        field: impl Into<String>,
        value: impl Into<Value>,
        supported: &[&str],
    ) -> Self {
        Self {
            field: field.into(),
            kind: FieldErrorKind::NotSupported {
                value: value.into(),
                supported: supported.iter().map(|s| (*s).to_owned()).collect(),
            },
            detail: String::new(),
        }
    }

    /// The `reason` of this error's `Status` cause (`FieldValueInvalid`, ...).
    pub fn reason(&self) -> &'static str {
        match self.kind {
            FieldErrorKind::Invalid(_) => "FieldValueInvalid",
            FieldErrorKind::TypeInvalid(_) => "FieldValueTypeInvalid",
            FieldErrorKind::Required => "FieldValueRequired",
            FieldErrorKind::Forbidden => "FieldValueForbidden",
            FieldErrorKind::TooLong { .. } => "FieldValueTooLong",
            FieldErrorKind::TooMany { .. } => "FieldValueTooMany",
            FieldErrorKind::Duplicate(_) => "FieldValueDuplicate",
            FieldErrorKind::NotFound(_) => "FieldValueNotFound",
            FieldErrorKind::NotSupported { .. } => "FieldValueNotSupported",
        }
    }

    /// The message without the field path (the cause's `message`), as Kubernetes'
    /// `ErrorBody`: `Invalid value: "Bad_Name": a lowercase RFC 1123 ...`.
    pub fn body(&self) -> String {
        let mut s = match &self.kind {
            FieldErrorKind::Invalid(v) | FieldErrorKind::TypeInvalid(v) => {
                format!("Invalid value: {}", render(v))
            }
            FieldErrorKind::Required => "Required value".to_owned(),
            FieldErrorKind::Forbidden => "Forbidden".to_owned(),
            FieldErrorKind::TooLong { max } => {
                let unit = if *max == 1 { "byte" } else { "bytes" };
                format!("Too long: may not be more than {max} {unit}")
            }
            FieldErrorKind::TooMany { actual, max } => {
                let unit = if *max == 1 { "item" } else { "items" };
                format!("Too many: {actual}: must have at most {max} {unit}")
            }
            FieldErrorKind::Duplicate(v) => format!("Duplicate value: {}", render(v)),
            FieldErrorKind::NotFound(v) => format!("Not found: {}", render(v)),
            FieldErrorKind::NotSupported { value, supported } => {
                let quoted: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
                format!(
                    "Unsupported value: {}: supported values: {}",
                    render(value),
                    quoted.join(", ")
                )
            }
        };
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

/// Values print as Go's `%q`/`%v`/`%#v` print them: strings quoted, floats as Go prints a
/// `float64` ([`go_float`]), everything else as JSON. Only an excerpt of a long value is
/// repeated ([`excerpt`]: a string is cut before it is quoted, anything else is cut as
/// rendered).
fn render(v: &Value) -> String {
    match v {
        Value::String(s) => Value::String(excerpt(s).into_owned()).to_string(),
        Value::Number(n) if n.is_f64() => go_float(n.as_f64().unwrap_or_default()),
        other => excerpt_json(other),
    }
}

/// Go's `%v` of a `float64` (`%g` with the shortest digits): in exponent form when the
/// decimal exponent is below -4 or at least 6 (`1e+06`, `1.5e-05`), plain otherwise.
pub fn go_float(f: f64) -> String {
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

/// The most bytes of field paths and messages one answer lists; the problems past it are
/// counted in one last entry (a schema with thousands of problems is answered in full by
/// Kubernetes, but an answer here stays small whatever the body).
pub const MAX_LISTED_BYTES: usize = 16 * 1024;

/// `errs`, cut once their rendered text passes [`MAX_LISTED_BYTES`]: the problems left out
/// are counted in a last entry at the field of the first of them.
pub fn within_budget(mut errs: Vec<FieldError>) -> Vec<FieldError> {
    let mut used = 0;
    let Some(cut) = errs.iter().position(|e| {
        used += e.to_string().len();
        used > MAX_LISTED_BYTES
    }) else {
        return errs;
    };
    let left_out = errs.len() - cut;
    let field = errs[cut].field.clone();
    errs.truncate(cut);
    errs.push(FieldError::forbidden(
        excerpt(&field).into_owned(),
        format!("{left_out} more problems were found and are not listed"),
    ));
    errs
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", excerpt(&self.field), self.body())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_go_prints_a_float64() {
        for (f, text) in [
            (2e6, "2e+06"),
            (1.5e6, "1.5e+06"),
            (100000.0, "100000"),
            (2.0, "2"),
            (0.5, "0.5"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
        ] {
            assert_eq!(go_float(f), text);
        }
        let e = FieldError::invalid("spec.f", 2.5, "too big");
        assert_eq!(e.to_string(), "spec.f: Invalid value: 2.5: too big");
    }

    #[test]
    fn invalid_is_worded_as_kubernetes() {
        let e = FieldError::invalid("metadata.name", "Bad_Name", "must be lowercase");
        assert_eq!(
            e.to_string(),
            r#"metadata.name: Invalid value: "Bad_Name": must be lowercase"#
        );
        assert_eq!(e.reason(), "FieldValueInvalid");
    }

    #[test]
    fn too_many_is_worded_as_kubernetes() {
        let e = FieldError::too_many("spec.selectableFields", 9, 8);
        assert_eq!(
            e.to_string(),
            "spec.selectableFields: Too many: 9: must have at most 8 items"
        );
        assert_eq!(e.reason(), "FieldValueTooMany");
    }

    #[test]
    fn long_lists_of_problems_are_cut_and_counted() {
        let few = vec![FieldError::required("spec.a", ""); 3];
        assert_eq!(within_budget(few.clone()), few);
        let long = "x".repeat(1000);
        let many: Vec<FieldError> = (0..100)
            .map(|i| FieldError::invalid(format!("spec.f{i}"), long.as_str(), "bad"))
            .collect();
        let cut = within_budget(many);
        let listed: usize = cut.iter().map(|e| e.to_string().len()).sum();
        assert!(listed <= MAX_LISTED_BYTES + 200, "{listed}");
        let last = cut.last().expect("a last entry");
        let shown = cut.len() - 1;
        assert_eq!(last.field, format!("spec.f{shown}"));
        assert_eq!(
            last.detail,
            format!(
                "{} more problems were found and are not listed",
                100 - shown
            )
        );
    }

    #[test]
    fn required_forbidden_and_too_long() {
        let r = FieldError::required("metadata.name", "name or generateName is required");
        assert_eq!(r.body(), "Required value: name or generateName is required");
        assert_eq!(r.reason(), "FieldValueRequired");
        let f = FieldError::forbidden("data", "field is immutable when `immutable` is set");
        assert_eq!(
            f.body(),
            "Forbidden: field is immutable when `immutable` is set"
        );
        let t = FieldError::too_long("data", 1_048_576);
        assert_eq!(t.body(), "Too long: may not be more than 1048576 bytes");
        assert_eq!(t.reason(), "FieldValueTooLong");
        let n = FieldError::not_supported("propagationPolicy", "X", &["Foreground", "Background"]);
        assert_eq!(
            n.body(),
            r#"Unsupported value: "X": supported values: "Foreground", "Background""#
        );
        assert_eq!(n.reason(), "FieldValueNotSupported");
        let d = FieldError::duplicate("data[a]", "a");
        assert_eq!(d.body(), r#"Duplicate value: "a""#);
    }

    #[test]
    fn long_values_and_paths_are_repeated_as_excerpts() {
        use crate::error::MAX_ECHO_BYTES;
        use crate::error::TRUNCATED_MARK;
        let huge = "v".repeat(1 << 20);
        let e = FieldError::invalid(format!("data[{huge}]"), huge.as_str(), "bad");
        let body = e.body();
        assert_eq!(
            body,
            format!(
                "Invalid value: \"{}{TRUNCATED_MARK}\": bad",
                "v".repeat(MAX_ECHO_BYTES)
            )
        );
        let text = e.to_string();
        assert!(text.starts_with(&format!("data[{}", "v".repeat(MAX_ECHO_BYTES - 5))));
        assert!(text.len() < 3 * MAX_ECHO_BYTES, "{} bytes", text.len());
        let object = serde_json::json!({"list": vec![huge.as_str(); 4]});
        let n = FieldError::not_found("patch", object);
        assert!(n.body().ends_with(TRUNCATED_MARK), "{}", n.body());
        assert!(n.body().len() < 2 * MAX_ECHO_BYTES);
    }
}
