//! A policy's `matchConstraints` or a binding's `matchResources`, compiled once: the
//! resource rules, the excluded ones and the namespace and object selectors (Kubernetes'
//! policy matcher over [`crate::admission::matching`]).

use std::sync::Arc;

use serde_json::Value;

use crate::admission::Attributes;
use crate::admission::matching::Rule;
use crate::admission::matching::Selectors;

/// `MatchResources`.
#[derive(Debug, Clone)]
pub struct MatchResources {
    rules: Vec<Rule>,
    excluded: Vec<Rule>,
    selectors: Selectors,
}

fn rules(holder: &Value, field: &str) -> Vec<Rule> {
    (holder.get(field).and_then(Value::as_array))
        .into_iter()
        .flatten()
        .map(Rule::from_value)
        .collect()
}

impl MatchResources {
    /// The compiled `holder` (`null`: everything).
    pub fn compile(holder: &Value) -> Self {
        Self {
            rules: rules(holder, "resourceRules"),
            excluded: rules(holder, "excludeResourceRules"),
            selectors: Selectors::from_value(holder),
        }
    }

    /// Whether the write is covered: its namespace and object selected, no excluded rule
    /// covering it, and some resource rule covering it (no rules: every resource).
    pub fn matches(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        namespace: impl FnOnce(&str) -> Option<Arc<Value>>,
    ) -> bool {
        self.selectors
            .matches_namespace(attributes, object, old, namespace)
            && self.selectors.matches_object(object, old)
            && !self.excluded.iter().any(|r| r.matches(attributes))
            && (self.rules.is_empty() || self.rules.iter().any(|r| r.matches(attributes)))
    }
}
