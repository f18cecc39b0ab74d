//! A custom resource version's structural schema at run time: what kube-apiserver does to a
//! custom resource between decoding and storage (apiextensions' `pruning`, `defaulting`,
//! `objectmeta`, `listtype` and kube-openapi's value validation with ratcheting), compiled
//! once per CRD generation from the version's `openAPIV3Schema`; and the type server-side
//! apply gives the version's objects ([`ApplyType`]).

mod apply_type;
mod decode_tree;
mod default;
mod embedded;
mod format;
mod list_type;
mod node;
mod numbers;
mod prune;
mod validate;

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

pub use self::apply_type::ApplyType;
pub use self::apply_type::FieldType;

use self::embedded::Embedded;
use self::list_type::ListTypes;
use self::node::Compiler;
use self::node::Id;
use self::node::Node;
use self::prune::Pruner;
use self::validate::Validator;
use crate::schema::Schema;
use crate::validation::FieldError;
use crate::validation::within_budget;

/// One custom resource version's structural schema, compiled once per CRD generation.
#[derive(Debug)]
pub struct StructuralSchema {
    /// The schema's nodes (the root first).
    nodes: Vec<Node>,
    /// The root node.
    root: Id,
    /// The compiled `ObjectMeta`, which `metadata` is coerced to.
    object_meta: Arc<Schema>,
    /// The tree the body decoder follows.
    decode: Arc<Schema>,
}

impl StructuralSchema {
    /// Compiles a CRD version's `openAPIV3Schema` (already accepted by CRD validation; an
    /// Err only for what that validation let through, with a message).
    pub fn compile(open_api_v3_schema: &Value) -> Result<Self, String> {
        let mut compiler = Compiler::default();
        let root = compiler.compile(open_api_v3_schema, 0)?;
        let mut nodes = compiler.nodes;
        let object_meta = crate::schema::of::<ObjectMeta>().map_err(|e| e.to_string())?;
        // Defaults are pruned by their own node, as Kubernetes does before serving.
        for id in 0..nodes.len() {
            let Some(mut default) = nodes.get_mut(id).and_then(|n| n.default.take()) else {
                continue;
            };
            Pruner::new(&nodes, &object_meta).prune_value(&mut default, id);
            if let Some(node) = nodes.get_mut(id) {
                node.default = Some(default);
            }
        }
        let decode = Arc::new(decode_tree::build(&nodes, root, &object_meta));
        Ok(Self {
            nodes,
            root,
            object_meta,
            decode,
        })
    }

    /// The schema `crate::schema::decode` / `decode_partial` follow for a custom resource body:
    /// unknown fields dropped and reported as `Finding::Unknown`, duplicates as
    /// `Finding::Duplicate`, nulls/order kept as sent, no type errors, no zero-filling
    /// (root and embedded `metadata` are decoded as `ObjectMeta`, with its type errors).
    pub fn decode_schema(&self) -> Arc<Schema> {
        self.decode.clone()
    }

    /// Drops the unknown fields of a whole object (after a patch, or one read from storage),
    /// and returns their paths (`spec.foo`) as Kubernetes lists them: the root metadata's
    /// first, then the others sorted, then embedded resources' metadata's sorted.
    pub fn prune(&self, obj: &mut Value) -> Vec<String> {
        Pruner::new(&self.nodes, &self.object_meta).prune_root(obj, self.root)
    }

    /// Fills `default`s and drops nulls of non-nullable fields.
    pub fn apply_defaults(&self, obj: &mut Value) {
        default::drop_nulls(&self.nodes, obj, Some(self.root), 0);
        default::fill(&self.nodes, obj, self.root, 0);
    }

    /// The object's value errors (not root metadata's), ratcheted against `old` on updates.
    pub fn validate(&self, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let validator = Validator { nodes: &self.nodes };
        let mut errs = validator.check(self.root, obj, "", old, 0);
        let embedded = Embedded {
            nodes: &self.nodes,
            object_meta: &self.object_meta,
        };
        errs.extend(embedded.check(self.root, obj, "", 0));
        let lists = ListTypes { nodes: &self.nodes };
        let list_errors = |v: &Value| match v {
            Value::Object(map) => lists.object(self.root, map, "", 0),
            _ => Vec::new(),
        };
        // An old object that already breaks a list type does not hold its update to them.
        if old.is_none_or(|o| list_errors(o).is_empty()) {
            errs.extend(list_errors(obj));
        }
        within_budget(errs)
    }

    /// The value errors of the `status` of a status write (apiextensions' status strategy):
    /// `status` against the schema's `status` property alone, each error under `status` with
    /// the message naming the field from there, as Kubernetes' status validator names it,
    /// ratcheted against `old` (the status before); then its list types, unless `old` already
    /// broke one. None when the schema has no `status` property.
    pub fn validate_status(&self, status: &Value, old: Option<&Value>) -> Vec<FieldError> {
        let Some(&id) = (self.nodes.get(self.root)).and_then(|n| n.properties.get("status")) else {
            return Vec::new();
        };
        let validator = Validator { nodes: &self.nodes };
        let mut errs = validator.check(id, status, "", old, 0);
        let lists = ListTypes { nodes: &self.nodes };
        let list_errors = |v: &Value| match v {
            Value::Object(map) => lists.object(id, map, "", 0),
            _ => Vec::new(),
        };
        if old.is_none_or(|o| list_errors(o).is_empty()) {
            errs.extend(list_errors(status));
        }
        for e in &mut errs {
            e.field = match e.field.as_str() {
                "" => "status".to_owned(),
                f if f.starts_with('[') => format!("status{f}"),
                f => format!("status.{f}"),
            };
        }
        within_budget(errs)
    }
}

#[cfg(test)]
mod tests;
