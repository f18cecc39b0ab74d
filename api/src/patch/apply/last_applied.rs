//! kubectl's move from client-side to server-side apply (Kubernetes' `lastAppliedManager` and
//! `lastAppliedUpdater`): for the `kubectl` manager, conflicts on fields whose live value is
//! still the one the last-applied-configuration annotation holds are taken over, and that
//! annotation, when the object has one, keeps holding the last applied configuration.

use serde_json::Map;
use serde_json::Value;

use crate::flavor::Flavor;
use crate::patch::Shape;
use crate::patch::fieldpath;
use crate::patch::fieldpath::Set;

/// The manager name kubectl applies with, the only one these rules are for.
pub const KUBECTL: &str = "kubectl";

/// The annotation kubectl's client-side apply keeps the applied configuration in.
pub fn annotation(flavor: Flavor) -> String {
    format!(
        "kubectl.{}/last-applied-configuration",
        flavor.label_domain()
    )
}

/// The non-empty last-applied annotation of `object`.
fn last_applied<'v>(object: &'v Value, key: &str) -> Option<&'v str> {
    object
        .get("metadata")?
        .get("annotations")?
        .get(key)?
        .as_str()
        .filter(|text| !text.is_empty())
}

/// The fields the last-applied annotation of `live` sets to the values `live` has: conflicts
/// on them are kubectl's own earlier client-side applies (empty without a readable annotation).
pub fn allowed_conflicts(shape: Shape<'_>, flavor: Flavor, live: &Value) -> Set {
    let Some(text) = last_applied(live, &annotation(flavor)) else {
        return Set::new();
    };
    let Ok(applied) = serde_json::from_str::<Value>(text) else {
        return Set::new();
    };
    let Ok(fields) = fieldpath::of_value(&applied, shape) else {
        return Set::new();
    };
    let comparison = fieldpath::compare(&applied, live, shape);
    fields
        .difference(&comparison.modified)
        .difference(&comparison.added)
        .difference(&comparison.removed)
}

/// When `object` (an apply's result) has a last-applied annotation, sets it to `config`
/// without that annotation, encoded as kubectl's client-side apply encodes it (keys sorted,
/// HTML characters escaped, a final newline).
pub fn update(flavor: Flavor, object: &mut Value, config: &Value) {
    let key = annotation(flavor);
    if last_applied(object, &key).is_none() {
        return;
    }
    let mut config = config.clone();
    if let Some(Value::Object(annotations)) = config
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
    {
        annotations.remove(&key);
    }
    let text = encode(&config);
    if let Some(Value::Object(annotations)) = object
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
    {
        annotations.insert(key, Value::String(text));
    }
}

/// `value` as Go's JSON encoder writes it: object keys sorted, `<`, `>` and `&` escaped, a
/// final newline.
fn encode(value: &Value) -> String {
    let text = sorted(value).to_string();
    let mut out = String::with_capacity(text.len() + 1);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            c => out.push(c),
        }
    }
    out.push('\n');
    out
}

/// `value` with every object's keys in sorted order. It nests as deep as the configuration,
/// which parsed within the nesting limit.
fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(fields) => {
            let mut keys: Vec<&String> = fields.keys().collect();
            keys.sort();
            let out: Map<String, Value> = keys
                .into_iter()
                .map(|k| (k.clone(), sorted(&fields[k])))
                .collect();
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}
