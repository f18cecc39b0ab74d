//! RFC 7386 JSON Merge Patch (R-RES-116): objects merge key by key, `null` removes a key,
//! anything else (lists included) replaces.
//!
//! Every value of the result is the current object's or the patch's at the same path, so the
//! result nests no deeper than the deeper of the two; the merge recurses only where the patch
//! has an object, so no deeper than the patch, which parsed within
//! [`crate::limits::MAX_NESTING_DEPTH`].

use std::collections::HashSet;

use serde_json::Map;
use serde_json::Value;

use super::PatchError;
use super::parse;

/// The wording Kubernetes answers a merge patch it cannot read with (`ErrBadJSONPatch`).
const BAD_MERGE_PATCH: &str = "Invalid JSON Patch";

/// `current` with the merge patch `body` applied. A body that is not JSON, or is `null` or
/// a scalar, is refused as Kubernetes' JSON library refuses it; an array replaces the object
/// (and then fails decoding, as upstream).
pub(super) fn apply(mut current: Value, body: &[u8]) -> Result<Value, PatchError> {
    let patch = parse(body, |_| PatchError::Malformed(BAD_MERGE_PATCH.to_owned()))?;
    if !(patch.is_object() || patch.is_array()) {
        return Err(PatchError::Malformed(BAD_MERGE_PATCH.to_owned()));
    }
    merge(&mut current, patch);
    Ok(current)
}

/// Merges `patch` into `target`. Keys set to `null` leave together after the others are
/// merged, so removing many keys of a large object costs one pass over it.
fn merge(target: &mut Value, patch: Value) {
    let Value::Object(patch) = patch else {
        *target = patch;
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(map) = target else {
        return;
    };
    let mut removed = HashSet::new();
    for (key, value) in patch {
        if value.is_null() {
            removed.insert(key);
        } else {
            merge(map.entry(key).or_insert(Value::Null), value);
        }
    }
    if !removed.is_empty() {
        map.retain(|key, _| !removed.contains(key));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    // R-RES-116
    #[test]
    fn objects_merge_nulls_remove_lists_replace() {
        let current = json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "list": [1, 2]});
        let body = json!({"metadata": {"labels": {"a": null, "c": "3"}}, "list": [3]});
        assert_eq!(
            apply(current, body.to_string().as_bytes()),
            Ok(json!({"metadata": {"labels": {"b": "2", "c": "3"}}, "list": [3]}))
        );
    }

    // R-RES-116: nulls inside a new object are dropped; the keys left keep their order.
    #[test]
    fn nulls_are_dropped_and_order_is_kept() {
        let current = json!({"a": 1, "b": 2, "c": 3, "d": 4});
        let body = json!({"a": null, "c": null, "e": {"f": null, "g": 1}});
        let got = apply(current, body.to_string().as_bytes()).expect("merged");
        let keys: Vec<&String> = got.as_object().expect("object").keys().collect();
        assert_eq!(keys, ["b", "d", "e"]);
        assert_eq!(got["e"], json!({"g": 1}));
    }

    #[test]
    fn unreadable_bodies_are_refused_in_upstream_words() {
        for body in [&b"{"[..], b"null", b"3", b"\"x\""] {
            assert_eq!(
                apply(json!({}), body),
                Err(PatchError::Malformed(BAD_MERGE_PATCH.to_owned())),
                "{body:?}"
            );
        }
    }
}
