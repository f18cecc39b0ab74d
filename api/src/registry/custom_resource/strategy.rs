//! The steps of a custom resource's writes (apiextensions' `customResourceStrategy`): with a
//! `status` subresource, a create sets no status and a main-resource update keeps it (the
//! store does that for every kind with `status`); the generation moves when anything
//! outside `metadata` changes; with a `scale` subresource, the replicas at its paths must be
//! integers a Scale can carry; defaults come from the structural schema, and its value
//! validation and then the `x-kubernetes-validations` rules hold (both ratcheted against the
//! object before on updates).

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
}

/// Whether `errs` hold an error that keeps the rules from running: a value of the wrong type
/// or not among the allowed ones (apiextensions' `hasBlockingErr`).
fn blocking(errs: &[FieldError]) -> bool {
    errs.iter().any(|e| {
        matches!(
            e.kind,
            FieldErrorKind::TypeInvalid(_) | FieldErrorKind::NotSupported { .. }
        )
    })
}

impl CustomResourceStrategy {
    /// The schema's and then the rules' problems of `obj` (`old` on updates, which ratchets
    /// both); the rules do not run on an object the schema finds of the wrong shape.
    fn schema_errors(&self, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let mut errs = (self.structural.as_ref()).map_or_else(Vec::new, |s| s.validate(obj, old));
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

/// The problems of the replicas at `fields` (written `.a.b`), if set: an integer from 0 to
/// the largest `int32`, as a Scale carries it (apiextensions' `ValidateScaleSpec`/`Status`).
fn replicas_errors(obj: &Value, fields: &[String]) -> Option<FieldError> {
    let value = fields.iter().try_fold(obj, |v, f| v.get(f))?;
    let path = format!(".{}", fields.join("."));
    let Some(replicas) = value.as_i64() else {
        let detail = format!(
            "{path} accessor error: {value} is of the type {}, expected int64",
            go_type(value)
        );
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
        self.schema_errors(obj, None)
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        self.schema_errors(new, Some(old))
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let Some(scale) = &self.scale else {
            return Vec::new();
        };
        [&scale.spec_replicas, &scale.status_replicas]
            .into_iter()
            .filter_map(|fields| replicas_errors(obj, fields))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    // apiextensions' scale checks: a negative, oversized or non-integer replica count at the
    // definition's paths is refused with its path; missing counts are fine.
    #[test]
    fn replicas_at_the_scale_paths_must_fit_a_scale() {
        let strategy = CustomResourceStrategy {
            status: true,
            scale: Some(ScalePaths::new(".spec.replicas", ".status.replicas", None)),
            selectable: Arc::new([]),
            structural: None,
            rules: None,
        };
        let errs = |obj: Value| -> Vec<String> {
            strategy
                .validate(&obj)
                .iter()
                .map(ToString::to_string)
                .collect()
        };
        assert!(errs(json!({"spec": {}})).is_empty());
        assert_eq!(
            errs(json!({"spec": {"replicas": -1}})),
            [".spec.replicas: Invalid value: -1: should be a non-negative integer"]
        );
        assert_eq!(
            errs(json!({"status": {"replicas": 2147483648_i64}})),
            [
                ".status.replicas: Invalid value: 2147483648: should be less than or equal to 2147483647"
            ]
        );
        assert_eq!(
            errs(json!({"spec": {"replicas": "3"}})),
            [
                ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: \"3\" is of the type string, expected int64"
            ]
        );
    }
}
