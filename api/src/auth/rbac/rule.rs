//! One RBAC policy rule and how it matches a request (Kubernetes' `RuleAllows`): `*` in
//! verbs, API groups and resources; `resource/subresource` and `*/subresource`; resource
//! names (which never match a request without a name, so never `create` or
//! `deletecollection`, R-ACC-109, and a list or watch only when its field selector pins
//! `metadata.name`, R-ACC-110); non-resource URLs, exact or with a `*` suffix.

use k8s_openapi::api::authorization::v1::NonResourceRule;
use k8s_openapi::api::authorization::v1::ResourceRule;
use k8s_openapi::api::rbac::v1::PolicyRule;

use crate::request::RequestInfo;

/// The wildcard of every rule field.
pub(crate) const ALL: &str = "*";

/// A policy rule, parsed once from a Role or ClusterRole.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rule {
    /// Verbs (`get`, `list`, ..., or `*`).
    pub verbs: Vec<String>,
    /// API groups (`""` is core, `*` any).
    pub api_groups: Vec<String>,
    /// Resources (`pods`, `pods/log`, `*/scale`, `*`).
    pub resources: Vec<String>,
    /// Object names the rule is limited to (empty: any).
    pub resource_names: Vec<String>,
    /// Non-resource paths (`/healthz`, `/logs/*`, `*`).
    pub non_resource_urls: Vec<String>,
}

fn has(set: &[String], value: &str) -> bool {
    set.iter().any(|s| s == value)
}

impl From<&PolicyRule> for Rule {
    fn from(rule: &PolicyRule) -> Self {
        let list = |v: &Option<Vec<String>>| v.clone().unwrap_or_default();
        Self {
            verbs: rule.verbs.clone(),
            api_groups: list(&rule.api_groups),
            resources: list(&rule.resources),
            resource_names: list(&rule.resource_names),
            non_resource_urls: list(&rule.non_resource_urls),
        }
    }
}

impl Rule {
    /// Whether the rule allows the request `info`.
    pub fn allows(&self, info: &RequestInfo) -> bool {
        let verb = has(&self.verbs, ALL) || has(&self.verbs, info.verb.as_str());
        if !verb {
            return false;
        }
        if !info.is_resource_request {
            return self.non_resource_url_matches(&info.path);
        }
        let group = has(&self.api_groups, ALL) || has(&self.api_groups, &info.api_group);
        group
            && self.resource_matches(&info.resource, &info.subresource)
            && (self.resource_names.is_empty() || has(&self.resource_names, &info.name))
    }

    /// Kubernetes' `ResourceMatches`: `*`, the exact `resource[/subresource]`, or
    /// `*/subresource`. A `resource/*` entry is a literal: it matches no subresource.
    fn resource_matches(&self, resource: &str, subresource: &str) -> bool {
        let combined = if subresource.is_empty() {
            resource.to_owned()
        } else {
            format!("{resource}/{subresource}")
        };
        self.resources.iter().any(|r| {
            r == ALL
                || *r == combined
                || (!subresource.is_empty() && r.strip_prefix("*/") == Some(subresource))
        })
    }

    fn non_resource_url_matches(&self, path: &str) -> bool {
        self.non_resource_urls.iter().any(|u| url_covers(u, path))
    }

    /// The rule as the rules review lists it: a resource rule when it names resources, a
    /// non-resource rule when it names paths (a rule may give both).
    pub fn review_rules(&self) -> (Option<ResourceRule>, Option<NonResourceRule>) {
        let some = |v: &Vec<String>| (!v.is_empty()).then(|| v.clone());
        let resource = (!self.resources.is_empty()).then(|| ResourceRule {
            verbs: self.verbs.clone(),
            api_groups: some(&self.api_groups),
            resources: some(&self.resources),
            resource_names: some(&self.resource_names),
        });
        let non_resource = (!self.non_resource_urls.is_empty()).then(|| NonResourceRule {
            verbs: self.verbs.clone(),
            non_resource_urls: some(&self.non_resource_urls),
        });
        (resource, non_resource)
    }
}

/// Whether the rule path `owner` covers the path `path`: equal, `*`, or a `*`-suffixed prefix.
pub(crate) fn url_covers(owner: &str, path: &str) -> bool {
    owner == path
        || owner == ALL
        || owner
            .strip_suffix('*')
            .is_some_and(|prefix| path.starts_with(prefix.trim_end_matches('*')))
}
