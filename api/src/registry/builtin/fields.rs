//! Small readers over decoded JSON objects shared by the workload and pod rules: typed field
//! access by JSON pointer and the generic checks (non-negative, immutable) worded as upstream.

use serde_json::Value;

use crate::validation::FieldError;

/// The string at `pointer` (absent or not a string: empty).
pub fn str_at<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The integer at `pointer`, if any.
pub fn int_at(obj: &Value, pointer: &str) -> Option<i64> {
    obj.pointer(pointer).and_then(Value::as_i64)
}

/// The array at `pointer` (absent: empty).
pub fn array_at<'a>(obj: &'a Value, pointer: &str) -> &'a [Value] {
    obj.pointer(pointer)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Upstream's `ValidateNonnegativeField` for each of `fields` under `pointer` (paths under
/// `path`).
pub fn nonnegative(obj: &Value, pointer: &str, path: &str, fields: &[&str]) -> Vec<FieldError> {
    fields
        .iter()
        .filter_map(|f| {
            let v = int_at(obj, &format!("{pointer}/{f}"))?;
            (v < 0).then(|| {
                FieldError::invalid(
                    format!("{path}.{f}"),
                    v,
                    "must be greater than or equal to 0",
                )
            })
        })
        .collect()
}

/// Upstream's `ValidateImmutableField`: `path: Invalid value: <new>: field is immutable` when
/// the value at `pointer` differs between `new` and `old`.
pub fn immutable(new: &Value, old: &Value, pointer: &str, path: &str) -> Option<FieldError> {
    let (n, o) = (new.pointer(pointer), old.pointer(pointer));
    (n != o).then(|| {
        FieldError::invalid(
            path,
            n.cloned().unwrap_or(Value::Null),
            "field is immutable",
        )
    })
}

/// Sets `map[key] = value` when `key` is absent (upstream's "default if nil").
pub fn default_key(map: &mut serde_json::Map<String, Value>, key: &str, value: Value) {
    map.entry(key.to_owned()).or_insert(value);
}

/// Replaces the object's `status` (upstream's `PrepareForCreate` resets).
pub fn set_status(obj: &mut Value, status: Value) {
    if let Value::Object(m) = obj {
        m.insert("status".to_owned(), status);
    }
}

/// The object at `pointer`, created (as `{}`) along the way when missing; `None` when a
/// value on the way is not an object.
pub fn object_mut<'a>(
    obj: &'a mut Value,
    pointer: &str,
) -> Option<&'a mut serde_json::Map<String, Value>> {
    let mut cur = obj;
    for part in pointer.split('/').filter(|p| !p.is_empty()) {
        let map = cur.as_object_mut()?;
        cur = map
            .entry(part.to_owned())
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
    }
    cur.as_object_mut()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn nonnegative_and_immutable_are_worded_as_upstream() {
        let obj = json!({"spec": {"replicas": -1, "minReadySeconds": 3}});
        let errs = nonnegative(&obj, "/spec", "spec", &["replicas", "minReadySeconds"]);
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs[0].to_string(),
            "spec.replicas: Invalid value: -1: must be greater than or equal to 0"
        );
        let old = json!({"spec": {"selector": {"matchLabels": {"a": "b"}}}});
        let e = immutable(&obj, &old, "/spec/selector", "spec.selector").expect("changed");
        assert_eq!(
            e.to_string(),
            "spec.selector: Invalid value: null: field is immutable"
        );
        assert!(immutable(&old, &old, "/spec/selector", "spec.selector").is_none());
    }

    #[test]
    fn object_mut_creates_the_path() {
        let mut obj = json!({"spec": {}});
        object_mut(&mut obj, "/spec/template/metadata")
            .expect("object")
            .insert("x".into(), 1.into());
        assert_eq!(obj["spec"]["template"]["metadata"]["x"], 1);
        let mut bad = json!({"spec": 3});
        assert!(object_mut(&mut bad, "/spec/template").is_none());
    }
}
