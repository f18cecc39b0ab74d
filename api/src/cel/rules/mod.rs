//! `x-kubernetes-validations` of a custom resource version (Kubernetes' CEL validator,
//! apiextensions-apiserver `schema/cel`): every rule of the version's structural schema,
//! compiled once per CRD generation into a tree of schema nodes ([`shape::Node`]), then
//! evaluated on each object: at every node the data has, for each element of lists and maps,
//! with `self` the node's value in Kubernetes' CEL types ([`shape`], names escaped per
//! [`escape`]) and `oldSelf` the correlated old value (same property path; map-lists by their
//! keys) on updates. Transition rules run only where an old value correlates, unless
//! `optionalOldSelf` makes `oldSelf` an optional. Each evaluation is metered
//! ([`crate::cel::meter`]): a rule over [`PER_CALL_LIMIT`] halts with Kubernetes' error, and
//! all rules of one object share [`RUNTIME_COST_BUDGET`]. Rules without `oldSelf` whose value
//! did not change on an update do not fail it (validation ratcheting).

mod escape;
mod list_types;
mod rule;
mod shape;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

pub use escape::escape;
pub(crate) use list_types::CONCAT_FUNCTION;
pub(crate) use list_types::EQUAL_FUNCTION;
pub(crate) use list_types::concatenate;
pub(crate) use list_types::equal;
use rule::Input;
use rule::Outcome;
use rule::RULE_VARIABLES;
use rule::Reason;
use rule::Rule;
use shape::Node;
use shape::kind_of;

use crate::cel::Program;
use crate::validation::FieldError;

/// The most cost one rule's evaluation may spend (Kubernetes' `PerCallLimit`).
pub const PER_CALL_LIMIT: u64 = crate::cel::authorizer::PER_CALL_LIMIT;
/// The most cost all rules of one object's validation may spend together (Kubernetes'
/// `RuntimeCELCostBudget`).
pub const RUNTIME_COST_BUDGET: i64 = 10_000_000;
/// The deepest schema nesting compiled (CRD validation refuses deeper schemas).
const MAX_DEPTH: usize = 64;

/// Every `x-kubernetes-validations` rule of one custom resource version's schema, compiled once
/// per CRD generation.
#[derive(Debug)]
pub struct ValidationRules {
    root: Option<Arc<Node>>,
}

impl ValidationRules {
    /// Compiles all rules of a CRD version's `openAPIV3Schema` (already accepted by CRD
    /// validation; an Err only for what it let through).
    pub fn compile(open_api_v3_schema: &Value) -> Result<Self, String> {
        let root = build(open_api_v3_schema, true, 0)?;
        Ok(Self {
            root: root.has_rules.then(|| Arc::new(root)),
        })
    }

    /// Whether the schema has no rules (the store then skips evaluation entirely).
    pub fn is_empty(&self) -> bool {
        self.root.is_none()
    }

    /// The rule failures of `obj` (after defaulting), with `old` on updates; bounded by the
    /// cost budgets.
    pub fn validate(&self, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
        self.validate_with_budget(obj, old, RUNTIME_COST_BUDGET)
    }

    /// [`Self::validate`] with a total budget of `budget`.
    pub fn validate_with_budget(
        &self,
        obj: &Value,
        old: Option<&Value>,
        budget: i64,
    ) -> Vec<FieldError> {
        let Some(root) = &self.root else {
            return Vec::new();
        };
        let mut walk = Walk {
            errs: Vec::new(),
            remaining: budget,
            stopped: false,
        };
        walk.node(root, String::new(), obj, old, false);
        walk.errs
    }
}

/// The compiled tree of `schema` (`resource_root`: the root of a resource or an embedded
/// one).
fn build(schema: &Value, resource_root: bool, depth: usize) -> Result<Node, String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "schema is nested more than {MAX_DEPTH} levels deep"
        ));
    }
    let child = |s: &Value| {
        let embedded = s
            .get("x-kubernetes-embedded-resource")
            .and_then(Value::as_bool);
        build(s, embedded == Some(true), depth + 1).map(Arc::new)
    };
    let mut properties = Vec::new();
    for (name, property) in schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        properties.push((name.clone(), escape(name), child(property)?));
    }
    let additional = match schema.get("additionalProperties") {
        Some(a @ Value::Object(_)) => Some(child(a)?),
        _ => None,
    };
    let items = match schema.get("items") {
        Some(i @ Value::Object(_)) => Some(child(i)?),
        _ => None,
    };
    let map_keys = (schema.get("x-kubernetes-list-type").and_then(Value::as_str) == Some("map"))
        .then(|| {
            schema
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .map(|keys| {
                    keys.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default()
        });
    let correlatable = matches!(
        schema.get("x-kubernetes-map-type").and_then(Value::as_str),
        None | Some("granular" | "atomic")
    );
    let rules = compile_rules(schema);
    let has_rules = !rules.is_empty()
        || properties.iter().any(|(_, _, n)| n.has_rules)
        || additional.as_ref().is_some_and(|n| n.has_rules)
        || items.as_ref().is_some_and(|n| n.has_rules);
    let mut node = Node {
        kind: kind_of(schema),
        type_name: schema
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        resource_root,
        properties,
        additional,
        items,
        map_keys,
        correlatable,
        rules: Vec::new(),
        has_rules,
    };
    node.rules = rules
        .into_iter()
        .map(|(rule, field_path)| Rule {
            field_path: field_path.and_then(|p| normalize_field_path(&node, &p)),
            ..rule
        })
        .collect();
    Ok(node)
}

/// The rules of one schema node, each with its raw `fieldPath`.
fn compile_rules(schema: &Value) -> Vec<(Rule, Option<String>)> {
    let text = |rule: &Value, key: &str| {
        rule.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .trim()
            .to_owned()
    };
    let mut rules = Vec::new();
    for rule in schema
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let source = text(rule, "rule");
        if source.is_empty() {
            continue;
        }
        let mut shapes = Vec::new();
        let program = Program::compile(&source, RULE_VARIABLES)
            .map(|p| {
                p.rewritten(|expr| {
                    let (rewritten, found) = list_types::rewrite(expr, schema);
                    shapes = found;
                    rewritten
                })
            })
            .map_err(|e| e.to_string());
        let uses_old_self = program.as_ref().is_ok_and(|p| p.references("oldSelf"));
        let message_expression = Some(text(rule, "messageExpression"))
            .filter(|m| !m.is_empty())
            .and_then(|m| Program::compile(&m, RULE_VARIABLES).ok());
        let reason = match rule.get("reason").and_then(Value::as_str) {
            Some("FieldValueForbidden") => Reason::Forbidden,
            Some("FieldValueRequired") => Reason::Required,
            Some("FieldValueDuplicate") => Reason::Duplicate,
            _ => Reason::Invalid,
        };
        let field_path = Some(text(rule, "fieldPath")).filter(|p| !p.is_empty());
        rules.push((
            Rule {
                text: source,
                program,
                message: text(rule, "message"),
                message_expression,
                reason,
                field_path: None,
                uses_old_self,
                list_shapes: (!shapes.is_empty())
                    .then(|| cel::Value::Opaque(Arc::new(list_types::Shapes(shapes)))),
                optional_old_self: rule.get("optionalOldSelf").and_then(Value::as_bool)
                    == Some(true),
            },
            field_path,
        ));
    }
    rules
}

/// A rule's `fieldPath` (`.spec.x`, `.labels['a.b']`, `.items[0]`) as a field path relative
/// to `node` (`spec.x`, `labels[a.b]`, `items[0]`); `None` if it does not resolve.
fn normalize_field_path(node: &Node, path: &str) -> Option<String> {
    let mut out = String::new();
    let mut at = node;
    let mut rest = path;
    let mut steps = 0;
    while !rest.is_empty() {
        steps += 1;
        if steps > MAX_DEPTH {
            return None;
        }
        if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[']).unwrap_or(r.len());
            let name = r.get(..end)?;
            rest = r.get(end..)?;
            at = step(at, name, &mut out)?;
        } else if let Some(r) = rest.strip_prefix("['") {
            let (name, after) = quoted(r)?;
            rest = after;
            at = step(at, &name, &mut out)?;
        } else if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            let index: usize = r.get(..end)?.parse().ok()?;
            rest = r.get(end + 1..)?;
            at = at.items.as_deref()?;
            out.push_str(&format!("[{index}]"));
        } else {
            return None;
        }
    }
    Some(out)
}

/// One named step of a field path: a property (`.name`) or a map key (`[name]`).
fn step<'a>(at: &'a Node, name: &str, out: &mut String) -> Option<&'a Node> {
    if let Some((_, _, node)) = at.properties.iter().find(|(n, _, _)| n == name) {
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(name);
        return Some(node);
    }
    let node = at.additional.as_deref()?;
    out.push_str(&format!("[{name}]"));
    Some(node)
}

/// The name inside `['...']` (with `\'` and `\\` escapes) and what follows the `']`.
fn quoted(s: &str) -> Option<(String, &str)> {
    let mut name = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => name.push(chars.next()?.1),
            '\'' => return Some((name, s.get(i + 1..)?.strip_prefix(']')?)),
            c => name.push(c),
        }
    }
    None
}

/// The evaluation of one object: the errors found and the budget left.
struct Walk {
    errs: Vec<FieldError>,
    remaining: i64,
    stopped: bool,
}

impl Walk {
    /// Evaluates the rules of `node` on `value` (with the correlated `old`), then of its
    /// children; `unchanged`: an ancestor's value did not change.
    fn node(
        &mut self,
        node: &Node,
        path: String,
        value: &Value,
        old: Option<&Value>,
        unchanged: bool,
    ) {
        if self.stopped || value.is_null() {
            return;
        }
        let old = old.filter(|o| !o.is_null());
        let unchanged = unchanged || old == Some(value);
        if !node.rules.is_empty() {
            self.rules(node, &path, value, old, unchanged);
        }
        if self.stopped {
            return;
        }
        match value {
            Value::Object(fields) => {
                for (key, child_value) in fields {
                    let known = node.properties.iter().find(|(n, _, _)| n == key);
                    let (child, child_path) = match known {
                        Some((_, _, child)) => (child, join(&path, key)),
                        None => match &node.additional {
                            Some(child) => (child, format!("{path}[{key}]")),
                            None => continue,
                        },
                    };
                    if !child.has_rules {
                        continue;
                    }
                    let child_old = old.filter(|_| node.correlatable).and_then(|o| o.get(key));
                    self.node(child, child_path, child_value, child_old, unchanged);
                    if self.stopped {
                        return;
                    }
                }
            }
            Value::Array(items) => {
                let Some(child) = node.items.as_deref().filter(|c| c.has_rules) else {
                    return;
                };
                let old_items = old_by_keys(node, old);
                for (i, item) in items.iter().enumerate() {
                    let item_old = old_items
                        .as_ref()
                        .and_then(|m| m.get(&key_of(node, item)?).copied());
                    self.node(child, format!("{path}[{i}]"), item, item_old, unchanged);
                    if self.stopped {
                        return;
                    }
                }
            }
            _ => {}
        }
    }

    fn rules(
        &mut self,
        node: &Node,
        path: &str,
        value: &Value,
        old: Option<&Value>,
        unchanged: bool,
    ) {
        if self.remaining <= 0 {
            self.errs.push(FieldError::invalid(
                rule::shown(path),
                node.type_name.clone(),
                rule::OUT_OF_BUDGET,
            ));
            self.stopped = true;
            return;
        }
        let this = node.to_cel(value);
        let old_cel = old.map(|o| node.to_cel(o));
        let input = Input {
            path,
            type_name: &node.type_name,
            value,
            this: &this,
            old: old_cel.as_ref(),
        };
        for rule in &node.rules {
            if rule.uses_old_self && old.is_none() && !rule.optional_old_self {
                continue;
            }
            match rule.evaluate(&input, PER_CALL_LIMIT, &mut self.remaining) {
                Outcome::Passed => {}
                Outcome::Failed(_) if unchanged && !rule.uses_old_self => {}
                Outcome::Failed(e) => self.errs.push(e),
                Outcome::Stop(e) => {
                    self.errs.push(e);
                    self.stopped = true;
                    return;
                }
            }
        }
    }
}

/// `path.name` (`name` at the root).
fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

/// The items of the old list by their map keys, when the list is a map-list.
fn old_by_keys<'a>(node: &Node, old: Option<&'a Value>) -> Option<HashMap<String, &'a Value>> {
    node.map_keys.as_ref()?;
    let items = old?.as_array()?;
    Some(
        items
            .iter()
            .filter_map(|item| Some((key_of(node, item)?, item)))
            .collect(),
    )
}

/// The map keys of one map-list item, rendered as one string.
fn key_of(node: &Node, item: &Value) -> Option<String> {
    let keys = node.map_keys.as_ref()?;
    let values: Vec<&Value> = keys
        .iter()
        .map(|k| item.get(k).unwrap_or(&Value::Null))
        .collect();
    serde_json::to_string(&values).ok()
}
