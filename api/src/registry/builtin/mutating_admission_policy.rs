//! MutatingAdmissionPolicy and MutatingAdmissionPolicyBinding (`admissionregistration/v1`):
//! Kubernetes' v1 defaults and `ValidateMutatingAdmissionPolicy` /
//! `ValidateMutatingAdmissionPolicyBinding` with their field paths and messages: what every
//! policy has ([`super::admission_policy`]), the operations a mutation may match (no
//! DELETE), the mutations (each expression compiled with the patch types), the
//! reinvocation policy.

use serde_json::Value;

use super::admission_policy::FULL;
use super::admission_policy::compiled_mutation;
use super::admission_policy::default_binding;
use super::admission_policy::default_policy;
use super::admission_policy::items;
use super::admission_policy::validate_binding_common;
use super::admission_policy::validate_operations;
use super::admission_policy::validate_policy_common;
use crate::registry::Strategy;
use crate::validation::FieldError;

/// The operations a MutatingAdmissionPolicy or its binding may match.
const MUTATING_OPERATIONS: &[&str] = &["*", "CONNECT", "CREATE", "UPDATE"];
/// `reinvocationPolicy` values.
const REINVOCATION_POLICIES: &[&str] = &["IfNeeded", "Never"];
/// `patchType` values.
const PATCH_TYPES: &[&str] = &["ApplyConfiguration", "JSONPatch"];

/// The strategy of MutatingAdmissionPolicy.
pub struct MutatingAdmissionPolicyStrategy;

impl Strategy for MutatingAdmissionPolicyStrategy {
    fn default_fields(&self, obj: &mut Value) {
        default_policy(obj);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let spec = obj.get("spec").unwrap_or(&Value::Null);
        let (mut errs, params) = validate_policy_common(spec, Some(MUTATING_OPERATIONS));
        let mutations = items(spec, "mutations");
        if mutations.is_empty() {
            errs.push(FieldError::required(
                "spec.mutations",
                "mutations must contain at least one item",
            ));
        }
        for (i, mutation) in mutations.iter().enumerate() {
            errs.extend(validate_mutation(
                mutation,
                &format!("spec.mutations[{i}]"),
                params,
            ));
        }
        match spec.get("reinvocationPolicy").and_then(Value::as_str) {
            None | Some("") => errs.push(FieldError::required("spec.reinvocationPolicy", "")),
            Some(p) if !REINVOCATION_POLICIES.contains(&p) => errs.push(FieldError::not_supported(
                "spec.reinvocationPolicy",
                p,
                REINVOCATION_POLICIES,
            )),
            Some(_) => {}
        }
        errs
    }
}

/// `validateMutation` at `path`: the patch type's own member set and compiling, the other
/// one absent.
fn validate_mutation(mutation: &Value, path: &str, params: bool) -> Vec<FieldError> {
    let patch_type = mutation
        .get("patchType")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let (own, other) = match patch_type {
        "" => return vec![FieldError::required(format!("{path}.patchType"), "")],
        "JSONPatch" => ("jsonPatch", "applyConfiguration"),
        "ApplyConfiguration" => ("applyConfiguration", "jsonPatch"),
        other => {
            return vec![FieldError::not_supported(
                format!("{path}.patchType"),
                other,
                PATCH_TYPES,
            )];
        }
    };
    let mut errs = Vec::new();
    match mutation.get(own).filter(|m| m.is_object()) {
        None => errs.push(FieldError::required(
            format!("{path}.{own}"),
            format!("must be specified when patchType is {patch_type}"),
        )),
        Some(member) => {
            let at = format!("{path}.{own}.expression");
            let expression = member
                .get("expression")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .trim();
            if expression.is_empty() {
                errs.push(FieldError::required(at, ""));
            } else {
                errs.extend(compiled_mutation(expression, &at, FULL, params));
            }
        }
    }
    if mutation.get(other).is_some_and(Value::is_object) {
        errs.push(FieldError::invalid(
            format!("{path}.{other}"),
            format!("{{{other}}}"),
            format!("must not be specified when patchType is {patch_type}"),
        ));
    }
    errs
}

/// The strategy of MutatingAdmissionPolicyBinding.
pub struct MutatingAdmissionPolicyBindingStrategy;

impl Strategy for MutatingAdmissionPolicyBindingStrategy {
    fn default_fields(&self, obj: &mut Value) {
        default_binding(obj);
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let spec = obj.get("spec").unwrap_or(&Value::Null);
        let mut errs = validate_binding_common(spec);
        if let Some(m) = spec.get("matchResources").filter(|m| m.is_object()) {
            errs.extend(validate_operations(
                m,
                MUTATING_OPERATIONS,
                "spec.matchResources.resourceRules.operations",
            ));
        }
        errs
    }
}
