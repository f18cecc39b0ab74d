//! The default class of a kind of class (StorageClass, IngressClass): the classes marked
//! default by an annotation; of several, the newest, then the first by name (Kubernetes'
//! `GetDefaultClass`), and what DefaultStorageClass and DefaultIngressClass do with it: give
//! a new object that names no class the default's name.

use std::sync::Arc;

use serde_json::Value;
use serde_json::json;

use super::objects::ObjectCache;
use crate::admission::Attributes;
use crate::error::ApiError;

/// The classes of one kind, and how an object names one of them.
pub struct DefaultClass {
    /// The classes, followed by a reflector.
    pub classes: ObjectCache,
    /// The annotations that mark a class default (any of them `"true"`).
    pub marks: Vec<String>,
    /// The `spec` field that names an object's class (`storageClassName`, ...).
    pub field: &'static str,
    /// The annotation that also names an object's class.
    pub annotation: String,
}

impl DefaultClass {
    /// Sets `spec.<field>` of `object` to the default class's name, unless the object names a
    /// class (by the field or the annotation) or no class is the default.
    pub async fn fill(
        &self,
        attributes: &Attributes<'_>,
        object: &mut Value,
    ) -> Result<(), ApiError> {
        let named = (object.get("spec").and_then(|s| s.get(self.field)))
            .is_some_and(|c| !c.is_null())
            || (object.pointer("/metadata/annotations"))
                .and_then(|a| a.get(&self.annotation))
                .is_some();
        if named {
            return Ok(());
        }
        let classes = (self.classes.list().await).map_err(|e| attributes.forbidden(e))?;
        let Some(default) = newest_default(classes, &self.marks) else {
            return Ok(());
        };
        let name = default
            .pointer("/metadata/name")
            .cloned()
            .unwrap_or(json!(""));
        let Some(object) = object.as_object_mut() else {
            return Ok(());
        };
        let spec = object.entry("spec").or_insert_with(|| json!({}));
        if let Some(spec) = spec.as_object_mut() {
            spec.insert(self.field.to_owned(), name);
        }
        Ok(())
    }
}

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
