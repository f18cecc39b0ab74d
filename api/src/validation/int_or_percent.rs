//! Int-or-percent fields (`minAvailable`, `maxUnavailable`, `maxSurge`): apps validation's
//! `ValidatePositiveIntOrPercent` and `IsNotMoreThan100Percent` with their messages.

use serde_json::Value;

use super::FieldError;

const PERCENT_MSG: &str = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

/// The number of a `[0-9]+%` string.
fn percent(s: &str) -> Option<u64> {
    let digits = s.strip_suffix('%')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse().unwrap_or(u64::MAX))
}

/// A non-negative integer or a `N%` string at `path`; with `at_most_100`, a percentage above
/// 100 is refused too (the PDB and rolling-update rule).
pub fn validate_int_or_percent(value: &Value, path: &str, at_most_100: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    match value {
        Value::String(s) => match percent(s) {
            None => errs.push(FieldError::invalid(path, s.as_str(), PERCENT_MSG)),
            Some(p) if at_most_100 && p > 100 => errs.push(FieldError::invalid(
                path,
                s.as_str(),
                "must not be greater than 100%",
            )),
            Some(_) => {}
        },
        Value::Number(n) if n.as_i64().is_some_and(|i| i < 0) => errs.push(FieldError::invalid(
            path,
            value.clone(),
            "must be greater than or equal to 0",
        )),
        Value::Number(_) => {}
        other => errs.push(FieldError::invalid(
            path,
            other.clone(),
            "must be an integer or percentage (e.g '5%')",
        )),
    }
    errs
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rendered(v: Value) -> Vec<String> {
        validate_int_or_percent(&v, "spec.minAvailable", true)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn ints_and_percentages() {
        for ok in [json!(0), json!(3), json!("0%"), json!("100%")] {
            assert!(rendered(ok.clone()).is_empty(), "{ok}");
        }
        assert_eq!(
            rendered(json!(-1)),
            vec!["spec.minAvailable: Invalid value: -1: must be greater than or equal to 0"]
        );
        assert_eq!(
            rendered(json!("110%")),
            vec![r#"spec.minAvailable: Invalid value: "110%": must not be greater than 100%"#]
        );
        assert_eq!(
            rendered(json!("ten")),
            vec![format!(
                r#"spec.minAvailable: Invalid value: "ten": {PERCENT_MSG}"#
            )]
        );
        assert!(validate_int_or_percent(&json!("150%"), "x", false).is_empty());
    }
}
