//! The audit policy (`--audit-policy-file`, `audit.<domain>/v1` `Policy`): its rules, read
//! from YAML or JSON and validated at start-up, and the first-match evaluation that picks a
//! request's level and omitted stages, as kube-apiserver's policy checker does.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::event::Level;
use super::event::Stage;
use crate::auth::UserInfo;
use crate::flavor::Flavor;
use crate::request::RequestInfo;

/// A policy file that cannot be used; start-up stops with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// Not YAML or JSON of the Policy shape.
    #[error("audit policy does not parse: {0}")]
    Parse(String),
    /// Parsed, but not a valid policy.
    #[error("invalid audit policy: {0}")]
    Invalid(String),
}

/// Which resources of one API group a rule covers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GroupResources {
    /// The API group (`""` is the core group).
    #[serde(default)]
    pub group: String,
    /// Resources (`pods`), subresources (`pods/log`), `*`, `*/status` or `pods/*`; empty
    /// means every resource of the group.
    #[serde(default)]
    pub resources: Vec<String>,
    /// Object names; empty means every name.
    #[serde(default)]
    pub resource_names: Vec<String>,
}

/// One rule: a request matches when it matches every non-empty selector.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyRule {
    /// The level of matching requests.
    pub level: Level,
    /// User names.
    #[serde(default)]
    pub users: Vec<String>,
    /// Groups, any of which matches.
    #[serde(default)]
    pub user_groups: Vec<String>,
    /// Verbs (`get`, `watch`, ...).
    #[serde(default)]
    pub verbs: Vec<String>,
    /// Resources by group.
    #[serde(default)]
    pub resources: Vec<GroupResources>,
    /// Namespaces (`""` for cluster-scoped objects).
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// Non-resource paths, a trailing `*` matching any suffix.
    #[serde(default, rename = "nonResourceURLs")]
    pub non_resource_urls: Vec<String>,
    /// Stages not recorded for matching requests (added to the policy's).
    #[serde(default)]
    pub omit_stages: Vec<Stage>,
    /// Whether managed fields are left out of logged objects (the policy's setting if unset).
    #[serde(default)]
    pub omit_managed_fields: Option<bool>,
}

/// The whole policy, rules in order.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Policy {
    /// `audit.<domain>/v1`.
    pub api_version: String,
    /// `Policy`.
    pub kind: String,
    /// Ignored object metadata.
    #[serde(default)]
    pub metadata: BTreeMap<String, serde_json::Value>,
    /// The rules; the first match decides.
    pub rules: Vec<PolicyRule>,
    /// Stages never recorded.
    #[serde(default)]
    pub omit_stages: Vec<Stage>,
    /// Whether managed fields are left out of logged objects.
    #[serde(default)]
    pub omit_managed_fields: bool,
}

/// What the policy decides for one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// How much is recorded.
    pub level: Level,
    /// The stages not recorded.
    pub omit_stages: Vec<Stage>,
    /// Whether managed fields are left out of logged objects.
    pub omit_managed_fields: bool,
}

impl Policy {
    /// Parses `text` (YAML or JSON) and validates it for `flavor`'s audit group.
    pub fn parse(text: &str, flavor: Flavor) -> Result<Self, PolicyError> {
        let policy: Self =
            serde_saphyr::from_str(text).map_err(|e| PolicyError::Parse(e.to_string()))?;
        policy.validate(flavor)?;
        Ok(policy)
    }

    fn validate(&self, flavor: Flavor) -> Result<(), PolicyError> {
        let invalid = |m: String| Err(PolicyError::Invalid(m));
        let group_version = super::api_version(flavor);
        if self.api_version != group_version || self.kind != "Policy" {
            return invalid(format!(
                "apiVersion/kind must be {group_version}/Policy, not {}/{}",
                self.api_version, self.kind
            ));
        }
        if self.rules.is_empty() {
            return invalid("a policy needs at least one rule".into());
        }
        for (i, rule) in self.rules.iter().enumerate() {
            rule.validate()
                .map_err(|m| PolicyError::Invalid(format!("rules[{i}]: {m}")))?;
        }
        Ok(())
    }

    /// The level, omitted stages and managed-field setting for a request of `user` described by
    /// `info`: the first matching rule's, or level None when no rule matches.
    pub fn decide(&self, user: &UserInfo, info: &RequestInfo) -> Decision {
        let Some(rule) = self.rules.iter().find(|r| r.matches(user, info)) else {
            return Decision {
                level: Level::None,
                omit_stages: self.omit_stages.clone(),
                omit_managed_fields: self.omit_managed_fields,
            };
        };
        let mut omit_stages = self.omit_stages.clone();
        omit_stages.extend(rule.omit_stages.iter().copied());
        Decision {
            level: rule.level,
            omit_stages,
            omit_managed_fields: rule.omit_managed_fields.unwrap_or(self.omit_managed_fields),
        }
    }
}

impl PolicyRule {
    fn validate(&self) -> Result<(), String> {
        if !self.non_resource_urls.is_empty()
            && (!self.resources.is_empty() || !self.namespaces.is_empty())
        {
            return Err("rules cannot apply to both resources and nonResourceURLs".into());
        }
        for url in &self.non_resource_urls {
            let star = url.find('*');
            let valid =
                url == "*" || (url.starts_with('/') && star.is_none_or(|at| at == url.len() - 1));
            if !valid {
                return Err(format!(
                    "nonResourceURLs: {url:?} must start with / and may only end in *"
                ));
            }
        }
        for resources in &self.resources {
            if !resources.resource_names.is_empty() && resources.resources.is_empty() {
                return Err("resourceNames need at least one resource".into());
            }
            for resource in &resources.resources {
                if resource.is_empty() || resource.split('/').count() > 2 {
                    return Err(format!(
                        "resources: {resource:?} is not a resource or resource/subresource"
                    ));
                }
            }
        }
        Ok(())
    }

    fn matches(&self, user: &UserInfo, info: &RequestInfo) -> bool {
        if !self.users.is_empty() && !self.users.contains(&user.name) {
            return false;
        }
        if !self.user_groups.is_empty() && !self.user_groups.iter().any(|g| user.in_group(g)) {
            return false;
        }
        if !self.verbs.is_empty() && !self.verbs.iter().any(|v| v == info.verb.as_str()) {
            return false;
        }
        if !self.namespaces.is_empty() || !self.resources.is_empty() {
            return info.is_resource_request && self.matches_resource(info);
        }
        if !self.non_resource_urls.is_empty() {
            return !info.is_resource_request
                && self
                    .non_resource_urls
                    .iter()
                    .any(|u| path_matches(&info.path, u));
        }
        true
    }

    fn matches_resource(&self, info: &RequestInfo) -> bool {
        if !self.namespaces.is_empty() && !self.namespaces.contains(&info.namespace) {
            return false;
        }
        if self.resources.is_empty() {
            return true;
        }
        let combined = if info.subresource.is_empty() {
            info.resource.clone()
        } else {
            format!("{}/{}", info.resource, info.subresource)
        };
        self.resources
            .iter()
            .filter(|gr| gr.group == info.api_group)
            .any(|gr| {
                if gr.resources.is_empty() {
                    return true;
                }
                if !gr.resource_names.is_empty() && !gr.resource_names.contains(&info.name) {
                    return false;
                }
                gr.resources.iter().any(|r| {
                    r == "*"
                        || *r == combined
                        || r.strip_prefix("*/").is_some_and(|sub| {
                            !info.subresource.is_empty() && sub == info.subresource
                        })
                        || r.strip_suffix("/*").is_some_and(|res| res == info.resource)
                })
            })
    }
}

/// Whether `path` matches a nonResourceURLs entry: equal, `*`, or a prefix ending in `*`.
fn path_matches(path: &str, spec: &str) -> bool {
    spec == "*"
        || spec == path
        || spec
            .strip_suffix('*')
            .is_some_and(|prefix| path.starts_with(prefix))
}

#[cfg(test)]
#[path = "policy_test.rs"]
mod tests;
