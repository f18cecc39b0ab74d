//! RFC 7386 JSON Merge Patch (R-RES-116): objects merge key by key, `null` removes a key,
//! anything else (lists included) replaces.

use serde_json::Value;

use super::PatchError;

/// The wording Kubernetes answers a merge patch it cannot read with (`ErrBadJSONPatch`).
const BAD_MERGE_PATCH: &str = "Invalid JSON Patch";

/// `current` with the merge patch `body` applied. A body that is not JSON, or is `null` or
/// a scalar, is refused as Kubernetes' JSON library refuses it; an array replaces the object
/// (and then fails decoding, as upstream).
pub(super) fn apply(mut current: Value, body: &[u8]) -> Result<Value, PatchError> {
    let patch: Value = serde_json::from_slice(body)
        .map_err(|_| PatchError::Malformed(BAD_MERGE_PATCH.to_owned()))?;
    if !(patch.is_object() || patch.is_array()) {
        return Err(PatchError::Malformed(BAD_MERGE_PATCH.to_owned()));
    }
    ::json_patch::merge(&mut current, &patch);
    Ok(current)
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
