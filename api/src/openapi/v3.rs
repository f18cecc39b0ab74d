//! OpenAPI 3.0 documents: one per group version (and per group, `/api`, `/apis`, `/version`),
//! each with its paths and the closure of the schemas they reference, and the index
//! `/openapi/v3` that points at each with its hash.

use std::collections::BTreeMap;

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::components::Spec;
use super::params::Location;
use super::params::Param;
use super::paths::Operation;
use super::paths::PathItem;
use super::render::bearer_token_scheme;
use super::render::finish_operation;
use super::render::paths_object;
use super::render::status_text;

fn param(p: &Param) -> Value {
    let mut v = json!({
        "name": p.name,
        "in": if p.location == Location::Path { "path" } else { "query" },
        "description": p.description,
        "schema": {"type": p.ty.name(), "uniqueItems": true},
    });
    if p.location == Location::Path {
        v["required"] = true.into();
    }
    v
}

fn operation(op: &Operation) -> Value {
    let spec = Spec::V3;
    let mut v = json!({
        "tags": [op.tag],
        "description": op.description,
        "operationId": op.id,
    });
    if !op.params.is_empty() {
        v["parameters"] = op.params.iter().map(param).collect();
    }
    if let Some(body) = &op.body {
        let content: Map<String, Value> = body
            .consumes
            .iter()
            .map(|t| {
                (
                    (*t).to_owned(),
                    json!({"schema": spec.reference(&body.schema)}),
                )
            })
            .collect();
        v["requestBody"] = json!({"content": content, "required": true});
    }
    let mut responses = Map::new();
    for (code, schema) in &op.responses {
        let content: Map<String, Value> = op
            .produces
            .iter()
            .map(|t| ((*t).to_owned(), json!({"schema": spec.reference(schema)})))
            .collect();
        responses.insert(
            code.to_string(),
            json!({"description": status_text(*code), "content": content}),
        );
    }
    finish_operation(&mut v, op, responses);
    v
}

/// The names of every definition `value` references with `prefix`.
fn references<'a>(value: &'a Value, prefix: &str, out: &mut Vec<&'a str>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                match (key.as_str(), v) {
                    ("$ref", Value::String(r)) => {
                        if let Some(name) = r.strip_prefix(prefix) {
                            out.push(name);
                        }
                    }
                    _ => references(v, prefix, out),
                }
            }
        }
        Value::Array(items) => {
            for v in items {
                references(v, prefix, out);
            }
        }
        _ => {}
    }
}

/// The definitions `roots` reference, directly or through other definitions.
fn closure(roots: &Value, schemas: &Map<String, Value>, spec: Spec) -> Map<String, Value> {
    let mut pending = Vec::new();
    references(roots, spec.ref_prefix(), &mut pending);
    let mut found: BTreeMap<&str, &Value> = BTreeMap::new();
    while let Some(name) = pending.pop() {
        if found.contains_key(name) {
            continue;
        }
        if let Some((key, schema)) = schemas.get_key_value(name) {
            found.insert(key, schema);
            references(schema, spec.ref_prefix(), &mut pending);
        }
    }
    found
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.clone()))
        .collect()
}

/// The document of one group version (or group, or root), with `info`.
pub fn document(info: &Value, items: &[PathItem], schemas: &Map<String, Value>) -> Value {
    let paths = paths_object(items, param, operation);
    let components = closure(&paths, schemas, Spec::V3);
    json!({
        "openapi": "3.0.0",
        "info": info,
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"BearerToken": bearer_token_scheme()},
        },
        "security": [{"BearerToken": []}],
    })
}

/// The `/openapi/v3` index: each document key (`apis/apps/v1`) with its URL, which carries
/// the document's hash (upper-case hex SHA-512, unquoted).
pub fn index<'a>(hashes: impl Iterator<Item = (&'a str, &'a str)>) -> Value {
    let paths: Map<String, Value> = hashes
        .map(|(key, hash)| {
            (
                key.to_owned(),
                json!({"serverRelativeURL": format!("/openapi/v3/{key}?hash={hash}")}),
            )
        })
        .collect();
    json!({"paths": paths})
}
