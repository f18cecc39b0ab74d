//! A quota's scopes: `spec.scopes` and `spec.scopeSelector.matchExpressions` as one list of
//! scope selectors (Kubernetes' `ScopedResourceSelectorRequirement`), and how a selector's
//! operator judges the one value a scope gives an object.

use std::fmt;

use serde_json::Value;

/// The most scope selectors read from one quota or configuration entry.
const MAX_SELECTORS: usize = 64;
/// The most values read from one selector.
const MAX_VALUES: usize = 256;

/// One scope selector: a scope, an operator and its values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeSelector {
    /// `Terminating`, `NotTerminating`, `BestEffort`, `NotBestEffort`, `PriorityClass`,
    /// `CrossNamespacePodAffinity`, `VolumeAttributesClass`.
    pub scope: String,
    /// `In`, `NotIn`, `Exists` or `DoesNotExist`.
    pub operator: String,
    /// The values of `In` and `NotIn`.
    pub values: Vec<String>,
}

impl ScopeSelector {
    /// The selector written at `value` (`scopeName`, `operator`, `values`).
    pub fn from_json(value: &Value) -> Self {
        let text = |field: &str| {
            value
                .get(field)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        Self {
            scope: text("scopeName"),
            operator: text("operator"),
            values: (value
                .get("values")
                .and_then(Value::as_array)
                .into_iter()
                .flatten())
            .take(MAX_VALUES)
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        }
    }

    /// The selectors written at `value` (a JSON array).
    pub fn list(value: Option<&Value>) -> Vec<Self> {
        (value.and_then(Value::as_array).into_iter().flatten())
            .take(MAX_SELECTORS)
            .map(Self::from_json)
            .collect()
    }

    /// The selectors of `quota`: each of `spec.scopes` as `Exists`, then
    /// `spec.scopeSelector.matchExpressions` (`getScopeSelectorsFromQuota`).
    pub fn of_quota(quota: &Value) -> Vec<Self> {
        let scopes = (quota
            .pointer("/spec/scopes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten())
        .take(MAX_SELECTORS)
        .filter_map(Value::as_str)
        .map(|scope| Self {
            scope: scope.to_owned(),
            operator: "Exists".to_owned(),
            values: Vec::new(),
        });
        let expressions = Self::list(quota.pointer("/spec/scopeSelector/matchExpressions"));
        scopes.chain(expressions).collect()
    }

    /// Whether the selector holds for an object whose value of the scope is `value` (`None`:
    /// the object has none), as the label selector Kubernetes builds from it judges the
    /// label set `{<scope>: value}`.
    pub fn holds_for(&self, value: Option<&str>) -> bool {
        match (self.operator.as_str(), value) {
            ("Exists", found) => found.is_some(),
            ("DoesNotExist", found) => found.is_none(),
            ("In", Some(v)) => self.values.iter().any(|x| x == v),
            ("NotIn", Some(v)) => !self.values.iter().any(|x| x == v),
            ("NotIn", None) => true,
            _ => false,
        }
    }
}

impl fmt::Display for ScopeSelector {
    /// Go's `%v` of the selector: `{PriorityClass In [high low]}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{{{} {} [{}]}}",
            self.scope,
            self.operator,
            self.values.join(" ")
        )
    }
}

/// Go's `%v` of a list of selectors: `[{PriorityClass In [high]} {BestEffort Exists []}]`.
pub fn print(selectors: &[ScopeSelector]) -> String {
    let parts: Vec<String> = selectors.iter().map(ToString::to_string).collect();
    format!("[{}]", parts.join(" "))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_quota_scopes_come_before_its_selector_expressions() {
        let quota = json!({"spec": {"scopes": ["BestEffort"], "scopeSelector": {"matchExpressions": [
            {"scopeName": "PriorityClass", "operator": "In", "values": ["high", "low"]}]}}});
        let selectors = ScopeSelector::of_quota(&quota);
        assert_eq!(
            print(&selectors),
            "[{BestEffort Exists []} {PriorityClass In [high low]}]"
        );
    }

    #[test]
    fn operators_judge_the_scope_value_as_label_selectors_do() {
        let selector = |operator: &str| ScopeSelector {
            scope: "PriorityClass".into(),
            operator: operator.into(),
            values: vec!["high".into()],
        };
        assert!(selector("In").holds_for(Some("high")));
        assert!(!selector("In").holds_for(None));
        assert!(selector("NotIn").holds_for(None));
        assert!(!selector("NotIn").holds_for(Some("high")));
        assert!(selector("Exists").holds_for(Some("x")));
        assert!(selector("DoesNotExist").holds_for(None));
        assert!(!selector("Bogus").holds_for(Some("high")));
    }
}
