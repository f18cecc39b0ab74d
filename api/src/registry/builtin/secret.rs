//! Secret: `stringData` merged into `data`, default type `Opaque`, data keys and the 1 MiB
//! limit, `type` and `immutable` locks.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use super::data_keys::MAX_DATA_SIZE;
use super::data_keys::check_immutable;
use super::data_keys::check_keys;
use crate::registry::Strategy;
use crate::request::FieldLabels;
use crate::request::METADATA_NAME;
use crate::request::METADATA_NAMESPACE;
use crate::request::SelectableField;
use crate::validation::FieldError;

/// The strategy of `v1` Secret.
#[derive(Debug, Default)]
pub struct SecretStrategy;

impl Strategy for SecretStrategy {
    fn tracks_generation(&self) -> bool {
        false
    }

    /// Kubernetes' Secret field label conversion: `type` besides name and namespace.
    fn field_labels(&self) -> FieldLabels {
        const TYPE: SelectableField = SelectableField {
            label: "type",
            pointers: &["/type"],
        };
        FieldLabels::Only(&[TYPE, METADATA_NAMESPACE, METADATA_NAME])
    }

    /// `stringData` is write-only: its entries overwrite `data` (base64-encoded) and it is
    /// never stored, as Kubernetes' v1 conversion does; `type` defaults to `Opaque`.
    fn default_fields(&self, obj: &mut Value) {
        let Value::Object(map) = obj else { return };
        if let Some(Value::Object(string_data)) = map.remove("stringData") {
            if !map.get("data").is_some_and(Value::is_object) {
                map.insert("data".to_owned(), Value::Object(Default::default()));
            }
            if let Some(Value::Object(data)) = map.get_mut("data") {
                for (key, value) in string_data {
                    let text = value.as_str().unwrap_or_default();
                    data.insert(key, STANDARD.encode(text).into());
                }
            }
        }
        if map
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .is_empty()
        {
            map.insert("type".to_owned(), "Opaque".into());
        }
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let size: usize = check_keys(obj, "data", &mut errs)
            .map(|data| {
                data.values()
                    .filter_map(Value::as_str)
                    .map(|b64| STANDARD.decode(b64).map_or(0, |raw| raw.len()))
                    .sum()
            })
            .unwrap_or(0);
        if size > MAX_DATA_SIZE {
            errs.push(FieldError::too_long("data", MAX_DATA_SIZE));
        }
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let new_type = new.get("type").cloned().unwrap_or(Value::Null);
        if old.get("type").is_some_and(|t| *t != new_type) {
            errs.push(FieldError::invalid("type", new_type, "field is immutable"));
        }
        check_immutable(new, old, &["data"], &mut errs);
        errs
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn string_data_merges_into_data_and_type_defaults() {
        let s = SecretStrategy;
        let mut v = json!({"metadata":{"name":"a"},"data":{"x":"eA==","y":"eQ=="},"stringData":{"y":"new"}});
        s.default_fields(&mut v);
        assert_eq!(v["data"], json!({"x":"eA==","y":"bmV3"}));
        assert!(v.get("stringData").is_none());
        assert_eq!(v["type"], "Opaque");
        let mut only = json!({"stringData":{"k":"v"},"type":"custom/t"});
        s.default_fields(&mut only);
        assert_eq!(only, json!({"type":"custom/t","data":{"k":"dg=="}}));
    }

    #[test]
    fn type_is_immutable_and_size_is_limited() {
        let s = SecretStrategy;
        let old = json!({"type":"Opaque"});
        let errs = s.validate_update(&json!({"type":"other"}), &old);
        assert_eq!(
            errs,
            vec![FieldError::invalid("type", "other", "field is immutable")]
        );
        let big = STANDARD.encode(vec![0u8; MAX_DATA_SIZE + 1]);
        assert_eq!(s.validate(&json!({"data":{"a": big}})).len(), 1);
        let imm = json!({"type":"Opaque","immutable":true,"data":{"a":"YQ=="}});
        let changed = json!({"type":"Opaque","immutable":true,"data":{"a":"Yg=="}});
        assert_eq!(s.validate_update(&changed, &imm)[0].field, "data");
    }
}
