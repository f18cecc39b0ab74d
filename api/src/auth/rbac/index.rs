//! The RBAC index of one replica: Roles, ClusterRoles and their bindings, parsed once from the
//! stored objects a [`Reflector`](crate::reflector::Reflector) hands over, with the bindings
//! indexed by subject (user name or group, per namespace and cluster-wide), so a decision
//! looks up the bindings of the requesting user instead of scanning every binding.

use std::collections::BTreeSet;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::PoisonError;
use std::sync::RwLock;
use std::sync::RwLockReadGuard;

use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::api::rbac::v1::ClusterRoleBinding;
use k8s_openapi::api::rbac::v1::Role;
use k8s_openapi::api::rbac::v1::RoleBinding;
use k8s_openapi::api::rbac::v1::RoleRef;
use k8s_openapi::api::rbac::v1::Subject;
use serde_json::Value;

use super::rule::Rule;
use super::typed;
use crate::flavor::Flavor;
use crate::reflector::Cache;
use crate::reflector::CacheEvent;
use crate::registry::ResourceType;
use crate::registry::builtin::rows;

/// Where a binding grants: one namespace, or (empty) the whole cluster.
type Scope = String;

/// A binding's subject as requests are matched against it: service accounts are users named
/// `system:serviceaccount:<ns>:<name>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum SubjectKey {
    /// A user name.
    User(String),
    /// A group name.
    Group(String),
}

/// The role a binding grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum RoleTarget {
    /// A Role in the binding's namespace.
    Role(String),
    /// A ClusterRole.
    ClusterRole(String),
    /// A kind RBAC does not know (validation refuses it; an old object may hold one).
    Unsupported(String),
}

/// One RoleBinding or ClusterRoleBinding.
#[derive(Debug, Clone)]
pub(super) struct Binding {
    /// The binding's namespace; empty for a ClusterRoleBinding.
    pub scope: Scope,
    /// The role it grants.
    pub role: RoleTarget,
    subjects: Vec<SubjectKey>,
}

/// The kinds of the RBAC group, by their stored key prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Role,
    ClusterRole,
    RoleBinding,
    ClusterRoleBinding,
}

/// The parsed RBAC objects and the subject index.
#[derive(Default)]
pub(super) struct State {
    /// Role rules by (namespace, name).
    roles: HashMap<(String, String), Arc<[Rule]>>,
    /// ClusterRole rules by name.
    cluster_roles: HashMap<String, Arc<[Rule]>>,
    /// Bindings by stored key.
    bindings: HashMap<String, Arc<Binding>>,
    /// Stored keys of the bindings naming a subject, by (scope, subject).
    by_subject: HashMap<(Scope, SubjectKey), BTreeSet<String>>,
}

impl State {
    /// The rules of the Role `name` in `namespace`.
    pub fn role(&self, namespace: &str, name: &str) -> Option<&Arc<[Rule]>> {
        self.roles.get(&(namespace.to_owned(), name.to_owned()))
    }

    /// The rules of the ClusterRole `name`.
    pub fn cluster_role(&self, name: &str) -> Option<&Arc<[Rule]>> {
        self.cluster_roles.get(name)
    }

    /// The bindings in `scope` naming `subjects`, each once, in key order.
    pub fn bindings_for<'a>(
        &'a self,
        scope: &str,
        subjects: &[SubjectKey],
    ) -> impl Iterator<Item = &'a Binding> + 'a {
        let mut keys = BTreeSet::new();
        for subject in subjects {
            if let Some(found) = self.by_subject.get(&(scope.to_owned(), subject.clone())) {
                keys.extend(found.iter());
            }
        }
        keys.into_iter()
            .filter_map(|k| self.bindings.get(k).map(Arc::as_ref))
    }

    fn insert_binding(&mut self, key: &str, binding: Binding) {
        self.remove_binding(key);
        for subject in &binding.subjects {
            (self.by_subject)
                .entry((binding.scope.clone(), subject.clone()))
                .or_default()
                .insert(key.to_owned());
        }
        self.bindings.insert(key.to_owned(), Arc::new(binding));
    }

    fn remove_binding(&mut self, key: &str) {
        let Some(old) = self.bindings.remove(key) else {
            return;
        };
        for subject in &old.subjects {
            let slot = (old.scope.clone(), subject.clone());
            if let Some(keys) = self.by_subject.get_mut(&slot) {
                keys.remove(key);
                if keys.is_empty() {
                    self.by_subject.remove(&slot);
                }
            }
        }
    }
}

/// The index: a [`Cache`] of the RBAC group's stored objects.
pub(super) struct Index {
    /// The stored key prefix of each kind.
    prefixes: Vec<(String, Kind)>,
    state: RwLock<State>,
}

/// The resource types of `flavor`'s RBAC kinds (v1), from the built-in table.
pub(super) fn rbac_types(flavor: Flavor) -> Vec<ResourceType> {
    let group = format!("rbac.authorization.{}", flavor.group_domain());
    rows()
        .iter()
        .map(|row| row.resource_type(flavor))
        .filter(|rt| rt.group == group && rt.version == "v1")
        .collect()
}

impl Index {
    /// An empty index of `flavor`'s RBAC kinds.
    pub fn new(flavor: Flavor) -> Self {
        let prefixes = rbac_types(flavor)
            .into_iter()
            .filter_map(|rt| {
                let kind = match rt.kind.as_str() {
                    "Role" => Kind::Role,
                    "ClusterRole" => Kind::ClusterRole,
                    "RoleBinding" => Kind::RoleBinding,
                    "ClusterRoleBinding" => Kind::ClusterRoleBinding,
                    _ => return None,
                };
                Some((rt.key_prefix(), kind))
            })
            .collect();
        Self {
            prefixes,
            state: RwLock::default(),
        }
    }

    /// The key prefix that holds every RBAC object (the group's part of the key space).
    pub fn group_prefix(&self) -> String {
        let Some((first, _)) = self.prefixes.first() else {
            return String::new();
        };
        let trimmed = first.trim_end_matches('/');
        match trimmed.rfind('/') {
            Some(at) => trimmed[..=at].to_owned(),
            None => String::new(),
        }
    }

    /// A consistent view of the index.
    pub fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// The stored key prefix of `kind`.
    fn prefix(&self, kind: Kind) -> &str {
        (self.prefixes.iter())
            .find(|(_, k)| *k == kind)
            .map_or("", |(p, _)| p.as_str())
    }

    /// The kind stored at `key` and the key's path after the kind's prefix.
    fn kind_of<'k>(&self, key: &'k str) -> Option<(Kind, &'k str)> {
        self.prefixes
            .iter()
            .find_map(|(prefix, kind)| Some((*kind, key.strip_prefix(prefix.as_str())?)))
    }

    fn upsert(&self, state: &mut State, key: &str, object: &Value) {
        let Some((kind, _)) = self.kind_of(key) else {
            return;
        };
        let parsed = parse(kind, object);
        match parsed {
            Some(Parsed::Role(id, rules)) => {
                state.roles.insert(id, rules);
            }
            Some(Parsed::ClusterRole(name, rules)) => {
                state.cluster_roles.insert(name, rules);
            }
            Some(Parsed::Binding(binding)) => state.insert_binding(key, binding),
            None => {
                tracing::warn!(
                    key,
                    "a stored RBAC object cannot be read; it grants nothing"
                );
                self.delete(state, key);
            }
        }
    }

    fn delete(&self, state: &mut State, key: &str) {
        let Some((kind, rest)) = self.kind_of(key) else {
            return;
        };
        match kind {
            Kind::Role => {
                if let Some((ns, name)) = rest.split_once('/') {
                    state.roles.remove(&(ns.to_owned(), name.to_owned()));
                }
            }
            Kind::ClusterRole => {
                state.cluster_roles.remove(rest);
            }
            Kind::RoleBinding | Kind::ClusterRoleBinding => state.remove_binding(key),
        }
    }
}

impl Cache for Index {
    fn replace(&self, prefix: &str, objects: Vec<(String, Arc<Value>)>) {
        let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
        let (role_prefix, cluster_role_prefix) =
            (self.prefix(Kind::Role), self.prefix(Kind::ClusterRole));
        (state.roles)
            .retain(|(ns, name), _| !format!("{role_prefix}{ns}/{name}").starts_with(prefix));
        (state.cluster_roles)
            .retain(|name, _| !format!("{cluster_role_prefix}{name}").starts_with(prefix));
        let stale: Vec<String> = (state.bindings.keys())
            .filter(|k| k.starts_with(prefix))
            .cloned()
            .collect();
        for key in stale {
            state.remove_binding(&key);
        }
        for (key, object) in objects {
            self.upsert(&mut state, &key, &object);
        }
    }

    fn apply(&self, _prefix: &str, events: Vec<CacheEvent>) {
        let mut state = self.state.write().unwrap_or_else(PoisonError::into_inner);
        for event in events {
            match event {
                CacheEvent::Upsert { key, object } => self.upsert(&mut state, &key, &object),
                CacheEvent::Delete { key } => self.delete(&mut state, &key),
            }
        }
    }
}

/// One stored object, parsed.
enum Parsed {
    Role((String, String), Arc<[Rule]>),
    ClusterRole(String, Arc<[Rule]>),
    Binding(Binding),
}

fn rules_of(rules: Option<&Vec<k8s_openapi::api::rbac::v1::PolicyRule>>) -> Arc<[Rule]> {
    rules.into_iter().flatten().map(Rule::from).collect()
}

fn parse(kind: Kind, object: &Value) -> Option<Parsed> {
    Some(match kind {
        Kind::Role => {
            let role: Role = typed(object).ok()?;
            let id = (role.metadata.namespace?, role.metadata.name?);
            Parsed::Role(id, rules_of(role.rules.as_ref()))
        }
        Kind::ClusterRole => {
            let role: ClusterRole = typed(object).ok()?;
            Parsed::ClusterRole(role.metadata.name?, rules_of(role.rules.as_ref()))
        }
        Kind::RoleBinding => {
            let b: RoleBinding = typed(object).ok()?;
            let scope = b.metadata.namespace?;
            Parsed::Binding(binding(scope, &b.role_ref, b.subjects.as_deref()))
        }
        Kind::ClusterRoleBinding => {
            let b: ClusterRoleBinding = typed(object).ok()?;
            Parsed::Binding(binding(String::new(), &b.role_ref, b.subjects.as_deref()))
        }
    })
}

/// The binding in `scope` of `role_ref` to `subjects`, as matched against requests.
fn binding(scope: Scope, role_ref: &RoleRef, subjects: Option<&[Subject]>) -> Binding {
    let role = match role_ref.kind.as_str() {
        "Role" => RoleTarget::Role(role_ref.name.clone()),
        "ClusterRole" => RoleTarget::ClusterRole(role_ref.name.clone()),
        other => RoleTarget::Unsupported(other.to_owned()),
    };
    let subjects = (subjects.unwrap_or_default().iter())
        .filter_map(|s| subject_key(&scope, s))
        .collect();
    Binding {
        scope,
        role,
        subjects,
    }
}

/// Kubernetes' `appliesToUser` as an index key: a service account without a namespace is in
/// the binding's own (none for a ClusterRoleBinding: it then matches nobody); unknown kinds
/// match nobody.
fn subject_key(scope: &str, subject: &Subject) -> Option<SubjectKey> {
    match subject.kind.as_str() {
        "User" => Some(SubjectKey::User(subject.name.clone())),
        "Group" => Some(SubjectKey::Group(subject.name.clone())),
        "ServiceAccount" => {
            let ns = subject.namespace.as_deref().filter(|ns| !ns.is_empty());
            let ns = ns.unwrap_or(scope);
            (!ns.is_empty())
                .then(|| SubjectKey::User(format!("system:serviceaccount:{ns}:{}", subject.name)))
        }
        _ => None,
    }
}
