//! The body of a MutatingAdmissionPolicy: its mutations, each compiled in the environment
//! with the patch types, and its reinvocation policy.

use serde_json::Value;

use crate::admission::policy::definition::CompiledPolicy;
use crate::admission::policy::definition::Expression;
use crate::admission::policy::definition::PolicyBody;
use crate::admission::policy::definition::entries;
use crate::admission::policy::definition::text;

/// A MutatingAdmissionPolicy ready to evaluate.
pub type MutatingPolicy = CompiledPolicy<Mutations>;

/// How a mutation's result changes the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// An `Object{...}` merged with server-side apply's merge.
    ApplyConfiguration,
    /// A list of `JSONPatch{...}` operations.
    JsonPatch,
}

/// One `spec.mutations[]` entry.
#[derive(Debug)]
pub struct Mutation {
    /// `patchType`.
    pub patch_type: PatchType,
    /// `applyConfiguration.expression` or `jsonPatch.expression`.
    pub expression: Expression,
}

/// `spec.mutations` and `spec.reinvocationPolicy`.
#[derive(Debug)]
pub struct Mutations {
    /// The mutations, in order (one without its patch type's expression is left out: the
    /// policy's validation refuses it).
    pub mutations: Vec<Mutation>,
    /// `reinvocationPolicy: IfNeeded`.
    pub reinvoke_if_needed: bool,
}

impl PolicyBody for Mutations {
    fn compile(spec: &Value, full: &[&str], _plain: &[&str]) -> Self {
        let mutations = entries(spec, "mutations")
            .filter_map(|m| {
                let (patch_type, field) = match text(m, "patchType") {
                    "ApplyConfiguration" => (PatchType::ApplyConfiguration, "applyConfiguration"),
                    "JSONPatch" => (PatchType::JsonPatch, "jsonPatch"),
                    _ => return None,
                };
                let source = text(m.get(field)?, "expression");
                Some(Mutation {
                    patch_type,
                    expression: Expression::compile_mutation(source, full),
                })
            })
            .collect();
        Self {
            mutations,
            reinvoke_if_needed: text(spec, "reinvocationPolicy") == "IfNeeded",
        }
    }
}
