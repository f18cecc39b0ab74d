//! The rules a user holds (Kubernetes' `VisitRulesFor`): those of the ClusterRoleBindings
//! naming the user or one of their groups, then, in a namespace, those of the RoleBindings
//! there (R-ACC-177, R-ACC-178). A binding whose role is missing grants nothing and is
//! reported the way Kubernetes words it (`clusterrole.rbac.authorization.k8s.io "x" not
//! found`).

use std::ops::ControlFlow;

use super::index::RoleTarget;
use super::index::State;
use super::index::SubjectKey;
use super::rule::Rule;
use crate::auth::UserInfo;

/// The index keys a user is found under: their name and each of their groups. A subject
/// named `*` is a name like any other, so it never covers `system:anonymous` (R-ACC-148).
fn subjects_of(user: &UserInfo) -> Vec<SubjectKey> {
    let mut keys = vec![SubjectKey::User(user.name.clone())];
    keys.extend(user.groups.iter().cloned().map(SubjectKey::Group));
    keys
}

/// Calls `visit` with every rule `user` holds in `namespace` (empty: cluster-wide only) until
/// it breaks; answers whether it broke and the problems of the bindings met on the way.
pub(super) fn visit_rules(
    state: &State,
    group: &str,
    user: &UserInfo,
    namespace: &str,
    mut visit: impl FnMut(&Rule) -> ControlFlow<()>,
) -> (bool, Vec<String>) {
    let subjects = subjects_of(user);
    let mut errors = Vec::new();
    let mut scopes = vec![""];
    if !namespace.is_empty() {
        scopes.push(namespace);
    }
    for scope in scopes {
        for binding in state.bindings_for(scope, &subjects) {
            let rules = match &binding.role {
                RoleTarget::ClusterRole(name) => state
                    .cluster_role(name)
                    .ok_or_else(|| format!("clusterrole.{group} {name:?} not found")),
                RoleTarget::Role(name) => state
                    .role(&binding.scope, name)
                    .ok_or_else(|| format!("role.{group} {name:?} not found")),
                RoleTarget::Unsupported(kind) => {
                    Err(format!("unsupported role reference kind: {kind:?}"))
                }
            };
            match rules {
                Ok(rules) => {
                    for rule in rules.iter() {
                        if visit(rule).is_break() {
                            return (true, errors);
                        }
                    }
                }
                Err(error) => {
                    if !errors.contains(&error) {
                        errors.push(error);
                    }
                }
            }
        }
    }
    (false, errors)
}

/// Kubernetes' aggregate error text: the one error, or `[a, b]`.
pub(super) fn aggregate(errors: &[String]) -> String {
    match errors {
        [] => String::new(),
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}
