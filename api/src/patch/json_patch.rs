//! RFC 6902 JSON Patch (R-RES-114): a list of operations, all applied or none; a failing
//! `test` fails the patch (R-RES-115).

use serde_json::Value;

use super::PatchError;

/// `current` with the operations of `body` applied.
pub(super) fn apply(mut current: Value, body: &[u8]) -> Result<Value, PatchError> {
    let operations: ::json_patch::Patch =
        serde_json::from_slice(body).map_err(|e| PatchError::Malformed(e.to_string()))?;
    ::json_patch::patch(&mut current, &operations)
        .map_err(|e| PatchError::NotApplicable(e.to_string()))?;
    Ok(current)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn patch(current: Value, ops: Value) -> Result<Value, PatchError> {
        apply(current, ops.to_string().as_bytes())
    }

    // R-RES-114
    #[test]
    fn operations_apply_in_order() {
        let got = patch(
            json!({"metadata": {"labels": {"a": "1"}}, "data": {"x": "1"}}),
            json!([
                {"op": "add", "path": "/metadata/labels/b", "value": "2"},
                {"op": "replace", "path": "/data/x", "value": "9"},
                {"op": "remove", "path": "/metadata/labels/a"},
                {"op": "copy", "from": "/data/x", "path": "/data/y"},
            ]),
        );
        assert_eq!(
            got,
            Ok(json!({"metadata": {"labels": {"b": "2"}}, "data": {"x": "9", "y": "9"}}))
        );
    }

    // R-RES-115
    #[test]
    fn a_failing_test_fails_the_whole_patch() {
        let got = patch(
            json!({"data": {"x": "1"}}),
            json!([
                {"op": "replace", "path": "/data/x", "value": "2"},
                {"op": "test", "path": "/data/x", "value": "1"},
            ]),
        );
        assert!(matches!(got, Err(PatchError::NotApplicable(_))), "{got:?}");
    }

    #[test]
    fn a_body_that_is_not_a_list_of_operations_is_malformed() {
        for body in [
            &b"{\"op\":\"add\"}"[..],
            b"[{\"op\":\"frob\",\"path\":\"/a\"}]",
            b"[",
            b"",
        ] {
            let got = apply(json!({}), body);
            assert!(matches!(got, Err(PatchError::Malformed(_))), "{body:?}");
        }
    }
}
