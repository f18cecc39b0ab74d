//! The built-in kinds of the core group (`v1`): their table entries and strategies. Types
//! and schemas come from `k8s-openapi`; the rules are Kubernetes' for each kind.

mod config_map;
mod data_keys;
mod event;
mod namespace;
mod secret;
mod service_account;

pub use config_map::ConfigMapStrategy;
pub use event::EventStrategy;
pub use namespace::NamespaceStrategy;
pub use secret::SecretStrategy;
pub use service_account::ServiceAccountStrategy;

use super::ResourceType;
use super::Scope;
use super::resource_type::CRUD_VERBS;

/// A core (`v1`) resource type with Kubernetes' full CRUD verbs.
fn core_type(
    kind: &str,
    plural: &str,
    short_names: &[&str],
    scope: Scope,
    subresources: &[&str],
) -> ResourceType {
    ResourceType {
        group: String::new(),
        version: "v1".to_owned(),
        kind: kind.to_owned(),
        list_kind: format!("{kind}List"),
        plural: plural.to_owned(),
        singular: kind.to_ascii_lowercase(),
        short_names: short_names.iter().map(|s| (*s).to_owned()).collect(),
        scope,
        verbs: CRUD_VERBS.iter().map(|v| (*v).to_owned()).collect(),
        subresources: subresources.iter().map(|s| (*s).to_owned()).collect(),
    }
}

/// `v1` Namespace.
pub fn namespace_type() -> ResourceType {
    let mut t = core_type(
        "Namespace",
        "namespaces",
        &["ns"],
        Scope::Cluster,
        &["finalize", "status"],
    );
    // Namespaces are removed by their finalizers, never as a collection (as Kubernetes).
    t.verbs.retain(|v| v != "deletecollection");
    t
}

/// `v1` ConfigMap.
pub fn config_map_type() -> ResourceType {
    core_type("ConfigMap", "configmaps", &["cm"], Scope::Namespaced, &[])
}

/// `v1` Secret.
pub fn secret_type() -> ResourceType {
    core_type("Secret", "secrets", &[], Scope::Namespaced, &[])
}

/// `v1` ServiceAccount.
pub fn service_account_type() -> ResourceType {
    core_type(
        "ServiceAccount",
        "serviceaccounts",
        &["sa"],
        Scope::Namespaced,
        &["token"],
    )
}

/// `v1` Event.
pub fn event_type() -> ResourceType {
    core_type("Event", "events", &["ev"], Scope::Namespaced, &[])
}
