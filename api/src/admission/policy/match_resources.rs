//! A policy's `matchConstraints` or a binding's `matchResources`, compiled once: the
//! resource rules, the excluded ones, the namespace and object selectors and the match
//! policy (Kubernetes' policy matcher over [`crate::admission::matching`]). Under
//! `matchPolicy: Equivalent` a rule that names another version (or group) of the written
//! resource covers the write too, which is then judged in that version.

use std::sync::Arc;

use serde_json::Value;

use super::resources::Equivalents;
use crate::admission::Attributes;
use crate::admission::matching::Rule;
use crate::admission::matching::Selectors;
use crate::registry::ResourceType;

/// How a write is covered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Matched {
    /// By a rule naming the written resource as it is.
    Exact,
    /// Only by a rule naming an equivalent resource: the write is judged as of this type.
    Equivalent(Box<ResourceType>),
}

/// `MatchResources`.
#[derive(Debug, Clone)]
pub struct MatchResources {
    rules: Vec<Rule>,
    excluded: Vec<Rule>,
    selectors: Selectors,
    /// `matchPolicy: Equivalent` (the v1 default; unset is Exact, as Kubernetes reads it).
    equivalent: bool,
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
            equivalent: holder.get("matchPolicy").and_then(Value::as_str) == Some("Equivalent"),
        }
    }

    /// How the write is covered, if it is: its namespace and object selected, no excluded
    /// rule covering it, and some resource rule covering it (no rules: every resource, as
    /// it is); under Equivalent, rules are tried on the write's `equivalents` after the
    /// write itself.
    pub fn matched(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        namespace: impl FnOnce(&str) -> Option<Arc<Value>>,
        equivalents: &Equivalents<'_>,
    ) -> Option<Matched> {
        if !(self.selectors).matches_namespace(attributes, object, old, namespace)
            || !self.selectors.matches_object(object, old)
            || self
                .covered(&self.excluded, attributes, equivalents)
                .is_some()
        {
            return None;
        }
        match self.rules.is_empty() {
            true => Some(Matched::Exact),
            false => self.covered(&self.rules, attributes, equivalents),
        }
    }

    /// Kubernetes' `matchesResourceRules`: the first of `rules` covering the write as it
    /// is, else (Equivalent) the first covering an equivalent resource, rule by rule.
    fn covered(
        &self,
        rules: &[Rule],
        attributes: &Attributes<'_>,
        equivalents: &Equivalents<'_>,
    ) -> Option<Matched> {
        if rules.iter().any(|r| r.matches(attributes)) {
            return Some(Matched::Exact);
        }
        let plural = &attributes.resource.plural;
        if !self.equivalent || !rules.iter().any(|r| r.names_resource(plural)) {
            return None;
        }
        rules.iter().find_map(|rule| {
            equivalents.get().iter().find_map(|resource| {
                let other = Attributes {
                    resource,
                    ..*attributes
                };
                rule.matches(&other)
                    .then(|| Matched::Equivalent(Box::new(resource.clone())))
            })
        })
    }
}
