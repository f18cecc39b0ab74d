//! Escalation prevention (R-ACC-180, R-ACC-181, Kubernetes' `ConfirmNoEscalation`): a user may
//! store a Role or ClusterRole only with every permission it holds at that scope, or with
//! `escalate` on it; a binding only with every permission of the role it references, or with
//! `bind` on that role. `system:masters` passes. Setting or keeping a ClusterRole's
//! `aggregationRule` (which can gather anything) needs every permission, or `escalate`.
//! [`EscalationCheck`] is the registry's write step for the four kinds; the rule coverage is
//! Kubernetes' `Covers` over rules broken down to one verb, group, resource and name each.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::api::rbac::v1::PolicyRule;
use k8s_openapi::api::rbac::v1::Role;
use k8s_openapi::api::rbac::v1::RoleRef;
use serde_json::Value;

use super::index::rbac_types;
use super::rule::ALL;
use super::rule::Rule;
use super::rule::url_covers;
use super::typed;
use crate::auth::Attributes;
use crate::auth::Decision;
use crate::auth::Requester;
use crate::auth::Rules;
use crate::auth::SYSTEM_MASTERS;
use crate::auth::UserInfo;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::registry::ResourceType;
use crate::registry::StoredJson;
use crate::registry::WriteAuthorization;
use crate::request::RequestInfo;
use crate::request::Verb;
use crate::storage::ReadConsistency;
use crate::storage::Storage;

/// Ok when `owner` covers every permission in `requested`; otherwise Kubernetes' message
/// naming `user` and the missing permissions, compacted and sorted.
pub fn confirm_no_escalation(
    user: &UserInfo,
    owner: &[Rule],
    requested: &[Rule],
) -> Result<(), String> {
    let missing: Vec<Rule> = (requested.iter())
        .flat_map(breakdown)
        .filter(|sub| !owner.iter().any(|o| covers(o, sub)))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let described: BTreeSet<String> = compact(missing).iter().map(compact_string).collect();
    let groups: Vec<String> = user.groups.iter().map(|g| format!("{g:?}")).collect();
    Err(format!(
        "user {:?} (groups=[{}]) is attempting to grant RBAC permissions not currently held:\n{}",
        user.name,
        groups.join(" "),
        described.into_iter().collect::<Vec<_>>().join("\n")
    ))
}

/// A rule split into rules of one group, resource, verb and name each (or one path and verb).
fn breakdown(rule: &Rule) -> Vec<Rule> {
    let one = |s: &String| vec![s.clone()];
    let mut subrules = Vec::new();
    for group in &rule.api_groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                let base = Rule {
                    verbs: one(verb),
                    api_groups: one(group),
                    resources: one(resource),
                    ..Rule::default()
                };
                for name in &rule.resource_names {
                    subrules.push(Rule {
                        resource_names: one(name),
                        ..base.clone()
                    });
                }
                if rule.resource_names.is_empty() {
                    subrules.push(base);
                }
            }
        }
    }
    for url in &rule.non_resource_urls {
        for verb in &rule.verbs {
            subrules.push(Rule {
                verbs: one(verb),
                non_resource_urls: one(url),
                ..Rule::default()
            });
        }
    }
    subrules
}

fn has(set: &[String], value: &str) -> bool {
    set.iter().any(|s| s == value)
}

fn has_all(set: &[String], values: &[String]) -> bool {
    values.iter().all(|v| has(set, v))
}

/// Kubernetes' `ruleCovers`: whether `owner` grants everything `sub` does.
fn covers(owner: &Rule, sub: &Rule) -> bool {
    let verbs = has(&owner.verbs, ALL) || has_all(&owner.verbs, &sub.verbs);
    let groups = has(&owner.api_groups, ALL) || has_all(&owner.api_groups, &sub.api_groups);
    let resources = has(&owner.resources, ALL)
        || sub.resources.iter().all(|r| {
            has(&owner.resources, r)
                || r.split_once('/')
                    .is_some_and(|(_, s)| has(&owner.resources, &format!("*/{s}")))
        });
    let urls = (sub.non_resource_urls.iter())
        .all(|path| owner.non_resource_urls.iter().any(|o| url_covers(o, path)));
    let names = owner.resource_names.is_empty()
        || (!sub.resource_names.is_empty() && has_all(&owner.resource_names, &sub.resource_names));
    verbs && groups && resources && urls && names
}

/// Kubernetes' `CompactRules`: rules of one group, one resource and at most one name merge
/// their verbs.
fn compact(rules: Vec<Rule>) -> Vec<Rule> {
    let mut simple: BTreeMap<(String, String, Option<String>), Rule> = BTreeMap::new();
    let mut compacted = Vec::new();
    for rule in rules {
        let is_simple = rule.resource_names.len() <= 1
            && rule.non_resource_urls.is_empty()
            && rule.api_groups.len() == 1
            && rule.resources.len() == 1;
        if !is_simple {
            compacted.push(rule);
            continue;
        }
        let id = (
            rule.api_groups[0].clone(),
            rule.resources[0].clone(),
            rule.resource_names.first().cloned(),
        );
        match simple.get_mut(&id) {
            Some(existing) => {
                for verb in rule.verbs {
                    if !existing.verbs.contains(&verb) {
                        existing.verbs.push(verb);
                    }
                }
            }
            None => {
                simple.insert(id, rule);
            }
        }
    }
    compacted.extend(simple.into_values());
    compacted
}

/// Kubernetes' `CompactString`: `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`.
fn compact_string(rule: &Rule) -> String {
    let quoted = |v: &[String]| {
        let items: Vec<String> = v.iter().map(|s| format!("{s:?}")).collect();
        format!("[{}]", items.join(" "))
    };
    let fields = [
        ("APIGroups", &rule.api_groups),
        ("Resources", &rule.resources),
        ("NonResourceURLs", &rule.non_resource_urls),
        ("ResourceNames", &rule.resource_names),
        ("Verbs", &rule.verbs),
    ];
    let parts: Vec<String> = (fields.iter())
        .filter(|(_, v)| !v.is_empty())
        .map(|(name, v)| format!("{name}:{}", quoted(v)))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// The rules an authorizer chain lists, as policy rules.
fn owned_rules(rules: Rules) -> Vec<Rule> {
    let list = |v: Option<Vec<String>>| v.unwrap_or_default();
    let resource = rules.resource.into_iter().map(|r| Rule {
        verbs: r.verbs,
        api_groups: list(r.api_groups),
        resources: list(r.resources),
        resource_names: list(r.resource_names),
        non_resource_urls: Vec::new(),
    });
    let non_resource = rules.non_resource.into_iter().map(|r| Rule {
        verbs: r.verbs,
        non_resource_urls: list(r.non_resource_urls),
        ..Rule::default()
    });
    resource.chain(non_resource).collect()
}

/// Every permission there is (what an `aggregationRule` may gather).
fn full_authority() -> Vec<Rule> {
    let all = || vec![ALL.to_owned()];
    vec![
        Rule {
            verbs: all(),
            api_groups: all(),
            resources: all(),
            ..Rule::default()
        },
        Rule {
            verbs: all(),
            non_resource_urls: all(),
            ..Rule::default()
        },
    ]
}

/// Which of the four kinds a check guards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Guarded {
    Role,
    ClusterRole,
    RoleBinding,
    ClusterRoleBinding,
}

/// The escalation check of one RBAC kind's writes.
pub struct EscalationCheck {
    kind: Guarded,
    /// The kind's own resource type (the 403 names it).
    own: ResourceType,
    /// Roles and ClusterRoles: where a binding's role is read from.
    roles: ResourceType,
    cluster_roles: ResourceType,
}

impl EscalationCheck {
    /// The check of `rt`'s writes, when `rt` is one of `flavor`'s four RBAC kinds.
    pub fn for_type(flavor: Flavor, rt: &ResourceType) -> Option<Self> {
        let types = rbac_types(flavor);
        let find = |kind: &str| types.iter().find(|t| t.kind == kind).cloned();
        if !types.iter().any(|t| t.group == rt.group) {
            return None;
        }
        let kind = match rt.kind.as_str() {
            "Role" => Guarded::Role,
            "ClusterRole" => Guarded::ClusterRole,
            "RoleBinding" => Guarded::RoleBinding,
            "ClusterRoleBinding" => Guarded::ClusterRoleBinding,
            _ => return None,
        };
        Some(Self {
            kind,
            own: rt.clone(),
            roles: find("Role")?,
            cluster_roles: find("ClusterRole")?,
        })
    }

    fn forbidden(&self, name: &str, reason: String) -> ApiError {
        ApiError::Forbidden {
            resource: Some(self.own.group_resource()),
            name: name.to_owned(),
            reason,
        }
    }

    /// Whether the chain allows `verb` on the role `name` of type `rt` in `namespace`.
    async fn allowed(
        requester: &Requester,
        verb: &str,
        rt: &ResourceType,
        namespace: &str,
        name: &str,
    ) -> bool {
        let mut request = RequestInfo::non_resource("", Verb::Other(verb.to_owned()));
        request.is_resource_request = true;
        request.api_prefix = "apis".to_owned();
        request.api_group = rt.group.clone();
        request.api_version = rt.version.clone();
        request.resource = rt.plural.clone();
        request.namespace = namespace.to_owned();
        request.name = name.to_owned();
        let attributes = Attributes {
            user: &requester.user,
            request: &request,
        };
        requester.authz.decide(&attributes).await == Decision::Allow
    }

    /// The rules the requester holds in `namespace`, as the chain lists them.
    async fn owned(requester: &Requester, namespace: &str) -> Vec<Rule> {
        owned_rules(requester.authz.rules(&requester.user, namespace).await)
    }

    async fn check_role(
        &self,
        requester: &Requester,
        namespace: &str,
        new: &Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        let name = name_of(new);
        if Self::allowed(requester, "escalate", &self.own, namespace, name).await {
            return Ok(());
        }
        let (rules, aggregates) = match self.kind {
            Guarded::Role => {
                let role: Role = parse(new)?;
                (role.rules, false)
            }
            _ => {
                let role: ClusterRole = parse(new)?;
                let old_aggregates = old.is_some_and(|o| o.get("aggregationRule").is_some());
                (
                    role.rules,
                    role.aggregation_rule.is_some() || old_aggregates,
                )
            }
        };
        let rules: Vec<Rule> = rules.iter().flatten().map(Rule::from).collect();
        let owner = Self::owned(requester, namespace).await;
        confirm_no_escalation(&requester.user, &owner, &rules)
            .map_err(|reason| self.forbidden(name, reason))?;
        if aggregates && confirm_no_escalation(&requester.user, &owner, &full_authority()).is_err()
        {
            return Err(self.forbidden(
                name,
                "must have cluster-admin privileges to use the aggregationRule".to_owned(),
            ));
        }
        Ok(())
    }

    async fn check_binding(
        &self,
        storage: &dyn Storage,
        requester: &Requester,
        namespace: &str,
        new: &Value,
    ) -> Result<(), ApiError> {
        let name = name_of(new);
        let role_ref: RoleRef = match new.get("roleRef") {
            Some(r) => serde_json::from_value(r.clone())
                .map_err(|e| ApiError::BadRequest(format!("roleRef: {e}")))?,
            None => RoleRef::default(),
        };
        let rt = match role_ref.kind.as_str() {
            "Role" => &self.roles,
            _ => &self.cluster_roles,
        };
        if Self::allowed(requester, "bind", rt, namespace, &role_ref.name).await {
            return Ok(());
        }
        let key = rt.object_key(namespace, &role_ref.name);
        let not_found = || ApiError::NotFound {
            resource: rt.group_resource(),
            name: role_ref.name.clone(),
        };
        let stored = (storage.get(&key, ReadConsistency::Linearizable).await)
            .map_err(|e| ApiError::from_storage(e, &rt.group_resource(), &role_ref.name))?
            .ok_or_else(not_found)?;
        let role = StoredJson::from_stored(stored.value)
            .and_then(|s| s.to_value())
            .map_err(|e| ApiError::Internal(format!("stored object {key} cannot be read: {e}")))?;
        let rules: Vec<PolicyRule> = match role.get("rules") {
            Some(r) => serde_json::from_value(r.clone())
                .map_err(|e| ApiError::Internal(format!("stored object {key}: {e}")))?,
            None => Vec::new(),
        };
        let rules: Vec<Rule> = rules.iter().map(Rule::from).collect();
        let owner = Self::owned(requester, namespace).await;
        confirm_no_escalation(&requester.user, &owner, &rules)
            .map_err(|reason| self.forbidden(name, reason))
    }
}

fn name_of(obj: &Value) -> &str {
    obj.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn parse<T: serde::de::DeserializeOwned>(obj: &Value) -> Result<T, ApiError> {
    typed(obj).map_err(|e| ApiError::BadRequest(e.to_string()))
}

/// Kubernetes' `IsOnlyMutatingGCFields`: an update that changes only owner references and
/// finalizers (what the garbage collector writes) grants nothing new.
fn only_gc_fields(new: &Value, old: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(Value::Object(meta)) = v.get_mut("metadata") {
            for field in [
                "ownerReferences",
                "finalizers",
                "resourceVersion",
                "managedFields",
            ] {
                meta.remove(field);
            }
        }
        v
    };
    strip(new) == strip(old)
}

#[async_trait::async_trait]
impl WriteAuthorization for EscalationCheck {
    async fn authorize_write(
        &self,
        storage: &dyn Storage,
        requester: &Requester,
        namespace: &str,
        new: &Value,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        if requester.user.in_group(SYSTEM_MASTERS) || old.is_some_and(|o| only_gc_fields(new, o)) {
            return Ok(());
        }
        match self.kind {
            Guarded::Role | Guarded::ClusterRole => {
                self.check_role(requester, namespace, new, old).await
            }
            Guarded::RoleBinding | Guarded::ClusterRoleBinding => {
                self.check_binding(storage, requester, namespace, new).await
            }
        }
    }
}
