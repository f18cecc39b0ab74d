//! The default class of a kind of class (StorageClass, IngressClass): the classes marked
//! default by an annotation; of several, the newest, then the first by name (Kubernetes'
//! `GetDefaultClass`).

use std::sync::Arc;

use serde_json::Value;

fn text<'a>(object: &'a Value, pointer: &str) -> &'a str {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The default of `classes`: those whose annotation named in `annotations` is `"true"`,
/// newest first (timestamps are RFC 3339 in UTC, so they sort as text), ties by name.
pub fn newest_default(classes: Vec<Arc<Value>>, annotations: &[String]) -> Option<Arc<Value>> {
    let is_default = |class: &Value| {
        let marks = class.pointer("/metadata/annotations");
        (annotations.iter())
            .any(|key| marks.and_then(|m| m.get(key)).and_then(Value::as_str) == Some("true"))
    };
    (classes.into_iter())
        .filter(|class| is_default(class))
        .min_by(|a, b| {
            let stamp = |c: &Value| text(c, "/metadata/creationTimestamp").to_owned();
            (stamp(b).cmp(&stamp(a)))
                .then_with(|| text(a, "/metadata/name").cmp(text(b, "/metadata/name")))
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn class(name: &str, created: &str, default: bool) -> Arc<Value> {
        Arc::new(json!({"metadata": {
            "name": name,
            "creationTimestamp": created,
            "annotations": {"d": if default { "true" } else { "false" }},
        }}))
    }

    #[test]
    fn the_newest_default_wins_then_the_first_name() {
        let keys = ["d".to_owned()];
        let classes = vec![
            class("old", "2026-01-01T00:00:00Z", true),
            class("b", "2026-02-01T00:00:00Z", true),
            class("a", "2026-02-01T00:00:00Z", true),
            class("newest", "2026-03-01T00:00:00Z", false),
        ];
        let chosen = newest_default(classes, &keys).expect("a default");
        assert_eq!(chosen["metadata"]["name"], "a");
        assert_eq!(newest_default(vec![class("x", "", false)], &keys), None);
    }
}
