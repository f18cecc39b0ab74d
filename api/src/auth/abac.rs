//! The ABAC authorization mode (`--authorization-policy-file`, R-ACC-166, R-ACC-167): one
//! policy object per line, each granting a user or group access to resources or paths, read
//! as Kubernetes' ABAC authorizer reads its file.
//!
//! A line is blank, a `#` comment, or one JSON object: either a versioned policy
//! `{"apiVersion": "abac.authorization.<domain>/v1beta1", "kind": "Policy", "spec": {...}}`
//! (the domain as the flavor spells label domains; `/v0` with the legacy fields is accepted
//! too) or an unversioned legacy (v0) object with `user`, `group`, `readonly`, `resource` and
//! `namespace` at the top, converted as Kubernetes converts it: no subject means every
//! authenticated user, `*` user or group means every authenticated user, no namespace or no
//! resource means all of them, every API group matches, and a line naming neither namespace
//! nor resource also grants every non-resource path. In both formats a `*` user or group is
//! the group `system:authenticated`, so it never covers anonymous requests.
//!
//! A request is allowed when any policy matches it; otherwise this mode has no opinion.

use std::sync::Arc;

use k8s_openapi::api::authorization::v1::NonResourceRule;
use k8s_openapi::api::authorization::v1::ResourceRule;
use serde::Deserialize;

use super::Attributes;
use super::Authorizer;
use super::Decision;
use super::Rules;
use super::SYSTEM_AUTHENTICATED;
use super::UserInfo;
use crate::flavor::Flavor;
use crate::request::RequestInfo;

/// The kind of every policy line.
const KIND: &str = "Policy";

/// The reason of this mode's "no opinion", as Kubernetes words it.
const NO_MATCH: &str = "No policy matched.";

/// Why a policy file was refused (the line and what is wrong with it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct AbacError {
    /// The 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub reason: String,
}

/// One policy, after conversion to the v1beta1 meaning.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct PolicySpec {
    /// The user name it applies to (empty: not restricted by user).
    user: String,
    /// The group it applies to (empty: not restricted by group).
    group: String,
    /// Whether only `get`, `list` and `watch` are granted.
    readonly: bool,
    /// The API group of resource requests (`*`: all).
    api_group: String,
    /// The resource of resource requests (`*`: all).
    resource: String,
    /// The namespace of resource requests (`*`: all, cluster scope included).
    namespace: String,
    /// The non-resource path (`*`: all; `/prefix*`: every path starting with `/prefix`).
    non_resource_path: String,
}

/// A versioned (v1beta1) policy line.
#[derive(Deserialize)]
struct Versioned {
    #[serde(default)]
    spec: PolicySpec,
}

/// An unversioned (or `v0`) legacy policy line.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Legacy {
    user: String,
    group: String,
    readonly: bool,
    resource: String,
    namespace: String,
}

impl Legacy {
    /// The v1beta1 meaning of a legacy policy.
    fn convert(self) -> PolicySpec {
        let everyone = (self.user.is_empty() && self.group.is_empty())
            || self.user == "*"
            || self.group == "*";
        let (user, group) = if everyone {
            (String::new(), SYSTEM_AUTHENTICATED.to_owned())
        } else {
            (self.user, self.group)
        };
        let all_paths = self.namespace.is_empty() && self.resource.is_empty();
        let or_all = |s: String| if s.is_empty() { "*".to_owned() } else { s };
        PolicySpec {
            user,
            group,
            readonly: self.readonly,
            api_group: "*".to_owned(),
            resource: or_all(self.resource),
            namespace: or_all(self.namespace),
            non_resource_path: if all_paths {
                "*".to_owned()
            } else {
                String::new()
            },
        }
    }
}

impl PolicySpec {
    /// A v1beta1 spec as it is enforced: a `*` user or group means every authenticated user.
    fn convert(mut self) -> Self {
        if self.user == "*" || self.group == "*" {
            self.user.clear();
            self.group = SYSTEM_AUTHENTICATED.to_owned();
        }
        self
    }

    /// Whether the policy names `user`: by name, by group, or both when it gives both.
    fn subject_matches(&self, user: &UserInfo) -> bool {
        if !self.user.is_empty() && self.user != user.name {
            return false;
        }
        if !self.group.is_empty() && !user.in_group(&self.group) {
            return false;
        }
        !self.user.is_empty() || !self.group.is_empty()
    }

    fn matches(&self, user: &UserInfo, request: &RequestInfo) -> bool {
        let read_only = matches!(request.verb.as_str(), "get" | "list" | "watch");
        if !self.subject_matches(user) || (self.readonly && !read_only) {
            return false;
        }
        if request.is_resource_request {
            wildcard(&self.namespace, &request.namespace)
                && wildcard(&self.resource, &request.resource)
                && wildcard(&self.api_group, &request.api_group)
        } else {
            let path = &self.non_resource_path;
            path == "*"
                || *path == request.path
                || (path.ends_with('*') && request.path.starts_with(path.trim_end_matches('*')))
        }
    }

    /// The verbs the policy grants.
    fn verbs(&self) -> Vec<String> {
        let verbs: &[&str] = if self.readonly {
            &["get", "list", "watch"]
        } else {
            &["*"]
        };
        verbs.iter().map(|v| (*v).to_owned()).collect()
    }
}

/// Whether a policy's `pattern` (`*` or exact) covers `value`.
fn wildcard(pattern: &str, value: &str) -> bool {
    pattern == "*" || pattern == value
}

/// The ABAC authorizer of one policy file.
#[derive(Debug)]
pub struct AbacAuthorizer {
    policies: Vec<PolicySpec>,
}

impl AbacAuthorizer {
    /// The policies of a file's `text` in `flavor`'s policy group; refused with the first line
    /// that is not a policy.
    pub fn parse(text: &str, flavor: Flavor) -> Result<Arc<Self>, AbacError> {
        let group = format!("abac.authorization.{}", flavor.label_domain());
        let mut policies = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let trimmed = line.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let policy = parse_line(trimmed, &group).map_err(|reason| AbacError {
                line: index + 1,
                reason: format!("{trimmed}: {reason}"),
            })?;
            policies.push(policy);
        }
        Ok(Arc::new(Self { policies }))
    }
}

/// One policy line of the policy group `group`.
fn parse_line(line: &str, group: &str) -> Result<PolicySpec, String> {
    let value: serde_json::Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let Some(object) = value.as_object() else {
        return Err("a policy must be a JSON object".to_owned());
    };
    let text = |field: &str| match object.get(field) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) if s.is_empty() => Ok(None),
        Some(serde_json::Value::String(s)) => Ok(Some(s.as_str())),
        Some(_) => Err(format!("{field} must be a string")),
    };
    let decode = |e: serde_json::Error| e.to_string();
    match (text("apiVersion")?, text("kind")?) {
        (Some(version), Some(KIND)) if version == format!("{group}/v1beta1") => {
            let versioned = Versioned::deserialize(&value).map_err(decode)?;
            Ok(versioned.spec.convert())
        }
        (Some(version), Some(KIND)) if version == format!("{group}/v0") => {
            Ok(Legacy::deserialize(&value).map_err(decode)?.convert())
        }
        (None, _) | (_, None) => Ok(Legacy::deserialize(&value).map_err(decode)?.convert()),
        (Some(version), Some(kind)) => Err(format!(
            "unknown policy {version:?} {kind:?} (expected {:?} {KIND:?})",
            format!("{group}/v1beta1")
        )),
    }
}

#[async_trait::async_trait]
impl Authorizer for AbacAuthorizer {
    async fn authorize(&self, attributes: &Attributes<'_>) -> Decision {
        let allowed = self
            .policies
            .iter()
            .any(|p| p.matches(attributes.user, attributes.request));
        if allowed {
            Decision::Allow
        } else {
            Decision::NoOpinion(NO_MATCH.to_owned())
        }
    }

    /// The policies naming `user` in `namespace` (or in every namespace), in file order:
    /// complete, as the file is all this mode grants.
    async fn rules(&self, user: &UserInfo, namespace: &str) -> Option<Rules> {
        let mut rules = Rules::default();
        let granted = self
            .policies
            .iter()
            .filter(|p| p.subject_matches(user) && wildcard(&p.namespace, namespace));
        for policy in granted {
            if !policy.resource.is_empty() {
                rules.resource.push(ResourceRule {
                    verbs: policy.verbs(),
                    api_groups: Some(vec![policy.api_group.clone()]),
                    resources: Some(vec![policy.resource.clone()]),
                    resource_names: None,
                });
            }
            if !policy.non_resource_path.is_empty() {
                rules.non_resource.push(NonResourceRule {
                    verbs: policy.verbs(),
                    non_resource_urls: Some(vec![policy.non_resource_path.clone()]),
                });
            }
        }
        Some(rules)
    }
}

#[cfg(test)]
#[path = "abac_test.rs"]
mod tests;
