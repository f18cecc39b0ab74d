//! The `x-kubernetes-*` markers of one schema node: list types (`atomic`, `set`, `map` with
//! its keys: scalar, required or defaulted, never nullable), map types, and
//! `x-kubernetes-preserve-unknown-fields` (true or absent). Server-side apply merges custom
//! resources by them.

use serde_json::Value;

use super::view::bool_of;
use super::view::str_of;
use crate::validation::FieldError;

/// The list, map and preserve-unknown-fields markers of one node.
pub(super) fn markers(schema: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ty = str_of(schema, "type");
    if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        errs.push(FieldError::invalid(
            format!("{path}.x-kubernetes-preserve-unknown-fields"),
            false,
            "must be true or undefined",
        ));
    }
    if let Some(map_type) = schema.get("x-kubernetes-map-type").and_then(Value::as_str) {
        if ty != "object" {
            errs.push(type_must_be(
                path,
                ty,
                "object",
                "x-kubernetes-map-type is specified",
            ));
        }
        if map_type != "atomic" && map_type != "granular" {
            errs.push(FieldError::not_supported(
                format!("{path}.x-kubernetes-map-type"),
                map_type,
                &["atomic", "granular"],
            ));
        }
    }
    let list_type = schema.get("x-kubernetes-list-type").and_then(Value::as_str);
    let items = schema.get("items").filter(|i| i.is_object());
    if let Some(list_type) = list_type {
        if ty != "array" {
            errs.push(type_must_be(
                path,
                ty,
                "array",
                "x-kubernetes-list-type is specified",
            ));
        } else if list_type == "set"
            && let Some(items) = items
        {
            errs.extend(set_items_atomic(items, path));
        }
        if !matches!(list_type, "atomic" | "set" | "map") {
            errs.push(FieldError::not_supported(
                format!("{path}.x-kubernetes-list-type"),
                list_type,
                &["atomic", "set", "map"],
            ));
        }
    }
    let keys: Vec<&str> = schema
        .get("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .map(|k| k.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if !keys.is_empty() {
        match list_type {
            None => errs.push(FieldError::required(
                format!("{path}.x-kubernetes-list-type"),
                "must be map if x-kubernetes-list-map-keys is non-empty",
            )),
            Some("map") => {}
            Some(other) => errs.push(FieldError::invalid(
                format!("{path}.x-kubernetes-list-type"),
                other,
                "must be map if x-kubernetes-list-map-keys is non-empty",
            )),
        }
    }
    if list_type == Some("map") {
        errs.extend(list_map(schema, path, &keys));
    }
    if matches!(list_type, Some("set" | "map"))
        && let Some(items) = items
    {
        errs.extend(list_items_not_nullable(
            items,
            path,
            list_type.unwrap_or(""),
            &keys,
        ));
    }
    errs
}

fn type_must_be(path: &str, ty: &str, want: &str, when: &str) -> FieldError {
    let detail = format!("must be {want} if {when}");
    if ty.is_empty() {
        FieldError::required(format!("{path}.type"), detail)
    } else {
        FieldError::invalid(format!("{path}.type"), ty, detail)
    }
}

/// The items of a `set` list must be atomic.
fn set_items_atomic(items: &Value, path: &str) -> Vec<FieldError> {
    let msg = "must be atomic as item of a list with x-kubernetes-list-type=set";
    match str_of(items, "type") {
        "array" => match items.get("x-kubernetes-list-type").and_then(Value::as_str) {
            Some(t) if t != "atomic" => vec![FieldError::invalid(
                format!("{path}.items.x-kubernetes-list-type"),
                t,
                msg,
            )],
            _ => Vec::new(),
        },
        "object" => match items.get("x-kubernetes-map-type").and_then(Value::as_str) {
            Some("atomic") => Vec::new(),
            other => vec![FieldError::invalid(
                format!("{path}.items.x-kubernetes-map-type"),
                other.map_or(Value::Null, Value::from),
                msg,
            )],
        },
        _ => Vec::new(),
    }
}

/// A `map` list: keys given, items an object whose key properties are scalars.
fn list_map(schema: &Value, path: &str, keys: &[&str]) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if keys.is_empty() {
        errs.push(FieldError::required(
            format!("{path}.x-kubernetes-list-map-keys"),
            "must not be empty if x-kubernetes-list-type is map",
        ));
    }
    match schema.get("items").filter(|i| !i.is_null()) {
        None => errs.push(FieldError::required(
            format!("{path}.items"),
            "must have a schema if x-kubernetes-list-type is map",
        )),
        Some(items @ Value::Array(_)) => errs.push(FieldError::invalid(
            format!("{path}.items"),
            items.clone(),
            "must only have a single schema if x-kubernetes-list-type is map",
        )),
        Some(items) if str_of(items, "type") != "object" => errs.push(FieldError::invalid(
            format!("{path}.items.type"),
            str_of(items, "type"),
            "must be object if parent array's x-kubernetes-list-type is map",
        )),
        Some(items) => {
            let all: Value = keys.to_vec().into();
            let mut seen = std::collections::HashSet::new();
            for key in keys {
                match items.pointer(&format!(
                    "/properties/{}",
                    key.replace('~', "~0").replace('/', "~1")
                )) {
                    Some(p) if matches!(str_of(p, "type"), "array" | "object") => {
                        errs.push(FieldError::invalid(
                            format!("{path}.items.properties[{key}].type"),
                            "object",
                            "must be a scalar type if parent array's x-kubernetes-list-type is map",
                        ));
                    }
                    Some(_) => {}
                    None => errs.push(FieldError::invalid(
                        format!("{path}.x-kubernetes-list-map-keys"),
                        all.clone(),
                        "entries must all be names of item properties",
                    )),
                }
                if !seen.insert(*key) {
                    errs.push(FieldError::invalid(
                        format!("{path}.x-kubernetes-list-map-keys"),
                        all.clone(),
                        "must not contain duplicate entries",
                    ));
                }
            }
        }
    }
    errs
}

/// Kubernetes' `validateMapListKeysMapSet`: items of `set` and `map` lists are not nullable,
/// and a map list's keys are required or defaulted, and not nullable.
fn list_items_not_nullable(
    items: &Value,
    path: &str,
    list_type: &str,
    keys: &[&str],
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if bool_of(items, "nullable") {
        errs.push(FieldError::forbidden(
            format!("{path}.items.nullable"),
            format!("cannot be nullable when x-kubernetes-list-type is {list_type}"),
        ));
    }
    if list_type != "map" {
        return errs;
    }
    let required: Vec<&str> = items
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for key in keys {
        let Some(property) = items.get("properties").and_then(|p| p.get(*key)) else {
            continue;
        };
        if !required.contains(key) && property.get("default").is_none_or(Value::is_null) {
            errs.push(FieldError::required(
                format!("{path}.items.properties[{key}].default"),
                "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
            ));
        }
        if bool_of(property, "nullable") {
            errs.push(FieldError::forbidden(
                format!("{path}.items.properties[{key}].nullable"),
                "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
            ));
        }
    }
    errs
}
