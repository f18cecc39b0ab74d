//! Field paths into a CRD schema (`.spec.replicas`, `.spec['x-y']`, `.items[0]`), as
//! validation rules' `fieldPath` and selectable fields name them: resolved against the
//! schema's properties, so a path to a field the schema does not have is refused.

use serde_json::Value;

use crate::validation::FieldError;

/// The most selectable fields a version may have.
const MAX_SELECTABLE_FIELDS: usize = 8;
/// The longest path resolved, in bytes.
const MAX_PATH_BYTES: usize = 4 * 1024;

/// A path resolved against a schema: its field names, and the schema of the field.
struct Resolved<'a> {
    fields: Vec<String>,
    schema: &'a Value,
}

/// The schema of the property `name` of `schema` (or of its `additionalProperties`).
fn child<'a>(schema: &'a Value, name: &str) -> Option<&'a Value> {
    schema
        .get("properties")
        .and_then(|p| p.get(name))
        .or_else(|| schema.get("additionalProperties").filter(|a| a.is_object()))
}

/// Resolves `path` in `schema`; `allow_index` admits `[n]` steps into arrays.
fn resolve<'a>(schema: &'a Value, path: &str, allow_index: bool) -> Result<Resolved<'a>, String> {
    if path.len() > MAX_PATH_BYTES {
        return Err(format!("must be at most {MAX_PATH_BYTES} bytes"));
    }
    let mut fields = Vec::new();
    let mut at = schema;
    let mut rest = path;
    if rest.is_empty() {
        return Err("must not be empty".to_owned());
    }
    while !rest.is_empty() {
        let name;
        if let Some(after) = rest.strip_prefix("['") {
            let end = after
                .find("']")
                .ok_or_else(|| format!("expected a quoted name closed by '] in {path}"))?;
            name = &after[..end];
            rest = &after[end + 2..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after
                .find(']')
                .ok_or_else(|| format!("unclosed [ in {path}"))?;
            if !allow_index || after[..end].parse::<usize>().is_err() {
                return Err("does not refer to a valid field".to_owned());
            }
            at = at
                .get("items")
                .filter(|i| i.is_object())
                .ok_or("does not refer to a valid field")?;
            rest = &after[end + 1..];
            continue;
        } else if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            name = &after[..end];
            rest = &after[end..];
        } else {
            return Err(format!("expected [ or . but got {rest}"));
        }
        if name.is_empty() {
            return Err("does not refer to a valid field".to_owned());
        }
        at = child(at, name).ok_or("does not refer to a valid field")?;
        fields.push(name.to_owned());
    }
    Ok(Resolved { fields, schema: at })
}

/// Whether `path` names a field of `schema` (a validation rule's `fieldPath`).
pub fn field_path_valid(schema: &Value, path: &str, allow_index: bool) -> bool {
    resolve(schema, path, allow_index).is_ok()
}

/// Kubernetes' `ValidateCustomResourceSelectableFields`: each selectable field is a path to
/// a string, boolean or integer field outside `metadata`, unique, at most eight of them.
pub fn validate_selectable_fields(fields: &[Value], schema: &Value, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let mut unique = std::collections::HashSet::new();
    for (i, field) in fields.iter().enumerate() {
        let at = format!("{path}[{i}].jsonPath");
        let json_path = field.get("jsonPath").and_then(Value::as_str).unwrap_or("");
        if json_path.is_empty() {
            errs.push(FieldError::required(at, ""));
            continue;
        }
        let resolved = match resolve(schema, json_path, false) {
            Ok(r) => r,
            Err(e) => {
                errs.push(FieldError::invalid(
                    at,
                    json_path,
                    format!("is an invalid path: {e}"),
                ));
                continue;
            }
        };
        if resolved.fields.first().is_some_and(|f| f == "metadata") {
            errs.push(FieldError::invalid(
                &at,
                json_path,
                "must not point to fields in metadata",
            ));
        }
        let ty = resolved
            .schema
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !matches!(ty, "string" | "boolean" | "integer") {
            errs.push(FieldError::invalid(
                &at,
                json_path,
                "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
            ));
        }
        if !unique.insert(resolved.fields.join(".")) {
            errs.push(FieldError::duplicate(&at, json_path));
        }
    }
    if unique.len() > MAX_SELECTABLE_FIELDS {
        errs.push(FieldError::too_many(
            path,
            unique.len(),
            MAX_SELECTABLE_FIELDS,
        ));
    }
    errs
}
