//! The default RBAC policy (spec 001 "Role-based rules", R-ACC-182..197): every ClusterRole,
//! ClusterRoleBinding, Role and RoleBinding the API server keeps in place, with Kubernetes'
//! bootstrap-policy rules, named per [`Flavor`]. Each object carries the label
//! `<label domain>/bootstrapping=rbac-defaults` and the annotation
//! `rbac.authorization.<label domain>/autoupdate: "true"` (R-ACC-184); [`reconcile`] says what
//! start-up reconciliation does to a stored object (R-ACC-185, R-ACC-186).
//!
//! Split by concept: [`cluster_roles`] (user-facing and system roles), [`controller_roles`]
//! (one `system:controller:<name>` role per built-in controller), [`namespace_roles`] (the
//! Roles and RoleBindings of the system and public namespaces), [`bindings`] (the
//! ClusterRoleBindings of the system roles).

mod bindings;
mod cluster_roles;
mod controller_roles;
mod namespace_roles;
mod reconcile;
mod rule;
#[cfg(test)]
mod tests;

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

pub use self::reconcile::Reconciled;
pub use self::reconcile::reconcile;
use self::rule::Rule;
use crate::flavor::Flavor;

/// The value of the bootstrapping label on every default object.
pub const BOOTSTRAPPING_VALUE: &str = "rbac-defaults";

/// The prefix of the roles of the built-in controllers.
pub const CONTROLLER_ROLE_PREFIX: &str = "system:controller:";

/// Every default object, as the JSON the API serves.
#[derive(Debug, Clone, PartialEq)]
pub struct DefaultPolicy {
    /// The ClusterRoles.
    pub cluster_roles: Vec<Value>,
    /// The ClusterRoleBindings.
    pub cluster_role_bindings: Vec<Value>,
    /// The Roles of the system and public namespaces.
    pub roles: Vec<Value>,
    /// The RoleBindings of the system and public namespaces.
    pub role_bindings: Vec<Value>,
}

/// The default policy of `flavor`.
pub fn default_policy(flavor: Flavor) -> DefaultPolicy {
    let mut cluster_roles = cluster_roles::cluster_roles(flavor);
    cluster_roles.extend(controller_roles::controller_roles(flavor));
    let mut cluster_role_bindings = bindings::cluster_role_bindings(flavor);
    cluster_role_bindings.extend(controller_roles::controller_role_bindings(flavor));
    DefaultPolicy {
        cluster_roles,
        cluster_role_bindings,
        roles: namespace_roles::roles(flavor),
        role_bindings: namespace_roles::role_bindings(flavor),
    }
}

/// The RBAC API group: `rbac.authorization.<group domain>`.
pub fn rbac_group(flavor: Flavor) -> String {
    format!("rbac.authorization.{}", flavor.group_domain())
}

/// The bootstrapping label's key: `<label domain>/bootstrapping`.
pub fn bootstrapping_label(flavor: Flavor) -> String {
    format!("{}/bootstrapping", flavor.label_domain())
}

/// The autoupdate annotation's key: `rbac.authorization.<label domain>/autoupdate`; a default
/// object annotated `"false"` is left as it is.
pub fn autoupdate_annotation(flavor: Flavor) -> String {
    format!("rbac.authorization.{}/autoupdate", flavor.label_domain())
}

/// The label that aggregates a ClusterRole into `role` (`admin`, `edit`, `view`):
/// `rbac.authorization.<group domain>/aggregate-to-<role>`.
pub fn aggregate_label(flavor: Flavor, role: &str) -> String {
    format!("{}/aggregate-to-{role}", rbac_group(flavor))
}

/// A control-plane component's name: `kube-<rest>` or `platform-<rest>`.
fn component(flavor: Flavor, rest: &str) -> String {
    format!("{}-{rest}", flavor.component_prefix())
}

/// A default object's metadata: `name` (in `namespace`), the bootstrapping label, the
/// autoupdate annotation.
fn metadata(flavor: Flavor, name: &str, namespace: Option<&str>) -> Value {
    let mut labels = Map::new();
    labels.insert(bootstrapping_label(flavor), json!(BOOTSTRAPPING_VALUE));
    let mut annotations = Map::new();
    annotations.insert(autoupdate_annotation(flavor), json!("true"));
    let mut meta = json!({"name": name, "labels": labels, "annotations": annotations});
    if let Some(namespace) = namespace {
        meta["namespace"] = json!(namespace);
    }
    meta
}

fn object(flavor: Flavor, kind: &str, name: &str, namespace: Option<&str>) -> Value {
    json!({
        "apiVersion": format!("{}/v1", rbac_group(flavor)),
        "kind": kind,
        "metadata": metadata(flavor, name, namespace),
    })
}

/// The ClusterRole `name` with `rules`.
fn cluster_role(flavor: Flavor, name: &str, rules: &[Rule]) -> Value {
    let mut role = object(flavor, "ClusterRole", name, None);
    role["rules"] = rules.iter().map(|r| r.render(flavor)).collect();
    role
}

/// The Role `name` of `namespace` with `rules`.
fn role(flavor: Flavor, namespace: &str, name: &str, rules: &[Rule]) -> Value {
    let mut role = object(flavor, "Role", name, Some(namespace));
    role["rules"] = rules.iter().map(|r| r.render(flavor)).collect();
    role
}

/// Adds the label `key: "true"` to the default object `object`.
fn labelled(mut object: Value, key: String) -> Value {
    object["metadata"]["labels"][key] = json!("true");
    object
}

/// Who a default binding names.
enum Subject {
    User(String),
    Group(&'static str),
    /// A ServiceAccount of the system namespace.
    ServiceAccount(String),
}

impl Subject {
    fn render(&self, flavor: Flavor) -> Value {
        match self {
            Self::User(name) => {
                json!({"apiGroup": rbac_group(flavor), "kind": "User", "name": name})
            }
            Self::Group(name) => {
                json!({"apiGroup": rbac_group(flavor), "kind": "Group", "name": name})
            }
            Self::ServiceAccount(name) => json!({
                "kind": "ServiceAccount",
                "name": name,
                "namespace": flavor.system_namespace(),
            }),
        }
    }
}

fn with_binding(
    mut binding: Value,
    flavor: Flavor,
    kind: &str,
    role: &str,
    who: &[Subject],
) -> Value {
    binding["roleRef"] = json!({"apiGroup": rbac_group(flavor), "kind": kind, "name": role});
    if !who.is_empty() {
        binding["subjects"] = who.iter().map(|s| s.render(flavor)).collect();
    }
    binding
}

/// The ClusterRoleBinding `name` of the ClusterRole `role` to `who`.
fn cluster_role_binding(flavor: Flavor, name: &str, role: &str, who: &[Subject]) -> Value {
    let binding = object(flavor, "ClusterRoleBinding", name, None);
    with_binding(binding, flavor, "ClusterRole", role, who)
}

/// The RoleBinding `name` of `namespace` granting the Role `role` to `who`.
fn role_binding(flavor: Flavor, namespace: &str, name: &str, role: &str, who: &[Subject]) -> Value {
    let binding = object(flavor, "RoleBinding", name, Some(namespace));
    with_binding(binding, flavor, "Role", role, who)
}
