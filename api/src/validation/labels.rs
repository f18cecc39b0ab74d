//! Qualified names (label and annotation keys, finalizers, condition types) and label values,
//! with Kubernetes' `IsQualifiedName` / `IsValidLabelValue` messages, and the `labels` map rule
//! of `ValidateLabels`.

use serde_json::Value;

use super::FieldError;
use super::validate_dns_subdomain;

/// The longest name part of a qualified name and the longest label value, in characters.
const LABEL_MAX: usize = 63;

const NAME_REGEX_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const TOO_MANY_SLASHES_MSG: &str = "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
const VALUE_REGEX_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]` (no length limit).
fn matches_name_regex(s: &str) -> bool {
    let b = s.as_bytes();
    let inner = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.');
    b.first().is_some_and(u8::is_ascii_alphanumeric)
        && b.last().is_some_and(u8::is_ascii_alphanumeric)
        && b.iter().all(inner)
}

/// The problems of `value` as a qualified name, `[prefix/]name` with a DNS-subdomain prefix
/// and a name part of at most 63 characters (empty: valid).
pub fn validate_qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_owned());
            } else {
                errs.extend(
                    validate_dns_subdomain(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            errs.push(TOO_MANY_SLASHES_MSG.to_owned());
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_owned());
    } else if name.len() > LABEL_MAX {
        errs.push(format!(
            "name part must be no more than {LABEL_MAX} characters"
        ));
    }
    if !matches_name_regex(name) {
        errs.push(format!("name part {NAME_REGEX_MSG}"));
    }
    errs
}

/// The problems of `value` as a label value: empty, or at most 63 characters of the name
/// alphabet (empty: valid).
pub fn validate_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_MAX {
        errs.push(format!("must be no more than {LABEL_MAX} characters"));
    }
    if !value.is_empty() && !matches_name_regex(value) {
        errs.push(VALUE_REGEX_MSG.to_owned());
    }
    errs
}

/// Kubernetes' `ValidateLabelName`: one error at `path` per problem of `key`.
pub fn validate_label_key(key: &str, path: &str) -> Vec<FieldError> {
    validate_qualified_name(key)
        .into_iter()
        .map(|msg| FieldError::invalid(path, key, msg))
        .collect()
}

/// Kubernetes' `ValidateLabels` of the map `labels` at `path` (e.g. `metadata.labels`): every
/// key a qualified name, every value a label value; errors name the map, not the entry, as
/// upstream's do. Anything but an object has no labels to check.
pub fn validate_labels(labels: Option<&Value>, path: &str) -> Vec<FieldError> {
    let Some(Value::Object(map)) = labels else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    for (key, value) in map {
        errs.extend(validate_label_key(key, path));
        let value = value.as_str().unwrap_or_default();
        errs.extend(
            validate_label_value(value)
                .into_iter()
                .map(|msg| FieldError::invalid(path, value, msg)),
        );
    }
    errs
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    // R-RES-028: label keys are qualified names, with upstream's messages.
    #[test]
    fn qualified_names() {
        for ok in [
            "a",
            "MyName",
            "my.name",
            "123-abc",
            "example.com/a_b",
            "k".repeat(63).as_str(),
        ] {
            assert!(validate_qualified_name(ok).is_empty(), "{ok}");
        }
        assert_eq!(
            validate_qualified_name("a b"),
            vec![format!("name part {NAME_REGEX_MSG}")]
        );
        assert_eq!(
            validate_qualified_name(&"k".repeat(64)),
            vec!["name part must be no more than 63 characters"]
        );
        assert_eq!(
            validate_qualified_name(""),
            vec![
                "name part must be non-empty".to_owned(),
                format!("name part {NAME_REGEX_MSG}")
            ]
        );
        assert_eq!(
            validate_qualified_name("/a"),
            vec!["prefix part must be non-empty"]
        );
        assert_eq!(
            validate_qualified_name("Example.com/a"),
            vec![
                "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ]
        );
        assert_eq!(validate_qualified_name("a/b/c"), vec![TOO_MANY_SLASHES_MSG]);
    }

    // R-RES-028: label values.
    #[test]
    fn label_values() {
        for ok in ["", "MyValue", "my_value", "12345", "v".repeat(63).as_str()] {
            assert!(validate_label_value(ok).is_empty(), "{ok}");
        }
        assert_eq!(validate_label_value("-a"), vec![VALUE_REGEX_MSG]);
        assert_eq!(
            validate_label_value(&"v".repeat(64)),
            vec!["must be no more than 63 characters"]
        );
    }

    // R-RES-028: errors of a labels map name the map, one per problem.
    #[test]
    fn label_maps() {
        let labels = json!({"a b": "ok", "good": "-bad"});
        let errs = validate_labels(Some(&labels), "metadata.labels");
        assert_eq!(
            errs.iter().map(ToString::to_string).collect::<Vec<_>>(),
            vec![
                format!(r#"metadata.labels: Invalid value: "a b": name part {NAME_REGEX_MSG}"#),
                format!(r#"metadata.labels: Invalid value: "-bad": {VALUE_REGEX_MSG}"#),
            ]
        );
        assert!(validate_labels(None, "metadata.labels").is_empty());
        assert!(validate_labels(Some(&json!({"app": "web"})), "x").is_empty());
    }
}
