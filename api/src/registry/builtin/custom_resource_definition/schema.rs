//! A CRD version's `openAPIV3Schema`, node by node (Kubernetes'
//! `ValidateCustomResourceDefinitionOpenAPISchema` and its OpenAPI v3 rules): keywords
//! custom resources do not support, `uniqueItems`, `additionalProperties` beside
//! `properties`, defaults where pruning makes them ambiguous, the `x-kubernetes-*` markers
//! ([`super::markers`]) and `x-kubernetes-validations` rules ([`super::rules`]).

use serde_json::Value;

use super::markers::markers;
use super::rules::compile_validation_rules;
use super::rules::estimated_costs;
use super::rules::validation_rules;
use super::structural;
use super::view::bool_of;
use super::view::each_of;
use super::view::str_of;
use crate::validation::FieldError;

/// The OpenAPI v3 types a property may have.
const OPENAPI_TYPES: &[&str] = &["array", "boolean", "integer", "number", "object", "string"];
/// The schema keys allowed at the root when the status subresource is enabled, with the Go
/// field names Kubernetes' message lists.
const ROOT_WITH_STATUS: &[(&str, &str)] = &[
    ("description", "Description"),
    ("type", "Type"),
    ("format", "Format"),
    ("title", "Title"),
    ("maximum", "Maximum"),
    ("exclusiveMaximum", "ExclusiveMaximum"),
    ("minimum", "Minimum"),
    ("exclusiveMinimum", "ExclusiveMinimum"),
    ("maxLength", "MaxLength"),
    ("minLength", "MinLength"),
    ("pattern", "Pattern"),
    ("maxItems", "MaxItems"),
    ("minItems", "MinItems"),
    ("uniqueItems", "UniqueItems"),
    ("multipleOf", "MultipleOf"),
    ("required", "Required"),
    ("items", "Items"),
    ("properties", "Properties"),
    ("externalDocs", "ExternalDocs"),
    ("example", "Example"),
    (
        "x-kubernetes-preserve-unknown-fields",
        "XPreserveUnknownFields",
    ),
    ("x-kubernetes-validations", "XValidations"),
];
/// The deepest schema nesting walked; deeper schemas are refused (a budget for the walk).
pub const MAX_DEPTH: usize = 64;

/// What a node's ancestors decide for it.
#[derive(Debug, Clone, Default)]
pub(super) struct Context {
    /// Why defaults are forbidden here (`None`: allowed).
    pub no_defaults: Option<String>,
    /// Inside the schema of `metadata`, `kind` or `apiVersion` of a resource.
    pub inside_meta: bool,
    /// The first ancestor whose values cannot be correlated between two versions of an
    /// object (so `oldSelf` means nothing below it).
    pub uncorrelatable: Option<String>,
}

/// Whether `key: value` counts as set: a non-zero field of Kubernetes' Go type, where plain
/// booleans and strings are zero when false or empty and pointers whenever present.
fn set(key: &str, value: &Value) -> bool {
    const PLAIN_BOOLS: &[&str] = &[
        "nullable",
        "uniqueItems",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
    ];
    match value {
        Value::Null => false,
        Value::Bool(false) => !PLAIN_BOOLS.contains(&key),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

/// The problems of one `schema.openAPIV3Schema` (Kubernetes'
/// `validateCustomResourceDefinitionValidation`); `path` names the `schema` (or internal
/// `validation`) field.
pub fn validate_validation(
    validation: &Value,
    status_enabled: bool,
    path: &str,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(schema) = validation.get("openAPIV3Schema").filter(|s| !s.is_null()) else {
        return errs;
    };
    let root = format!("{path}.openAPIV3Schema");
    if status_enabled {
        errs.extend(root_with_status(schema, &root));
    }
    if bool_of(schema, "nullable") {
        errs.push(FieldError::forbidden(
            format!("{root}.nullable"),
            "nullable cannot be true at the root",
        ));
    }
    let problem = structural::conversion_problem(schema);
    let structural_errs = match problem {
        None => structural::validate(schema, &root),
        Some(_) => Vec::new(),
    };
    let compile_rules = problem.is_none() && structural_errs.is_empty();
    errs.extend(structural_errs);
    errs.extend(validate_node(
        schema,
        &root,
        &Context::default(),
        true,
        compile_rules,
        0,
    ));
    if compile_rules {
        errs.extend(estimated_costs(schema, &root));
    }
    if let Some(problem) = problem
        && errs.is_empty()
    {
        errs.push(FieldError::invalid(root, "", problem));
    }
    errs
}

/// Kubernetes' root rule when the status subresource is on: type `object` and only the
/// keys of [`ROOT_WITH_STATUS`].
fn root_with_status(schema: &Value, root: &str) -> Vec<FieldError> {
    let Some(map) = schema.as_object() else {
        return Vec::new();
    };
    for (key, value) in map {
        if !set(key, value) {
            continue;
        }
        if key == "type" {
            if value.as_str() != Some("object") {
                return vec![FieldError::invalid(
                    format!("{root}.type"),
                    value.clone(),
                    "only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled",
                )];
            }
            continue;
        }
        if !ROOT_WITH_STATUS.iter().any(|(k, _)| k == key) {
            let names: Vec<&str> = ROOT_WITH_STATUS.iter().map(|(_, go)| *go).collect();
            return vec![FieldError::invalid(
                root,
                schema.clone(),
                format!(
                    "only [{}] fields are allowed at the root of the schema if the status subresource is enabled",
                    names.join(" ")
                ),
            )];
        }
    }
    Vec::new()
}

/// One schema node and everything under it. `compile_rules`: the schema is structural, so
/// validation rules are compiled (Kubernetes skips CEL for schemas that are not).
fn validate_node(
    schema: &Value,
    path: &str,
    ctx: &Context,
    is_root: bool,
    compile_rules: bool,
    depth: usize,
) -> Vec<FieldError> {
    if depth > MAX_DEPTH {
        return vec![FieldError::forbidden(
            path,
            format!("must not be nested more than {MAX_DEPTH} levels deep"),
        )];
    }
    let Some(map) = schema.as_object() else {
        return Vec::new();
    };
    let mut errs = openapi_v3(schema, path, ctx);
    if bool_of(schema, "uniqueItems") {
        errs.push(FieldError::forbidden(
            format!("{path}.uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    let properties = map.get("properties").and_then(Value::as_object);
    let has_properties = properties.is_some_and(|p| !p.is_empty());
    if let Some(additional) = map.get("additionalProperties").filter(|a| !a.is_null()) {
        if has_properties && additional != &Value::Bool(true) {
            errs.push(FieldError::forbidden(
                format!("{path}.additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        if additional.is_object() {
            let mut sub = ctx.clone();
            if ctx.inside_meta {
                sub.no_defaults =
                    Some("inside additionalProperties applying to object metadata".to_owned());
            }
            errs.extend(validate_node(
                additional,
                &format!("{path}.additionalProperties"),
                &sub,
                false,
                compile_rules,
                depth + 1,
            ));
        }
    }
    let map_type = map.get("x-kubernetes-map-type").and_then(Value::as_str);
    let embedded = bool_of(schema, "x-kubernetes-embedded-resource");
    for (name, property) in properties.into_iter().flatten() {
        let mut sub = ctx.clone();
        if !matches!(map_type, None | Some("granular" | "atomic")) && sub.uncorrelatable.is_none() {
            sub.uncorrelatable = Some(path.to_owned());
        }
        if (is_root || embedded) && matches!(name.as_str(), "metadata" | "kind" | "apiVersion") {
            sub.inside_meta = true;
            if is_root {
                sub.no_defaults = Some(format!("in top-level {name}"));
            }
        }
        errs.extend(validate_node(
            property,
            &format!("{path}.properties[{name}]"),
            &sub,
            false,
            compile_rules,
            depth + 1,
        ));
    }
    if let Some(not) = map.get("not").filter(|n| n.is_object()) {
        errs.extend(validate_node(
            not,
            &format!("{path}.not"),
            ctx,
            false,
            false,
            depth + 1,
        ));
    }
    for key in ["allOf", "oneOf", "anyOf"] {
        for (i, sub) in each_of(schema, key) {
            errs.extend(validate_node(
                sub,
                &format!("{path}.{key}[{i}]"),
                ctx,
                false,
                false,
                depth + 1,
            ));
        }
    }
    for key in ["definitions", "dependencies"] {
        for (name, sub) in map
            .get(key)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            errs.extend(validate_node(
                sub,
                &format!("{path}.{key}[{name}]"),
                ctx,
                false,
                false,
                depth + 1,
            ));
        }
    }
    let list_type = map.get("x-kubernetes-list-type").and_then(Value::as_str);
    if let Some(items) = map.get("items").filter(|i| !i.is_null()) {
        let mut sub = ctx.clone();
        if list_type != Some("map") && sub.uncorrelatable.is_none() {
            sub.uncorrelatable = Some(path.to_owned());
        }
        match items {
            Value::Array(list) => {
                for (i, item) in list.iter().enumerate() {
                    errs.extend(validate_node(
                        item,
                        &format!("{path}.items[{i}]"),
                        &sub,
                        false,
                        compile_rules,
                        depth + 1,
                    ));
                }
            }
            item => errs.extend(validate_node(
                item,
                &format!("{path}.items"),
                &sub,
                false,
                compile_rules,
                depth + 1,
            )),
        }
    }
    errs.extend(markers(schema, path));
    let rule_errs = validation_rules(schema, path);
    let schema_ok = errs.is_empty() && rule_errs.is_empty();
    errs.extend(rule_errs);
    if schema_ok && compile_rules {
        errs.extend(compile_validation_rules(schema, path, ctx));
    }
    errs
}

/// Kubernetes' `specStandardValidatorV3.validate`: what OpenAPI v3 allows that custom
/// resources do not.
fn openapi_v3(schema: &Value, path: &str, ctx: &Context) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let ty = str_of(schema, "type");
    if !ty.is_empty() && !OPENAPI_TYPES.contains(&ty) {
        errs.push(FieldError::not_supported(
            format!("{path}.type"),
            ty,
            OPENAPI_TYPES,
        ));
    }
    if schema.get("default").is_some_and(|d| !d.is_null())
        && let Some(reason) = &ctx.no_defaults
    {
        errs.push(FieldError::forbidden(
            format!("{path}.default"),
            format!("must not be set {reason}"),
        ));
    }
    if !str_of(schema, "id").is_empty() {
        errs.push(FieldError::forbidden(
            format!("{path}.id"),
            "id is not supported",
        ));
    }
    let unsupported = [
        ("additionalItems", "additionalItems is not supported"),
        ("patternProperties", "patternProperties is not supported"),
        ("definitions", "definitions is not supported"),
        ("dependencies", "dependencies is not supported"),
        ("$ref", "$ref is not supported"),
    ];
    for (key, msg) in unsupported {
        let present = match schema.get(key) {
            None | Some(Value::Null) => false,
            Some(Value::Object(m)) => !m.is_empty() || key == "additionalItems",
            Some(Value::String(s)) => !s.is_empty(),
            Some(_) => true,
        };
        if present {
            errs.push(FieldError::forbidden(format!("{path}.{key}"), msg));
        }
    }
    if ty == "null" {
        errs.push(FieldError::forbidden(
            format!("{path}.type"),
            "type cannot be set to null, use nullable as an alternative",
        ));
    }
    if schema.get("items").is_some_and(Value::is_array) {
        errs.push(FieldError::forbidden(
            format!("{path}.items"),
            "items must be a schema object and not an array",
        ));
    }
    if ctx.inside_meta && bool_of(schema, "x-kubernetes-embedded-resource") {
        errs.push(FieldError::forbidden(
            format!("{path}.x-kubernetes-embedded-resource"),
            "must not be used inside of resource meta",
        ));
    }
    errs
}
