//! Our Swagger 2.0 JSON document into the gnostic messages, the way gnostic's
//! `ParseDocument` reads upstream's JSON: maps become repeated named entries in document
//! order, `x-` keys become vendor extensions, a single `type` or `items` becomes a list of one.
//! It reads only the keys our documents carry; a test decodes the result back and compares it
//! with the JSON, so a key added there and not here fails that test.

use serde_json::Map;
use serde_json::Value;

use super::AdditionalPropertiesItem;
use super::Any;
use super::ApiKeySecurity;
use super::BodyParameter;
use super::Definitions;
use super::Document;
use super::Info;
use super::ItemsItem;
use super::NamedAny;
use super::NamedPathItem;
use super::NamedResponseValue;
use super::NamedSchema;
use super::NamedSecurityDefinitionsItem;
use super::NamedStringArray;
use super::NonBodyParameter;
use super::Operation;
use super::Parameter;
use super::ParametersItem;
use super::PathItem;
use super::PathParameterSubSchema;
use super::Paths;
use super::Properties;
use super::QueryParameterSubSchema;
use super::Response;
use super::ResponseValue;
use super::Responses;
use super::Schema;
use super::SchemaItem;
use super::SecurityDefinitions;
use super::SecurityDefinitionsItem;
use super::SecurityRequirement;
use super::StringArray;
use super::TypeItem;
use super::additional_properties_item;
use super::non_body_parameter;
use super::parameter;

/// The messages of the v2 JSON document `doc`.
pub fn document(doc: &Value) -> Document {
    Document {
        swagger: text(doc, "swagger"),
        info: doc.get("info").map(|info| Info {
            title: text(info, "title"),
            version: text(info, "version"),
        }),
        paths: doc.get("paths").map(|paths| Paths {
            path: entries(paths)
                .map(|(name, item)| NamedPathItem {
                    name: name.clone(),
                    value: Some(path_item(item)),
                })
                .collect(),
        }),
        definitions: doc.get("definitions").map(|defs| Definitions {
            additional_properties: named_schemas(defs),
        }),
        security: list(doc, "security")
            .map(|requirement| SecurityRequirement {
                additional_properties: entries(requirement)
                    .map(|(name, scopes)| NamedStringArray {
                        name: name.clone(),
                        value: Some(StringArray {
                            value: strings(scopes),
                        }),
                    })
                    .collect(),
            })
            .collect(),
        security_definitions: doc
            .get("securityDefinitions")
            .map(|defs| SecurityDefinitions {
                additional_properties: entries(defs)
                    .map(|(name, def)| NamedSecurityDefinitionsItem {
                        name: name.clone(),
                        value: Some(SecurityDefinitionsItem {
                            api_key_security: Some(ApiKeySecurity {
                                r#type: text(def, "type"),
                                name: text(def, "name"),
                                r#in: text(def, "in"),
                                description: text(def, "description"),
                            }),
                        }),
                    })
                    .collect(),
            }),
    }
}

fn path_item(item: &Value) -> PathItem {
    let op = |method: &str| item.get(method).map(operation);
    PathItem {
        get: op("get"),
        put: op("put"),
        post: op("post"),
        delete: op("delete"),
        options: op("options"),
        head: op("head"),
        patch: op("patch"),
        parameters: list(item, "parameters").map(parameter).collect(),
    }
}

fn operation(op: &Value) -> Operation {
    Operation {
        tags: strings(&op["tags"]),
        description: text(op, "description"),
        operation_id: text(op, "operationId"),
        produces: strings(&op["produces"]),
        consumes: strings(&op["consumes"]),
        parameters: list(op, "parameters").map(parameter).collect(),
        responses: op.get("responses").map(|responses| Responses {
            response_code: entries(responses)
                .map(|(code, response)| NamedResponseValue {
                    name: code.clone(),
                    value: Some(ResponseValue {
                        response: Some(Response {
                            description: text(response, "description"),
                            schema: response.get("schema").map(|s| SchemaItem {
                                schema: Some(schema(s)),
                            }),
                        }),
                    }),
                })
                .collect(),
        }),
        schemes: strings(&op["schemes"]),
        vendor_extension: extensions(op),
    }
}

fn parameter(p: &Value) -> ParametersItem {
    let required = p["required"].as_bool().unwrap_or_default();
    let unique_items = p["uniqueItems"].as_bool().unwrap_or_default();
    let oneof = match p["in"].as_str() {
        Some("body") => parameter::Oneof::BodyParameter(BodyParameter {
            description: text(p, "description"),
            name: text(p, "name"),
            r#in: text(p, "in"),
            required,
            schema: p.get("schema").map(schema),
        }),
        Some("path") => non_body(non_body_parameter::Oneof::PathParameterSubSchema(
            PathParameterSubSchema {
                required,
                r#in: text(p, "in"),
                description: text(p, "description"),
                name: text(p, "name"),
                r#type: text(p, "type"),
                unique_items,
            },
        )),
        _ => non_body(non_body_parameter::Oneof::QueryParameterSubSchema(
            QueryParameterSubSchema {
                required,
                r#in: text(p, "in"),
                description: text(p, "description"),
                name: text(p, "name"),
                r#type: text(p, "type"),
                unique_items,
            },
        )),
    };
    ParametersItem {
        parameter: Some(Parameter { oneof: Some(oneof) }),
    }
}

fn non_body(oneof: non_body_parameter::Oneof) -> parameter::Oneof {
    parameter::Oneof::NonBodyParameter(NonBodyParameter { oneof: Some(oneof) })
}

fn schema(s: &Value) -> Schema {
    Schema {
        _ref: text(s, "$ref"),
        format: text(s, "format"),
        description: text(s, "description"),
        required: strings(&s["required"]),
        additional_properties: s.get("additionalProperties").map(|extra| {
            Box::new(AdditionalPropertiesItem {
                oneof: Some(match extra {
                    Value::Bool(allowed) => additional_properties_item::Oneof::Boolean(*allowed),
                    other => additional_properties_item::Oneof::Schema(Box::new(schema(other))),
                }),
            })
        }),
        r#type: s.get("type").map(|ty| TypeItem {
            value: match ty {
                Value::String(one) => vec![one.clone()],
                many => strings(many),
            },
        }),
        items: s.get("items").map(|items| ItemsItem {
            schema: match items {
                Value::Array(many) => many.iter().map(schema).collect(),
                one => vec![schema(one)],
            },
        }),
        properties: s.get("properties").map(|props| Properties {
            additional_properties: named_schemas(props),
        }),
        vendor_extension: extensions(s),
    }
}

fn named_schemas(map: &Value) -> Vec<NamedSchema> {
    entries(map)
        .map(|(name, s)| NamedSchema {
            name: name.clone(),
            value: Some(schema(s)),
        })
        .collect()
}

/// The `x-` keys of `v`, each value as YAML text: compact JSON, which YAML (a superset)
/// reads as the same value, as kube-openapi does when it reads the extensions back.
fn extensions(v: &Value) -> Vec<NamedAny> {
    entries(v)
        .filter(|(name, _)| name.starts_with("x-"))
        .map(|(name, value)| NamedAny {
            name: name.clone(),
            value: Some(Any {
                yaml: value.to_string(),
            }),
        })
        .collect()
}

fn entries(v: &Value) -> impl Iterator<Item = (&String, &Value)> {
    v.as_object().into_iter().flat_map(Map::iter)
}

fn list<'a>(v: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    v.get(key).and_then(Value::as_array).into_iter().flatten()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

fn text(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}
