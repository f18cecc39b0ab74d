//! The `metav1.LabelSelector` of object fields (`spec.selector` of workloads, PDBs, ...):
//! Kubernetes' `ValidateLabelSelector` with its messages, and matching a label map the way
//! `LabelSelectorAsSelector` does, through [`crate::labels::LabelSelector`].

use std::collections::BTreeSet;

use serde_json::Map;
use serde_json::Value;

use super::FieldError;
use super::labels::validate_label_key;
use super::labels::validate_label_value;
use super::labels::validate_labels;
use crate::labels::LabelRequirement;
use crate::labels::LabelSelector;

/// The string values of `expr.values` (absent: none).
fn values(expr: &Value) -> Vec<&str> {
    expr.get("values")
        .and_then(Value::as_array)
        .map(|vs| vs.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn str_field<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get(field).and_then(Value::as_str).unwrap_or_default()
}

/// Kubernetes' `ValidateLabelSelector` of the selector at `path` (absent: nothing to check):
/// `matchLabels` as labels, and per `matchExpressions[i]` a known operator, `values` present
/// exactly for `In`/`NotIn`, a qualified-name key and label values.
pub fn validate_label_selector(selector: Option<&Value>, path: &str) -> Vec<FieldError> {
    let Some(selector) = selector.filter(|s| s.is_object()) else {
        return Vec::new();
    };
    let mut errs = validate_labels(selector.get("matchLabels"), &format!("{path}.matchLabels"));
    let exprs = selector.get("matchExpressions").and_then(Value::as_array);
    for (i, expr) in exprs.into_iter().flatten().enumerate() {
        let at = format!("{path}.matchExpressions[{i}]");
        let vals = values(expr);
        match str_field(expr, "operator") {
            "In" | "NotIn" if vals.is_empty() => errs.push(FieldError::required(
                format!("{at}.values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if !vals.is_empty() => errs.push(FieldError::forbidden(
                format!("{at}.values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            op => errs.push(FieldError::invalid(
                format!("{at}.operator"),
                op,
                "not a valid selector operator",
            )),
        }
        errs.extend(validate_label_key(
            str_field(expr, "key"),
            &format!("{at}.key"),
        ));
        for (j, value) in vals.iter().enumerate() {
            errs.extend(
                validate_label_value(value)
                    .into_iter()
                    .map(|msg| FieldError::invalid(format!("{at}.values[{j}]"), *value, msg)),
            );
        }
    }
    errs
}

/// Whether `selector` has neither `matchLabels` nor `matchExpressions` entries (it then
/// selects everything, as upstream's empty selector does).
pub fn is_empty(selector: &Value) -> bool {
    let none = |field: &str| match selector.get(field) {
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        _ => true,
    };
    none("matchLabels") && none("matchExpressions")
}

/// The query selector equal to `selector`, as `LabelSelectorAsSelector`; `None` for a null
/// selector or one that cannot be converted (an unknown operator, `In` without values,
/// `Exists` with values), which select nothing.
pub fn compile(selector: &Value) -> Option<LabelSelector> {
    if !selector.is_object() {
        return None;
    }
    let mut reqs = Vec::new();
    if let Some(Value::Object(labels)) = selector.get("matchLabels") {
        for (k, v) in labels {
            let value = v.as_str().unwrap_or_default().to_owned();
            reqs.push(LabelRequirement::In(k.clone(), BTreeSet::from([value])));
        }
    }
    let exprs = selector.get("matchExpressions").and_then(Value::as_array);
    for expr in exprs.into_iter().flatten() {
        let key = str_field(expr, "key").to_owned();
        let vals: BTreeSet<String> = values(expr).into_iter().map(str::to_owned).collect();
        reqs.push(match (str_field(expr, "operator"), vals.is_empty()) {
            ("In", false) => LabelRequirement::In(key, vals),
            ("NotIn", false) => LabelRequirement::NotIn(key, vals),
            ("Exists", true) => LabelRequirement::Exists(key),
            ("DoesNotExist", true) => LabelRequirement::NotExists(key),
            _ => return None,
        });
    }
    Some(LabelSelector::from_requirements(reqs))
}

/// Whether the `metav1.LabelSelector` `selector` selects an object with `labels`: an empty
/// selector selects everything; a null or malformed one selects nothing.
pub fn matches(selector: &Value, labels: &Map<String, Value>) -> bool {
    compile(selector).is_some_and(|s| s.matches_labels(labels))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rendered(selector: Value) -> Vec<String> {
        validate_label_selector(Some(&selector), "spec.selector")
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    // R-RES-028: selector keys and values follow the label rules; operators and values as
    // upstream's ValidateLabelSelectorRequirement words them.
    #[test]
    fn selector_rules() {
        assert!(
            rendered(json!({"matchLabels":{"app":"web"},"matchExpressions":[
            {"key":"tier","operator":"In","values":["a"]},
            {"key":"x","operator":"DoesNotExist"}]}))
            .is_empty()
        );
        assert_eq!(
            rendered(json!({"matchExpressions":[{"key":"a","operator":"Equals","values":["b"]}]})),
            vec![
                r#"spec.selector.matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator"#
            ]
        );
        assert_eq!(
            rendered(json!({"matchExpressions":[{"key":"a","operator":"NotIn"}]})),
            vec![
                "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
            ]
        );
        assert_eq!(
            rendered(json!({"matchExpressions":[{"key":"a","operator":"Exists","values":["b"]}]})),
            vec![
                "spec.selector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
            ]
        );
        let bad_key = rendered(json!({"matchExpressions":[{"key":"a b","operator":"Exists"}]}));
        assert_eq!(bad_key.len(), 1);
        assert!(
            bad_key[0].starts_with(
                r#"spec.selector.matchExpressions[0].key: Invalid value: "a b": name part must consist"#
            ),
            "{bad_key:?}"
        );
        let bad_value = rendered(
            json!({"matchExpressions":[{"key":"a","operator":"In","values":["ok","-x"]}]}),
        );
        assert_eq!(bad_value.len(), 1);
        assert!(
            bad_value[0].starts_with(
                r#"spec.selector.matchExpressions[0].values[1]: Invalid value: "-x": a valid label must be"#
            ),
            "{bad_value:?}"
        );
        let bad_match = rendered(json!({"matchLabels":{"a":"-x"}}));
        assert!(bad_match[0].starts_with(r#"spec.selector.matchLabels: Invalid value: "-x""#));
        assert!(validate_label_selector(None, "spec.selector").is_empty());
    }

    #[test]
    fn matching() {
        let labels = json!({"app":"web","tier":"front"});
        let labels = labels.as_object().expect("object");
        let yes = [
            json!({}),
            json!({"matchLabels":{"app":"web"}}),
            json!({"matchExpressions":[{"key":"tier","operator":"In","values":["front","back"]}]}),
            json!({"matchExpressions":[{"key":"tier","operator":"NotIn","values":["back"]}]}),
            json!({"matchExpressions":[{"key":"app","operator":"Exists"}]}),
            json!({"matchLabels":{"app":"web"},"matchExpressions":[{"key":"db","operator":"DoesNotExist"}]}),
        ];
        for s in yes {
            assert!(matches(&s, labels), "{s}");
        }
        let no = [
            Value::Null,
            json!({"matchLabels":{"app":"db"}}),
            json!({"matchLabels":{"app":"web","zone":"a"}}),
            json!({"matchExpressions":[{"key":"app","operator":"DoesNotExist"}]}),
            json!({"matchExpressions":[{"key":"app","operator":"Bogus"}]}),
            json!({"matchExpressions":[{"key":"app","operator":"In","values":[]}]}),
        ];
        for s in no {
            assert!(!matches(&s, labels), "{s}");
        }
    }

    #[test]
    fn emptiness() {
        assert!(is_empty(&json!({})));
        assert!(is_empty(&json!({"matchLabels":{},"matchExpressions":[]})));
        assert!(!is_empty(&json!({"matchLabels":{"a":"b"}})));
        assert!(!is_empty(
            &json!({"matchExpressions":[{"key":"a","operator":"Exists"}]})
        ));
    }
}
