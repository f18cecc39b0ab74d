//! Secret: `stringData` merged into `data`, default type `Opaque`, data keys and the 1 MiB
//! limit, the keys each built-in type requires (types and annotations in the flavor's
//! domain), `type` and `immutable` locks.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Map;
use serde_json::Value;

use super::data_keys::MAX_DATA_SIZE;
use super::data_keys::check_immutable;
use super::data_keys::check_keys;
use crate::flavor::Flavor;
use crate::registry::Strategy;
use crate::request::FieldLabels;
use crate::request::METADATA_NAME;
use crate::request::METADATA_NAMESPACE;
use crate::request::SelectableField;
use crate::validation::FieldError;

/// The strategy of `v1` Secret.
#[derive(Debug)]
pub struct SecretStrategy {
    flavor: Flavor,
}

impl SecretStrategy {
    /// The Secret strategy of `flavor` (which spells the built-in types' domain).
    pub fn new(flavor: Flavor) -> Self {
        Self { flavor }
    }

    /// As the type switch of `ValidateSecret`: the keys (and annotation) a built-in type
    /// requires, and well-formed JSON in the docker config types.
    fn type_rules(&self, obj: &Value, data: &Map<String, Value>, errs: &mut Vec<FieldError>) {
        let domain = self.flavor.label_domain();
        let secret_type = obj.get("type").and_then(Value::as_str).unwrap_or_default();
        let Some(short) = secret_type.strip_prefix(&format!("{domain}/")) else {
            return;
        };
        let raw = |key: &str| {
            data.get(key)
                .and_then(Value::as_str)
                .map(|b64| STANDARD.decode(b64).unwrap_or_default())
        };
        let required = |key: &str| FieldError::required(format!("data[{key}]"), "");
        match short {
            "service-account-token" => {
                let annotation = format!("{domain}/service-account.name");
                let named = obj
                    .pointer("/metadata/annotations")
                    .and_then(|a| a.get(&annotation))
                    .and_then(Value::as_str)
                    .is_some_and(|n| !n.is_empty());
                if !named {
                    errs.push(FieldError::required(
                        format!("metadata.annotations[{annotation}]"),
                        "",
                    ));
                }
            }
            "dockercfg" | "dockerconfigjson" => {
                let key = format!(".{short}");
                match raw(&key) {
                    None => errs.push(required(&key)),
                    Some(bytes) => {
                        if let Err(e) = serde_json::from_slice::<Map<String, Value>>(&bytes) {
                            errs.push(FieldError::invalid(
                                format!("data[{key}]"),
                                "<secret contents redacted>",
                                e.to_string(),
                            ));
                        }
                    }
                }
            }
            "basic-auth" if raw("username").is_none() && raw("password").is_none() => {
                errs.push(required("username"));
                errs.push(required("password"));
            }
            "ssh-auth" if raw("ssh-privatekey").is_none_or(|k| k.is_empty()) => {
                errs.push(required("ssh-privatekey"));
            }
            "tls" => {
                for key in ["tls.crt", "tls.key"] {
                    if raw(key).is_none() {
                        errs.push(required(key));
                    }
                }
            }
            _ => {}
        }
    }
}

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
        let empty = Map::new();
        let data = check_keys(obj, "data", &mut errs).unwrap_or(&empty);
        let size: usize = data
            .values()
            .filter_map(Value::as_str)
            .map(|b64| STANDARD.decode(b64).map_or(0, |raw| raw.len()))
            .sum();
        if size > MAX_DATA_SIZE {
            errs.push(FieldError::too_long("data", MAX_DATA_SIZE));
        }
        self.type_rules(obj, data, &mut errs);
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
        let s = SecretStrategy::new(Flavor::Platform);
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
        let s = SecretStrategy::new(Flavor::Platform);
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

    fn rendered(s: &SecretStrategy, obj: Value) -> Vec<String> {
        s.validate(&obj).iter().map(ToString::to_string).collect()
    }

    // R-RES-030: a built-in Secret type without its required keys is refused.
    #[test]
    fn built_in_types_require_their_keys() {
        let k = SecretStrategy::new(Flavor::Kubernetes);
        assert_eq!(
            rendered(
                &k,
                json!({"type":"kubernetes.io/tls","data":{"tls.crt":""}})
            ),
            vec!["data[tls.key]: Required value"]
        );
        assert_eq!(
            rendered(&k, json!({"type":"kubernetes.io/basic-auth"})),
            vec![
                "data[username]: Required value",
                "data[password]: Required value"
            ]
        );
        assert!(
            rendered(
                &k,
                json!({"type":"kubernetes.io/basic-auth","data":{"password":""}})
            )
            .is_empty()
        );
        assert_eq!(
            rendered(
                &k,
                json!({"type":"kubernetes.io/ssh-auth","data":{"ssh-privatekey":""}})
            ),
            vec!["data[ssh-privatekey]: Required value"]
        );
        assert_eq!(
            rendered(&k, json!({"type":"kubernetes.io/dockerconfigjson"})),
            vec!["data[.dockerconfigjson]: Required value"]
        );
        let not_json = rendered(
            &k,
            json!({"type":"kubernetes.io/dockercfg","data":{".dockercfg":"bm9wZQ=="}}),
        );
        assert_eq!(not_json.len(), 1);
        assert!(
            not_json[0]
                .starts_with(r#"data[.dockercfg]: Invalid value: "<secret contents redacted>": "#)
        );
        assert!(
            rendered(
                &k,
                json!({"type":"kubernetes.io/dockercfg","data":{".dockercfg":"e30="}})
            )
            .is_empty()
        );
        assert_eq!(
            rendered(&k, json!({"type":"kubernetes.io/service-account-token"})),
            vec!["metadata.annotations[kubernetes.io/service-account.name]: Required value"]
        );
        let named = json!({"type":"kubernetes.io/service-account-token","metadata":{"annotations":{"kubernetes.io/service-account.name":"sa"}}});
        assert!(rendered(&k, named).is_empty());
    }

    #[test]
    fn types_follow_the_flavor() {
        let p = SecretStrategy::new(Flavor::Platform);
        assert_eq!(
            rendered(&p, json!({"type":"platform.io/tls","data":{"tls.key":""}})),
            vec!["data[tls.crt]: Required value"]
        );
        assert!(rendered(&p, json!({"type":"kubernetes.io/tls"})).is_empty());
    }
}
