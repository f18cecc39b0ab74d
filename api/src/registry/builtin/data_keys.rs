//! The data rules ConfigMaps and Secrets share: key syntax, the 1 MiB total size, and the
//! `immutable: true` lock.

use serde_json::Map;
use serde_json::Value;

use crate::validation::FieldError;
use crate::validation::validate_config_key;

/// The largest total size of a ConfigMap's or Secret's data (Kubernetes' `MaxSecretSize`).
pub const MAX_DATA_SIZE: usize = 1024 * 1024;

const IMMUTABLE_MSG: &str = "field is immutable when `immutable` is set";

/// Checks every key of the map at `field` of `obj`; returns the keys found.
pub fn check_keys<'a>(
    obj: &'a Value,
    field: &str,
    errs: &mut Vec<FieldError>,
) -> Option<&'a Map<String, Value>> {
    let map = obj.get(field)?.as_object()?;
    for key in map.keys() {
        for msg in validate_config_key(key) {
            errs.push(FieldError::invalid(
                format!("{field}[{key}]"),
                key.as_str(),
                msg,
            ));
        }
    }
    Some(map)
}

/// The `immutable: true` rule: once set it stays, and the data fields do not change.
pub fn check_immutable(new: &Value, old: &Value, fields: &[&str], errs: &mut Vec<FieldError>) {
    if old.get("immutable").and_then(Value::as_bool) != Some(true) {
        return;
    }
    if new.get("immutable").and_then(Value::as_bool) != Some(true) {
        errs.push(FieldError::forbidden("immutable", IMMUTABLE_MSG));
    }
    for field in fields {
        if new.get(*field) != old.get(*field) {
            errs.push(FieldError::forbidden(*field, IMMUTABLE_MSG));
        }
    }
}
