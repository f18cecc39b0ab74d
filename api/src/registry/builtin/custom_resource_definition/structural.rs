//! Structural schemas (Kubernetes' `ValidateStructural`): every field and array item has a
//! type (or is int-or-string or preserves unknown fields), the root is an object,
//! `metadata` names at most `name` and `generateName`, and the value validations in
//! `allOf`/`anyOf`/`oneOf`/`not` only restrict values of fields specified outside them.
//! Pruning, defaulting and server-side apply of custom resources all read a schema this way.

use serde_json::Map;
use serde_json::Value;

use super::schema::MAX_DEPTH;
use super::view::bool_of;
use super::view::each_of;
use super::view::str_of;
use crate::validation::FieldError;

/// Where a node sits, which words its "type required" message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// The largest compiled program of a `pattern` (bounds the work of compiling one).
const MAX_PATTERN_PROGRAM_BYTES: usize = 1 << 20;

/// Keys whose presence makes a schema impossible to read structurally (Kubernetes'
/// `NewStructural` fails on them; the OpenAPI rules report each one already).
const NOT_CONVERTIBLE: &[&str] = &[
    "id",
    "$schema",
    "$ref",
    "patternProperties",
    "dependencies",
    "additionalItems",
    "definitions",
];

/// Whether a key of a schema is set (present, not null, not false, not empty).
fn is_set(schema: &Value, key: &str) -> bool {
    match schema.get(key) {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
        Some(_) => true,
    }
}

/// Why `schema` cannot be read as a structural schema at all (a keyword that Kubernetes'
/// conversion refuses, anywhere in it), in Kubernetes' words; `None` when it can.
pub fn conversion_problem(schema: &Value) -> Option<String> {
    conversion_problem_at(schema, 0)
}

fn conversion_problem_at(schema: &Value, depth: usize) -> Option<String> {
    let map = schema.as_object()?;
    if depth > MAX_DEPTH {
        return Some(format!(
            "OpenAPIV3Schema is nested more than {MAX_DEPTH} levels deep"
        ));
    }
    if map.get("items").is_some_and(Value::is_array) {
        return Some("OpenAPIV3Schema 'items' must be a schema, but is an array".to_owned());
    }
    if let Some(key) = NOT_CONVERTIBLE.iter().find(|k| is_set(schema, k)) {
        let name = if *key == "$schema" { "schema" } else { key };
        return Some(format!("OpenAPIV3Schema '{name}' is not supported"));
    }
    if map.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        return Some(
            "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
                .to_owned(),
        );
    }
    children(map).find_map(|(_, child)| conversion_problem_at(child, depth + 1))
}

/// Every schema directly under a node, with the path suffix that reaches it.
fn children(map: &Map<String, Value>) -> impl Iterator<Item = (String, &Value)> {
    let properties = map
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| (format!(".properties[{k}]"), v));
    let single = ["items", "additionalProperties", "not"]
        .into_iter()
        .filter_map(|k| {
            map.get(k)
                .filter(|v| v.is_object())
                .map(|v| (format!(".{k}"), v))
        });
    let lists = ["allOf", "anyOf", "oneOf"].into_iter().flat_map(|k| {
        map.get(k)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .map(move |(i, v)| (format!(".{k}[{i}]"), v))
    });
    properties.chain(single).chain(lists)
}

/// The structural problems of a root schema at `path`, sorted as Kubernetes sorts them.
pub fn validate(schema: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = invariants(schema, Level::Root, path, 0);
    errs.extend(completeness(schema, schema, path, path, 0));
    errs.sort_by_key(ToString::to_string);
    errs
}

/// Whether `schema`'s `anyOf` is exactly `[{type: integer}, {type: string}]`, the shape
/// `x-kubernetes-int-or-string` may carry.
fn is_int_or_string_any_of(schema: &Value) -> bool {
    let Some(any_of) = schema.get("anyOf").and_then(Value::as_array) else {
        return false;
    };
    let only_type = |v: &Value, t: &str| {
        v.as_object()
            .is_some_and(|m| m.len() == 1 && m.get("type").and_then(Value::as_str) == Some(t))
    };
    any_of.len() == 2 && only_type(&any_of[0], "integer") && only_type(&any_of[1], "string")
}

fn invariants(s: &Value, level: Level, path: &str, depth: usize) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if depth > MAX_DEPTH || !s.is_object() {
        return errs;
    }
    let ty = str_of(s, "type");
    let items = s.get("items").filter(|i| i.is_object());
    if ty == "array" && items.is_none() {
        errs.push(FieldError::required(
            format!("{path}.items"),
            "must be specified",
        ));
    }
    if let Some(items) = items {
        errs.extend(invariants(
            items,
            Level::Item,
            &format!("{path}.items"),
            depth + 1,
        ));
    }
    let properties = s.get("properties").and_then(Value::as_object);
    for (k, v) in properties.into_iter().flatten() {
        errs.extend(invariants(
            v,
            Level::Field,
            &format!("{path}.properties[{k}]"),
            depth + 1,
        ));
    }
    let additional = s.get("additionalProperties").filter(|a| !a.is_null());
    if let Some(additional) = additional {
        if level == Level::Root {
            errs.push(FieldError::forbidden(
                format!("{path}.additionalProperties"),
                "must not be used at the root",
            ));
        }
        if additional.is_object() {
            errs.extend(invariants(
                additional,
                Level::Field,
                &format!("{path}.additionalProperties"),
                depth + 1,
            ));
        }
    }
    let int_or_string = bool_of(s, "x-kubernetes-int-or-string");
    let preserve = bool_of(s, "x-kubernetes-preserve-unknown-fields");
    let embedded = bool_of(s, "x-kubernetes-embedded-resource");
    if int_or_string && preserve {
        errs.push(FieldError::invalid(
            format!("{path}.x-kubernetes-preserve-unknown-fields"),
            true,
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if int_or_string && embedded {
        errs.push(FieldError::invalid(
            format!("{path}.x-kubernetes-embedded-resource"),
            true,
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    errs.extend(value_validation(
        s,
        is_int_or_string_any_of(s),
        level,
        path,
        depth,
    ));
    if embedded && ty != "object" {
        let detail = "must be object if x-kubernetes-embedded-resource is true";
        errs.push(if ty.is_empty() {
            FieldError::required(format!("{path}.type"), detail)
        } else {
            FieldError::invalid(format!("{path}.type"), ty, detail)
        });
    } else if ty.is_empty() && !int_or_string && !preserve {
        let detail = match level {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errs.push(FieldError::required(format!("{path}.type"), detail));
    }
    if embedded && additional.is_some() {
        errs.push(FieldError::forbidden(
            format!("{path}.additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if level == Level::Root && !ty.is_empty() && ty != "object" {
        errs.push(FieldError::invalid(
            format!("{path}.type"),
            ty,
            "must be object at the root",
        ));
    }
    let check_metadata = level == Level::Root || embedded;
    for key in ["kind", "apiVersion"] {
        if let Some(p) = properties.and_then(|p| p.get(key))
            && check_metadata
            && str_of(p, "type") != "string"
        {
            errs.push(FieldError::invalid(
                format!("{path}.properties[{key}].type"),
                str_of(p, "type"),
                "must be string",
            ));
        }
    }
    if let Some(metadata) = properties.and_then(|p| p.get("metadata")) {
        errs.extend(metadata_invariants(
            metadata,
            check_metadata,
            level,
            &format!("{path}.properties[metadata]"),
        ));
    }
    if embedded && !preserve && properties.is_none_or(Map::is_empty) {
        errs.push(FieldError::required(
            format!("{path}.properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
    errs
}

/// The schema of `metadata`: an object, and at the root nothing but `name` and
/// `generateName` (the rest of the metadata schema is the server's).
fn metadata_invariants(s: &Value, check: bool, level: Level, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if check && str_of(s, "type") != "object" {
        errs.push(FieldError::invalid(
            format!("{path}.type"),
            str_of(s, "type"),
            "must be object",
        ));
    }
    if level != Level::Root {
        return errs;
    }
    let Some(map) = s.as_object() else {
        return errs;
    };
    let only_names = map
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(|p| p.keys().all(|k| k == "name" || k == "generateName"));
    let other = map.iter().any(|(k, v)| {
        !matches!(k.as_str(), "type" | "default" | "properties")
            && !v.is_null()
            && *v != Value::Bool(false)
            && v.as_str() != Some("")
    });
    if !only_names || other {
        errs.push(FieldError::forbidden(
            path,
            "must not specify anything other than name and generateName, but metadata is implicitly specified",
        ));
    }
    errs
}

/// The value validations of a node: each nested schema in `anyOf` (unless it is the
/// int-or-string pattern), `allOf`, `oneOf` and `not`, and a `pattern` that compiles.
fn value_validation(
    s: &Value,
    skip_any_of: bool,
    level: Level,
    path: &str,
    depth: usize,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for key in ["anyOf", "allOf", "oneOf"] {
        if key == "anyOf" && skip_any_of {
            continue;
        }
        for (i, v) in each_of(s, key) {
            let skip = key == "allOf" && i == 0 && is_int_or_string_any_of(v);
            errs.extend(nested(
                v,
                skip,
                level,
                &format!("{path}.{key}[{i}]"),
                depth + 1,
            ));
        }
    }
    if let Some(not) = s.get("not").filter(|n| n.is_object()) {
        errs.extend(nested(not, false, level, &format!("{path}.not"), depth + 1));
    }
    let pattern = str_of(s, "pattern");
    if !pattern.is_empty()
        && let Err(e) = regex::RegexBuilder::new(pattern)
            .size_limit(MAX_PATTERN_PROGRAM_BYTES)
            .build()
    {
        errs.push(FieldError::invalid(
            format!("{path}.pattern"),
            pattern,
            format!("must be a valid regular expression, but isn't: {e}"),
        ));
    }
    errs
}

/// A schema inside a value validation: it may only restrict values, so no types,
/// descriptions, defaults, markers or rules of its own.
fn nested(v: &Value, skip_any_of: bool, level: Level, path: &str, depth: usize) -> Vec<FieldError> {
    if depth > MAX_DEPTH || !v.is_object() {
        return Vec::new();
    }
    let mut errs = value_validation(v, skip_any_of, level, path, depth);
    if let Some(items) = v.get("items").filter(|i| i.is_object()) {
        errs.extend(nested(
            items,
            false,
            level,
            &format!("{path}.items"),
            depth + 1,
        ));
    }
    for (k, p) in v
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        errs.extend(nested(
            p,
            false,
            Level::Field,
            &format!("{path}.properties[{k}]"),
            depth + 1,
        ));
    }
    let forbidden = [
        ("type", "must be empty to be structural"),
        ("additionalProperties", "must be undefined to be structural"),
        ("default", "must be undefined to be structural"),
        ("title", "must be empty to be structural"),
        ("description", "must be empty to be structural"),
        ("nullable", "must be false to be structural"),
        (
            "x-kubernetes-preserve-unknown-fields",
            "must be false to be structural",
        ),
        (
            "x-kubernetes-embedded-resource",
            "must be false to be structural",
        ),
        (
            "x-kubernetes-int-or-string",
            "must be false to be structural",
        ),
        (
            "x-kubernetes-list-map-keys",
            "must be empty to be structural",
        ),
        (
            "x-kubernetes-list-type",
            "must be undefined to be structural",
        ),
        (
            "x-kubernetes-map-type",
            "must be undefined to be structural",
        ),
        ("x-kubernetes-validations", "must be empty to be structural"),
    ];
    for (key, detail) in forbidden {
        let present = match key {
            "additionalProperties"
            | "default"
            | "x-kubernetes-list-type"
            | "x-kubernetes-map-type" => v.get(key).is_some_and(|x| !x.is_null()),
            _ => is_set(v, key),
        };
        if present {
            errs.push(FieldError::forbidden(format!("{path}.{key}"), detail));
        }
    }
    if v.get("properties")
        .and_then(|p| p.get("metadata"))
        .is_some()
    {
        errs.push(FieldError::forbidden(
            format!("{path}.properties[metadata]"),
            "must not be specified in a nested context",
        ));
    }
    errs
}

/// Kubernetes' completeness rule: every field and item a value validation of the root
/// names is also specified by the root's structure.
fn completeness(v: &Value, s: &Value, s_path: &str, v_path: &str, depth: usize) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if depth > MAX_DEPTH {
        return errs;
    }
    if let Some(not) = v.get("not").filter(|n| n.is_object()) {
        errs.extend(nested_completeness(
            not,
            Some(s),
            s_path,
            &format!("{v_path}.not"),
            depth + 1,
        ));
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        for (i, n) in each_of(v, key) {
            errs.extend(nested_completeness(
                n,
                Some(s),
                s_path,
                &format!("{v_path}.{key}[{i}]"),
                depth + 1,
            ));
        }
    }
    errs
}

fn nested_completeness(
    v: &Value,
    s: Option<&Value>,
    s_path: &str,
    v_path: &str,
    depth: usize,
) -> Vec<FieldError> {
    let Some(s) = s else {
        return vec![FieldError::required(
            s_path,
            format!("because it is defined in {v_path}"),
        )];
    };
    let mut errs = completeness(v, s, s_path, v_path, depth);
    if let Some(items) = v.get("items").filter(|i| i.is_object()) {
        errs.extend(nested_completeness(
            items,
            s.get("items").filter(|i| i.is_object()),
            &format!("{s_path}.items"),
            &format!("{v_path}.items"),
            depth + 1,
        ));
    }
    for (k, p) in v
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let s_path = format!("{s_path}.properties[{k}]");
        let v_path = format!("{v_path}.properties[{k}]");
        match s.get("properties").and_then(|sp| sp.get(k)) {
            Some(sp) => errs.extend(nested_completeness(
                p,
                Some(sp),
                &s_path,
                &v_path,
                depth + 1,
            )),
            None => errs.push(FieldError::required(
                s_path,
                format!("because it is defined in {v_path}"),
            )),
        }
    }
    errs
}
