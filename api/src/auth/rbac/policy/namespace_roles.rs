//! The default Roles and RoleBindings of the system and public namespaces: reading the
//! `extension-apiserver-authentication` ConfigMap, the control plane's leader-election locks,
//! and the roles of the bootstrap token controllers (what
//! [`crate::auth::ControllerRolesAuthorizer`] grants them) and the cloud provider.

use serde_json::Value;

use super::CONTROLLER_ROLE_PREFIX;
use super::Subject;
use super::component;
use super::role;
use super::role_binding;
use super::rule::READ;
use super::rule::Rule;
use super::rule::events;
use super::rule::rule;
use crate::auth::BOOTSTRAP_SIGNER_ACCOUNT;
use crate::auth::CLUSTER_INFO;
use crate::auth::TOKEN_CLEANER_ACCOUNT;
use crate::flavor::Flavor;

/// The ConfigMap of the system namespace holding the client-authentication configuration.
const AUTHENTICATION_CONFIGMAP: &str = "extension-apiserver-authentication";

/// The verbs of a leader-election lock.
const LOCKING: &[&str] = &["create", "get", "list", "update", "watch"];

fn controller(name: &str) -> String {
    format!("{CONTROLLER_ROLE_PREFIX}{name}")
}

fn leader_locking(flavor: Flavor, component_name: &str) -> String {
    format!(
        "system::leader-locking-{}",
        component(flavor, component_name)
    )
}

fn locking_rules() -> Vec<Rule> {
    vec![
        rule(LOCKING, &["coordination."], &["leases"]),
        rule(LOCKING, &["coordination."], &["leasecandidates"]),
    ]
}

/// The default Roles of `flavor`.
pub(super) fn roles(flavor: Flavor) -> Vec<Value> {
    let system = flavor.system_namespace();
    let public = flavor.public_namespace();
    vec![
        role(
            flavor,
            public,
            &controller(BOOTSTRAP_SIGNER_ACCOUNT),
            &[
                rule(READ, &[""], &["configmaps"]),
                rule(&["update"], &[""], &["configmaps"]).names(&[CLUSTER_INFO]),
                events(),
            ],
        ),
        role(
            flavor,
            system,
            &format!("{AUTHENTICATION_CONFIGMAP}-reader"),
            &[rule(READ, &[""], &["configmaps"]).names(&[AUTHENTICATION_CONFIGMAP])],
        ),
        role(
            flavor,
            system,
            &leader_locking(flavor, "controller-manager"),
            &locking_rules(),
        ),
        role(
            flavor,
            system,
            &leader_locking(flavor, "scheduler"),
            &locking_rules(),
        ),
        role(
            flavor,
            system,
            &controller(BOOTSTRAP_SIGNER_ACCOUNT),
            &[rule(READ, &[""], &["secrets"])],
        ),
        role(
            flavor,
            system,
            &controller("cloud-provider"),
            &[rule(
                &["create", "get", "list", "watch"],
                &[""],
                &["configmaps"],
            )],
        ),
        role(
            flavor,
            system,
            &controller(TOKEN_CLEANER_ACCOUNT),
            &[
                rule(&["delete", "get", "list", "watch"], &[""], &["secrets"]),
                events(),
            ],
        ),
    ]
}

/// The default RoleBindings of `flavor`.
pub(super) fn role_bindings(flavor: Flavor) -> Vec<Value> {
    let system = flavor.system_namespace();
    let public = flavor.public_namespace();
    let user = |rest: &str| Subject::User(format!("system:{}", component(flavor, rest)));
    let account = |name: &str| Subject::ServiceAccount(name.to_owned());
    let same = |namespace: &str, name: &str, who: &[Subject]| {
        role_binding(flavor, namespace, name, name, who)
    };
    let controller_manager = leader_locking(flavor, "controller-manager");
    let scheduler = leader_locking(flavor, "scheduler");
    vec![
        same(
            public,
            &controller(BOOTSTRAP_SIGNER_ACCOUNT),
            &[account(BOOTSTRAP_SIGNER_ACCOUNT)],
        ),
        role_binding(
            flavor,
            system,
            &format!("system::{AUTHENTICATION_CONFIGMAP}-reader"),
            &format!("{AUTHENTICATION_CONFIGMAP}-reader"),
            &[user("controller-manager"), user("scheduler")],
        ),
        same(
            system,
            &controller_manager,
            &[
                user("controller-manager"),
                Subject::ServiceAccount(component(flavor, "controller-manager")),
                account("leader-election-controller"),
            ],
        ),
        same(
            system,
            &scheduler,
            &[
                user("scheduler"),
                Subject::ServiceAccount(component(flavor, "scheduler")),
            ],
        ),
        same(
            system,
            &controller(BOOTSTRAP_SIGNER_ACCOUNT),
            &[account(BOOTSTRAP_SIGNER_ACCOUNT)],
        ),
        same(
            system,
            &controller("cloud-provider"),
            &[account("cloud-provider")],
        ),
        same(
            system,
            &controller(TOKEN_CLEANER_ACCOUNT),
            &[account(TOKEN_CLEANER_ACCOUNT)],
        ),
    ]
}
