//! The schema's `required` lists as validation: a required field left unset answers
//! `<path>: Required value` (R-RES-030), except where the server fills the field itself
//! (`apiVersion`, `kind`, `metadata`) or the kind's own rules judge it (`status`).

use serde_json::Value;

use super::Node;
use super::NodeId;
use super::Schema;
use super::excerpt::excerpt;
use crate::validation::FieldError;

/// Top-level fields never judged here: the server sets them, or (status) they are not the
/// client's to send on create and update.
const SERVER_FILLED: [&str; 4] = ["apiVersion", "kind", "metadata", "status"];

/// Whether `v` counts as unset for a required field. The decoder writes an unsent required
/// field at its zero value, so an empty string is as unsent as an absent field; numbers,
/// booleans, objects and lists are judged by the kind's own rules (a zero may be meant, and
/// some required lists may be empty, e.g. `EndpointSlice.endpoints`).
fn unset(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(_) => false,
    }
}

/// Appends to `errs` one `Required value` per required field of `obj` that is unset, at its
/// path (`spec.containers[0].name`, as an excerpt), unless `errs` already holds a `Required`
/// for that field (a kind's own rule said it first). The walk recurses once per level of
/// `obj`: every object it is given was built by [`decode`](super::decode()), whose parsers stop
/// at [`MAX_NESTING_DEPTH`](crate::limits::MAX_NESTING_DEPTH).
pub fn missing_required(schema: &Schema, obj: &Value, errs: &mut Vec<FieldError>) {
    let mut found = Vec::new();
    walk(
        schema,
        schema.root(),
        obj,
        &mut String::new(),
        true,
        &mut found,
    );
    for e in found {
        if !errs
            .iter()
            .any(|old| old.field == e.field && old.kind == e.kind)
        {
            errs.push(e);
        }
    }
}

fn walk(
    schema: &Schema,
    id: NodeId,
    v: &Value,
    path: &mut String,
    root: bool,
    found: &mut Vec<FieldError>,
) {
    let mark = path.len();
    match (schema.node(id), v) {
        (Node::Object(o), Value::Object(fields)) => {
            for (name, child) in &o.properties {
                if root && SERVER_FILLED.contains(&name.as_str()) {
                    continue;
                }
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(name);
                let value = fields.get(name);
                if o.required.contains(name) && unset(value) {
                    found.push(FieldError::required(excerpt(path), ""));
                } else if let Some(value) = value {
                    walk(schema, *child, value, path, false, found);
                }
                path.truncate(mark);
            }
        }
        (Node::Map(values), Value::Object(fields)) => {
            for (key, value) in fields {
                path.push('[');
                path.push_str(key);
                path.push(']');
                walk(schema, *values, value, path, false, found);
                path.truncate(mark);
            }
        }
        (Node::Array(items), Value::Array(list)) => {
            for (i, value) in list.iter().enumerate() {
                path.push_str(&format!("[{i}]"));
                walk(schema, *items, value, path, false, found);
                path.truncate(mark);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
    use serde_json::json;

    use super::super::of;
    use super::*;
    use crate::validation::FieldErrorKind;

    fn required(schema: &Schema, obj: &Value) -> Vec<String> {
        let mut errs = Vec::new();
        missing_required(schema, obj, &mut errs);
        assert!(errs.iter().all(|e| e.kind == FieldErrorKind::Required));
        errs.into_iter().map(|e| e.field).collect()
    }

    // R-RES-030: a required field left empty is named with its list index.
    #[test]
    fn names_each_unset_required_field_at_its_path() {
        let s = of::<Deployment>().expect("schema");
        let d = json!({"metadata": {}, "spec": {"selector": {}, "template": {"spec": {
            "containers": [{"name": "a"}, {"name": ""}, {"image": "x", "env": [{"value": "v"}]}]
        }}}});
        assert_eq!(
            required(&s, &d),
            [
                "spec.template.spec.containers[1].name",
                "spec.template.spec.containers[2].env[0].name",
                "spec.template.spec.containers[2].name",
            ]
        );
    }

    // R-RES-030: metadata, apiVersion, kind and status are not judged; a Required a kind
    // rule already gave is not given twice.
    #[test]
    fn skips_server_filled_fields_and_dedupes() {
        let s = of::<ClusterRoleBinding>().expect("schema");
        let crb = json!({"roleRef": {"apiGroup": "g", "kind": "ClusterRole", "name": ""},
            "subjects": [{"kind": "User", "name": ""}]});
        assert_eq!(required(&s, &crb), ["roleRef.name", "subjects[0].name"]);
        let mut errs = vec![FieldError::required("roleRef.name", "must be set")];
        missing_required(&s, &crb, &mut errs);
        assert_eq!(errs.len(), 2);
        assert_eq!(errs[0].detail, "must be set");
    }
}
