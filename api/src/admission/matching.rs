//! Which writes an admission webhook or policy applies to: Kubernetes' rules
//! (`RuleWithOperations`, `NamedRuleWithOperations`), scopes, and the namespace and object
//! label selectors, compiled once from a configuration and matched per write.

use serde_json::Map;
use serde_json::Value;

use super::Attributes;
use super::Operation;
use crate::labels::LabelSelector;
use crate::validation::label_selector;

/// The `scope` of a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleScope {
    /// `*` (the default): every object.
    All,
    /// `Cluster`: cluster-scoped objects, Namespaces included.
    Cluster,
    /// `Namespaced`: namespaced objects.
    Namespaced,
}

/// One rule: operations, API groups, versions, resources (`res`, `res/sub`, `*`, `*/*`,
/// `res/*`, `*/sub`), a scope and, for policies, resource names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    operations: Vec<String>,
    groups: Vec<String>,
    versions: Vec<String>,
    /// (resource, subresource) pairs; an entry without `/` has an empty subresource.
    resources: Vec<(String, String)>,
    /// `resourceNames` (empty: any name).
    names: Vec<String>,
    scope: RuleScope,
}

fn strings(rule: &Value, field: &str) -> Vec<String> {
    (rule
        .get(field)
        .and_then(Value::as_array)
        .into_iter()
        .flatten())
    .filter_map(Value::as_str)
    .map(str::to_owned)
    .collect()
}

fn any_or(list: &[String], value: &str) -> bool {
    list.iter().any(|v| v == "*" || v == value)
}

impl Rule {
    /// The rule of a (validated) configuration's `rules[i]` or `resourceRules[i]`.
    pub fn from_value(rule: &Value) -> Self {
        let resources = strings(rule, "resources")
            .into_iter()
            .map(|r| match r.split_once('/') {
                Some((res, sub)) => (res.to_owned(), sub.to_owned()),
                None => (r, String::new()),
            })
            .collect();
        let scope = match rule.get("scope").and_then(Value::as_str) {
            Some("Cluster") => RuleScope::Cluster,
            Some("Namespaced") => RuleScope::Namespaced,
            _ => RuleScope::All,
        };
        Self {
            operations: strings(rule, "operations"),
            groups: strings(rule, "apiGroups"),
            versions: strings(rule, "apiVersions"),
            resources,
            names: strings(rule, "resourceNames"),
            scope,
        }
    }

    /// Whether the rule covers the write `attributes` describes (its operation, group,
    /// version, resource and subresource, scope and, when the rule names some, name).
    pub fn matches(&self, attributes: &Attributes<'_>) -> bool {
        let resource = attributes.resource;
        self.matches_operation(attributes.operation)
            && any_or(&self.groups, &resource.group)
            && any_or(&self.versions, &resource.version)
            && self.matches_resource(&resource.plural, attributes.subresource)
            && self.matches_scope(attributes)
            && (self.names.is_empty() || self.names.iter().any(|n| n == attributes.name))
    }

    /// Whether the rule's resources name `plural` (or any resource), whatever the
    /// subresource: a cheap test before equivalent resources are looked up.
    pub fn names_resource(&self, plural: &str) -> bool {
        self.resources
            .iter()
            .any(|(res, _)| res == "*" || res == plural)
    }

    fn matches_operation(&self, operation: Operation) -> bool {
        any_or(&self.operations, operation.as_str())
    }

    /// Kubernetes' resource match: `res` and `sub` each `*` or equal (`pods/*` also covers
    /// `pods` itself; `*` covers no subresource).
    fn matches_resource(&self, resource: &str, subresource: &str) -> bool {
        self.resources
            .iter()
            .any(|(res, sub)| (res == "*" || res == resource) && (sub == "*" || sub == subresource))
    }

    /// A Namespace is cluster-scoped; everything else by whether the write names a namespace.
    fn matches_scope(&self, attributes: &Attributes<'_>) -> bool {
        let namespace_object = is_namespace(attributes);
        match self.scope {
            RuleScope::All => true,
            RuleScope::Cluster => namespace_object || attributes.namespace.is_empty(),
            RuleScope::Namespaced => !namespace_object && !attributes.namespace.is_empty(),
        }
    }
}

/// Whether the write is of a Namespace object itself.
fn is_namespace(attributes: &Attributes<'_>) -> bool {
    let resource = attributes.resource;
    resource.group.is_empty() && resource.plural == "namespaces"
}

/// A compiled `metav1.LabelSelector`: `None` selects everything (empty or absent), a
/// malformed one nothing.
#[derive(Debug, Clone)]
pub struct Selector(Option<Option<LabelSelector>>);

impl Selector {
    /// The selector of a (validated) configuration's field; absent or empty selects all.
    pub fn from_value(selector: Option<&Value>) -> Self {
        match selector {
            None | Some(Value::Null) => Self(None),
            Some(s) if label_selector::is_empty(s) => Self(None),
            Some(s) => Self(Some(label_selector::compile(s))),
        }
    }

    /// Whether it selects everything.
    pub fn is_everything(&self) -> bool {
        self.0.is_none()
    }

    /// Whether it selects an object with `labels`.
    pub fn matches(&self, labels: &Map<String, Value>) -> bool {
        match &self.0 {
            None => true,
            Some(None) => false,
            Some(Some(s)) => s.matches_labels(labels),
        }
    }
}

fn labels(obj: Option<&Value>) -> Option<&Map<String, Value>> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    let obj = obj?;
    Some(
        match obj.pointer("/metadata/labels").and_then(Value::as_object) {
            Some(labels) => labels,
            None => EMPTY.get_or_init(Map::new),
        },
    )
}

/// A configuration's `namespaceSelector` and `objectSelector`.
#[derive(Debug, Clone)]
pub struct Selectors {
    /// `namespaceSelector`.
    pub namespace: Selector,
    /// `objectSelector`.
    pub object: Selector,
}

impl Selectors {
    /// The selectors of a webhook or of a policy's match resources.
    pub fn from_value(holder: &Value) -> Self {
        Self {
            namespace: Selector::from_value(holder.get("namespaceSelector")),
            object: Selector::from_value(holder.get("objectSelector")),
        }
    }

    /// Kubernetes' object selector match: the new object's labels or the old one's.
    pub fn matches_object(&self, object: Option<&Value>, old: Option<&Value>) -> bool {
        if self.object.is_everything() {
            return true;
        }
        [object, old]
            .into_iter()
            .any(|o| labels(o).is_some_and(|l| self.object.matches(l)))
    }

    /// Kubernetes' namespace selector match. A cluster-scoped write other than of a
    /// Namespace is always covered; a Namespace is judged by its own labels (the new object,
    /// or the old one on a delete); anything else by its namespace's labels, which `namespace`
    /// looks up (`None`: the namespace is not known here, and the selector matches only if it
    /// selects everything).
    pub fn matches_namespace(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        namespace: impl FnOnce(&str) -> Option<std::sync::Arc<Value>>,
    ) -> bool {
        if self.namespace.is_everything() {
            return true;
        }
        if is_namespace(attributes) {
            return labels(object.or(old)).is_some_and(|l| self.namespace.matches(l));
        }
        if attributes.namespace.is_empty() {
            return true;
        }
        namespace(attributes.namespace)
            .is_some_and(|ns| labels(Some(&ns)).is_some_and(|l| self.namespace.matches(l)))
    }
}

#[cfg(test)]
#[path = "matching_test.rs"]
mod matching_test;
