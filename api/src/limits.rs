//! The budgets the API keeps on request input and on what it answers: how large a body may be,
//! how deep a value built from request input may nest (shared by the body decoder, the patch
//! engines, later server-side apply; each checks it while it builds, so a recursive walk over a
//! value that passed is safe), and how much warning text a response carries.

use serde_json::Value;

/// The largest request body accepted, in bytes (Kubernetes' 3 MiB).
pub const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// The runes of warning text a response carries before the recorder starts truncating
/// (`truncateAtTotalRunes`, 4 × 1024, in kube-apiserver's `filters/warning.go`).
pub const MAX_WARNING_RUNES: usize = 4 * 1024;

/// The runes each warning keeps once the total passed [`MAX_WARNING_RUNES`]
/// (`truncateItemRunes` in `filters/warning.go`).
pub const TRUNCATED_WARNING_RUNES: usize = 256;

/// The deepest a value's objects and arrays may nest: a scalar or an empty document counts 0,
/// `{}` and `[]` count 1, `{"a":{}}` counts 2. It is the depth serde_json's parser allows (its
/// recursion limit of 128 refuses the 128th level), so a JSON body that parses never exceeds it,
/// and a patch that would build a deeper value is refused.
pub const MAX_NESTING_DEPTH: usize = 127;

/// How deep `value`'s objects and arrays nest (see [`MAX_NESTING_DEPTH`]), walked without
/// recursion so that any value, however deep, can be measured.
pub fn nesting_depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut pending = vec![(value, 0usize)];
    while let Some((value, above)) = pending.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Object(map) => Box::new(map.values()),
            Value::Array(items) => Box::new(items.iter()),
            _ => continue,
        };
        let depth = above + 1;
        deepest = deepest.max(depth);
        pending.extend(children.map(|child| (child, depth)));
    }
    deepest
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn nested(depth: usize) -> Value {
        (0..depth).fold(json!("leaf"), |inner, _| json!({ "a": inner }))
    }

    #[test]
    fn counts_containers_not_scalars() {
        assert_eq!(nesting_depth(&json!("x")), 0);
        assert_eq!(nesting_depth(&json!({})), 1);
        assert_eq!(nesting_depth(&json!([])), 1);
        assert_eq!(nesting_depth(&json!({"a": {}, "b": [[1]]})), 3);
        assert_eq!(nesting_depth(&nested(MAX_NESTING_DEPTH)), MAX_NESTING_DEPTH);
    }

    #[test]
    fn the_limit_is_the_parsers() {
        let at_limit = nested(MAX_NESTING_DEPTH).to_string();
        assert!(serde_json::from_str::<Value>(&at_limit).is_ok());
        let past_limit = nested(MAX_NESTING_DEPTH + 1).to_string();
        assert!(serde_json::from_str::<Value>(&past_limit).is_err());
    }
}
