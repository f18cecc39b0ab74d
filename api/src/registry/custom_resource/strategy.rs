//! The steps of a custom resource's writes (apiextensions' `customResourceStrategy` and its
//! `statusStrategy`): with a `status` subresource, a create sets no status and a
//! main-resource update keeps it (the store does that for every kind with `status`); the
//! generation moves when anything outside `metadata` changes; with a `scale` subresource,
//! the replicas at its paths must be integers a Scale can carry; defaults come from the
//! structural schema, and its value validation and then the `x-kubernetes-validations` rules
//! hold (both ratcheted against the object before on updates). A status write is validated
//! as Kubernetes' status strategy does it: its `status` against the schema's `status`
//! alone, the scale's status paths, and the rules (ratcheted), so a spec that a later schema
//! finds invalid never blocks the controller writing the status. Newly added finalizer names
//! without a domain are warned about.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;

use crate::cel::ValidationRules;
use crate::registry::ScalePaths;
use crate::registry::Strategy;
use crate::request::FieldLabels;
use crate::schema::structural::StructuralSchema;
use crate::validation::FieldError;
use crate::validation::FieldErrorKind;

/// The strategy of one served version of a custom kind.
pub(super) struct CustomResourceStrategy {
    /// Whether the version serves the `status` subresource.
    pub status: bool,
    /// The version's `scale` subresource paths, if it serves one.
    pub scale: Option<ScalePaths>,
    /// The version's `selectableFields` (`.spec.color`), for field selectors.
    pub selectable: Arc<[String]>,
    /// The version's structural schema (defaults, value validation).
    pub structural: Option<Arc<StructuralSchema>>,
    /// The version's CEL validation rules, if it has any.
    pub rules: Option<Arc<ValidationRules>>,
    /// The namespace finalizer of the flavor (`kubernetes`), which needs no domain.
    pub namespace_finalizer: &'static str,
}

/// Whether `errs` hold an error that keeps the rules from running: a value of the wrong
/// type, not among the allowed ones, missing, too long or with too many items or properties
/// (apiextensions' `hasBlockingErr`).
fn blocking(errs: &[FieldError]) -> bool {
    errs.iter().any(|e| {
        matches!(
            e.kind,
            FieldErrorKind::TypeInvalid(_)
                | FieldErrorKind::NotSupported { .. }
                | FieldErrorKind::Required
                | FieldErrorKind::TooLong { .. }
                | FieldErrorKind::TooMany { .. }
        )
    })
}

impl CustomResourceStrategy {
    /// `errs` and then the rules' problems of `obj` (`old` on updates, which ratchets them);
    /// the rules do not run on an object `errs` find of the wrong shape.
    fn with_rules(
        &self,
        mut errs: Vec<FieldError>,
        obj: &Value,
        old: Option<&Value>,
    ) -> Vec<FieldError> {
        let Some(rules) = &self.rules else {
            return errs;
        };
        if blocking(&errs) {
            errs.push(FieldError::invalid(
                "<nil>",
                Value::Null,
                "some validation rules were not checked because the object was invalid; \
                 correct the existing errors to complete validation",
            ));
        } else {
            errs.extend(rules.validate(obj, old));
        }
        errs
    }

    /// The problems of a created object or of a main-resource update (`old` on updates,
    /// which ratchets the schema's and the rules' checks): the whole object against the
    /// schema, the scale's paths, then the rules.
    fn object_errors(&self, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut errs = (self.structural.as_ref()).map_or_else(Vec::new, |s| s.validate(obj, old));
        errs.extend(self.scale_errors(obj, true));
        self.with_rules(errs, obj, old)
    }

    /// The problems of a status write from `old` to `new` (apiextensions' status strategy):
    /// the `status` against the schema's `status`, the scale's status paths, then the
    /// rules, all ratcheted against `old`.
    fn status_errors(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = match (&self.structural, new.get("status")) {
            (Some(structural), Some(status)) => {
                structural.validate_status(status, old.get("status"))
            }
            _ => Vec::new(),
        };
        errs.extend(self.scale_errors(new, false));
        self.with_rules(errs, new, Some(old))
    }

    /// The problems of the values at the scale's paths (apiextensions' `ValidateScaleSpec`,
    /// with `spec`, and `ValidateScaleStatus`).
    fn scale_errors(&self, obj: &Value, spec: bool) -> Vec<FieldError> {
        let Some(scale) = &self.scale else {
            return Vec::new();
        };
        let spec_replicas = spec.then_some(&scale.spec_replicas);
        let mut errs: Vec<FieldError> = (spec_replicas.into_iter())
            .chain([&scale.status_replicas])
            .filter_map(|fields| replicas_errors(obj, fields))
            .collect();
        errs.extend(
            (scale.label_selector.as_deref()).and_then(|fields| selector_error(obj, fields)),
        );
        errs
    }
}

/// The name Go gives the type of a decoded JSON value, as apiextensions' messages print it.
fn go_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() || n.is_u64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// A decoded JSON value as Go's `%v` prints a scalar (a string without quotes); lists and
/// objects as JSON.
fn go_value(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The accessor error of `value` at `path` that is not of Go type `expected`.
fn accessor_error(path: &str, value: &Value, expected: &str) -> String {
    format!(
        "{path} accessor error: {} is of the type {}, expected {expected}",
        go_value(value),
        go_type(value)
    )
}

/// The value at `fields` of `obj`: `Ok(None)` when a field on the way is missing or null, the
/// accessor error when one on the way is not an object (apimachinery's
/// `NestedFieldNoCopy`).
fn nested<'a>(obj: &'a Value, fields: &[String]) -> Result<Option<&'a Value>, String> {
    let mut value = obj;
    for (i, field) in fields.iter().enumerate() {
        match value {
            Value::Null => return Ok(None),
            Value::Object(map) => match map.get(field) {
                Some(next) => value = next,
                None => return Ok(None),
            },
            other => {
                let path = format!(".{}", fields.get(..=i).unwrap_or(fields).join("."));
                return Err(accessor_error(&path, other, "map[string]interface{}"));
            }
        }
    }
    Ok(Some(value))
}

/// The problems of the replicas at `fields` (written `.a.b`), if set: an integer from 0 to
/// the largest `int32`, as a Scale carries it (apiextensions' `ValidateScaleSpec`/`Status`).
fn replicas_errors(obj: &Value, fields: &[String]) -> Option<FieldError> {
    let path = format!(".{}", fields.join("."));
    let value = match nested(obj, fields) {
        Ok(value) => value?,
        Err(detail) => return Some(FieldError::invalid(path, 0, detail)),
    };
    let Some(replicas) = value.as_i64() else {
        let detail = accessor_error(&path, value, "int64");
        return Some(FieldError::invalid(path, 0, detail));
    };
    if replicas < 0 {
        return Some(FieldError::invalid(
            path,
            replicas,
            "should be a non-negative integer",
        ));
    }
    (replicas > i64::from(i32::MAX)).then(|| {
        FieldError::invalid(
            path,
            replicas,
            format!("should be less than or equal to {}", i32::MAX),
        )
    })
}

/// The problem of the label selector at `fields`, if set and not a string (apiextensions'
/// `ValidateScaleStatus`).
fn selector_error(obj: &Value, fields: &[String]) -> Option<FieldError> {
    let path = format!(".{}", fields.join("."));
    let value = match nested(obj, fields) {
        Ok(value) => value?,
        Err(detail) => return Some(FieldError::invalid(path, "", detail)),
    };
    if value.is_string() {
        return None;
    }
    let detail = accessor_error(&path, value, "string");
    Some(FieldError::invalid(path, "", detail))
}

/// The garbage collector's finalizers, which need no domain (with the namespace's:
/// Kubernetes' `standardFinalizers` of custom resources).
const GC_FINALIZERS: [&str; 2] = ["orphan", "foregroundDeletion"];

/// Where finalizer warnings point.
const FINALIZERS_PATH: &str = "metadata.finalizers";

/// The warnings of one finalizer name (apiextensions' `validateKubeFinalizerName`): each
/// reason it is not a qualified name, and a preference for a domain (and a path) when it
/// has no `/` and is not a standard finalizer (the garbage collector's, or
/// `namespace_finalizer`).
fn finalizer_name_warnings(name: &str, namespace_finalizer: &str) -> Vec<String> {
    let quoted = Value::from(name).to_string();
    let mut warnings: Vec<String> = (crate::validation::validate_qualified_name(name))
        .into_iter()
        .map(|msg| format!("{FINALIZERS_PATH}: {quoted}: {msg}"))
        .collect();
    if !name.contains('/') && !GC_FINALIZERS.contains(&name) && name != namespace_finalizer {
        let prefer = if name.contains('.') {
            "prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers"
        } else {
            "prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"
        };
        warnings.push(format!("{FINALIZERS_PATH}: {quoted}: {prefer}"));
    }
    warnings
}

/// The warnings of the finalizers `new` has and `old` (`None` on create) had not, each
/// name once, in name order (apiextensions' `generateWarningsFromObj`).
fn finalizer_warnings(new: &Value, old: Option<&Value>, namespace_finalizer: &str) -> Vec<String> {
    let names = |obj: &Value| -> BTreeSet<String> {
        (obj.pointer("/metadata/finalizers")
            .and_then(Value::as_array))
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
    };
    let before = old.map(names).unwrap_or_default();
    let mut warnings = Vec::new();
    for name in names(new).difference(&before) {
        warnings.extend(finalizer_name_warnings(name, namespace_finalizer));
    }
    warnings
}

impl Strategy for CustomResourceStrategy {
    fn field_labels(&self) -> FieldLabels {
        FieldLabels::Custom(self.selectable.clone())
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if self.status
            && let Value::Object(m) = obj
        {
            m.remove("status");
        }
    }

    fn apply_schema(&self) -> Option<&StructuralSchema> {
        self.structural.as_deref()
    }

    fn default_fields(&self, obj: &mut Value) {
        if let Some(structural) = &self.structural {
            structural.apply_defaults(obj);
        }
    }

    fn validate_create(&self, obj: &Value) -> Vec<FieldError> {
        self.object_errors(obj, None)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        self.object_errors(new, Some(old))
    }

    fn validate_status_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        self.status_errors(new, old)
    }

    fn status_validated_alone(&self) -> bool {
        true
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        finalizer_warnings(obj, None, self.namespace_finalizer)
    }

    fn warnings_on_update(&self, new: &Value, old: &Value) -> Vec<String> {
        finalizer_warnings(new, Some(old), self.namespace_finalizer)
    }
}

#[cfg(test)]
#[path = "strategy_tests.rs"]
mod tests;
