//! ConfigMap: data keys (unique across `data` and `binaryData`), the 1 MiB limit (reported
//! for the whole object, path `[]`, as upstream), `immutable`.

use serde_json::Value;

use super::data_keys::MAX_DATA_SIZE;
use super::data_keys::check_immutable;
use super::data_keys::check_keys;
use crate::registry::Strategy;
use crate::validation::FieldError;

/// The path upstream gives an error about the whole object (`field.NewPath("")`), as its
/// messages render it.
const WHOLE_OBJECT: &str = "[]";

/// The strategy of `v1` ConfigMap.
#[derive(Debug, Default)]
pub struct ConfigMapStrategy;

impl Strategy for ConfigMapStrategy {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let data = check_keys(obj, "data", &mut errs);
        let binary = check_keys(obj, "binaryData", &mut errs);
        let mut size = 0usize;
        if let Some(data) = data {
            for (key, value) in data {
                if binary.is_some_and(|b| b.contains_key(key)) {
                    errs.push(FieldError::invalid(
                        format!("data[{key}]"),
                        key.as_str(),
                        "duplicate of key present in binaryData",
                    ));
                }
                size += value.as_str().map_or(0, str::len);
            }
        }
        if let Some(binary) = binary {
            for (key, value) in binary {
                if data.is_some_and(|d| d.contains_key(key)) {
                    errs.push(FieldError::invalid(
                        format!("binaryData[{key}]"),
                        key.as_str(),
                        "duplicate of key present in data",
                    ));
                }
                // Stored base64: the decoded size is three quarters of the text.
                size += value.as_str().map_or(0, |s| s.len() / 4 * 3);
            }
        }
        if size > MAX_DATA_SIZE {
            errs.push(FieldError::too_long(WHOLE_OBJECT, MAX_DATA_SIZE));
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        check_immutable(new, old, &["data", "binaryData"], &mut errs);
        errs
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_size_and_duplicates() {
        let s = ConfigMapStrategy;
        let errs = s.validate(&json!({"data":{"bad key":"v","ok":"v"},"binaryData":{"ok":"AAAA"}}));
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, vec!["data[bad key]", "data[ok]", "binaryData[ok]"]);
        assert_eq!(
            errs[1].to_string(),
            r#"data[ok]: Invalid value: "ok": duplicate of key present in binaryData"#
        );
        assert_eq!(
            errs[2].to_string(),
            r#"binaryData[ok]: Invalid value: "ok": duplicate of key present in data"#
        );
        let big = "x".repeat(MAX_DATA_SIZE + 1);
        let errs = s.validate(&json!({"data":{"a": big}}));
        assert_eq!(
            errs.iter().map(ToString::to_string).collect::<Vec<_>>(),
            vec!["[]: Too long: may not be more than 1048576 bytes"]
        );
        let exact = "x".repeat(MAX_DATA_SIZE);
        assert!(s.validate(&json!({"data":{"a": exact}})).is_empty());
    }

    #[test]
    fn immutable_locks_data() {
        let s = ConfigMapStrategy;
        let old = json!({"immutable":true,"data":{"a":"1"}});
        assert!(s.validate_update(&old.clone(), &old).is_empty());
        let changed = json!({"immutable":true,"data":{"a":"2"}});
        assert_eq!(s.validate_update(&changed, &old)[0].field, "data");
        let unset = json!({"data":{"a":"1"}});
        assert_eq!(s.validate_update(&unset, &old)[0].field, "immutable");
        let mutable = json!({"data":{"a":"1"}});
        assert!(
            s.validate_update(&json!({"data":{"a":"9"}}), &mutable)
                .is_empty()
        );
    }
}
