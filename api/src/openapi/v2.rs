//! The Swagger 2.0 document of `/openapi/v2`: every path of the server in one document, with
//! every definition (`#/definitions/...`).

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
        "type": p.ty.name(),
        "uniqueItems": true,
    });
    if p.location == Location::Path {
        v["required"] = true.into();
    }
    v
}

fn operation(op: &Operation) -> Value {
    let spec = Spec::V2;
    let mut v = json!({
        "description": op.description,
        "produces": op.produces,
        "schemes": ["https"],
        "tags": [op.tag],
        "operationId": op.id,
    });
    let mut parameters: Vec<Value> = Vec::new();
    if let Some(body) = &op.body {
        v["consumes"] = body.consumes.into();
        parameters.push(json!({
            "name": "body",
            "in": "body",
            "required": true,
            "schema": spec.reference(&body.schema),
        }));
    }
    parameters.extend(op.params.iter().map(param));
    if !parameters.is_empty() {
        v["parameters"] = parameters.into();
    }
    let mut responses = Map::new();
    for (code, schema) in &op.responses {
        responses.insert(
            code.to_string(),
            json!({"description": status_text(*code), "schema": spec.reference(schema)}),
        );
    }
    finish_operation(&mut v, op, responses);
    v
}

/// The whole document.
pub fn document(info: &Value, items: &[PathItem], mut schemas: Map<String, Value>) -> Value {
    // Swagger 2.0 has no `oneOf` (the JSONSchemaProps-or-something types use it): upstream's
    // v2 describes those types by their description alone, and the protobuf has no field for it.
    for schema in schemas.values_mut() {
        if let Value::Object(schema) = schema {
            schema.remove("oneOf");
        }
    }
    json!({
        "swagger": "2.0",
        "info": info,
        "paths": paths_object(items, param, operation),
        "definitions": schemas,
        "securityDefinitions": {"BearerToken": bearer_token_scheme()},
        "security": [{"BearerToken": []}],
    })
}
