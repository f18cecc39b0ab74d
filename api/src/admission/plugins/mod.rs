//! The admission plugins this server has, built by name for the chain a
//! [`PluginSelection`] enables. One file (or folder) per plugin.

mod always;
mod namespace_lifecycle;
mod node_restriction;
mod owner_references;
mod pod_security;

use std::sync::Arc;

use serde_json::Value;

pub use self::namespace_lifecycle::NAME as NAMESPACE_LIFECYCLE;
pub use self::pod_security::PodSecurityConfig;
use super::Admission;
use super::Namespaces;
use super::AdmissionConfig;
use super::Plugin;
use super::PluginSelection;
use crate::flavor::Flavor;
use crate::storage::Storage;

/// What plugins are built with.
#[derive(Clone)]
pub struct PluginContext {
    /// The replica's store, for the reads a plugin makes.
    pub storage: Arc<dyn Storage>,
    /// The naming flavor.
    pub flavor: Flavor,
    /// The replica's namespaces (namespace selectors, `namespaceObject`).
    pub namespaces: Arc<Namespaces>,
    /// The plugins' configurations (`--admission-control-config-file`).
    pub config: AdmissionConfig,
}

/// What is wrong with `configuration`, given for the plugin `name` in the admission
/// configuration file (plugins that take none accept anything, as Kubernetes' do).
pub(super) fn check_configuration(name: &str, configuration: &Value) -> Result<(), String> {
    match name {
        "PodSecurity" if !configuration.is_null() => {
            PodSecurityConfig::parse(configuration).map(|_| ())
        }
        _ => Ok(()),
    }
}

/// The plugin named `name`, or `None` when this server does not have it.
fn plugin(name: &str, context: &PluginContext) -> Option<Arc<dyn Plugin>> {
    let flavor = context.flavor;
    match name {
        "AlwaysAdmit" => Some(Arc::new(always::AlwaysAdmit)),
        "AlwaysDeny" => Some(Arc::new(always::AlwaysDeny)),
        NAMESPACE_LIFECYCLE => Some(Arc::new(namespace_lifecycle::NamespaceLifecycle::new(
            flavor,
        ))),
        "NodeRestriction" => Some(Arc::new(node_restriction::NodeRestriction::new(
            context.storage.clone(),
            flavor,
        ))),
        "OwnerReferencesPermissionEnforcement" => Some(Arc::new(
            owner_references::OwnerReferencesPermissionEnforcement::new(flavor),
        )),
        "PodSecurity" => {
            // The configuration was checked when the file was read.
            let config = context
                .config
                .plugin(name)
                .and_then(|doc| PodSecurityConfig::parse(doc).ok())
                .unwrap_or_default();
            Some(Arc::new(pod_security::PodSecurity::new(
                context.storage.clone(),
                flavor,
                config,
            )))
        }
        _ => None,
    }
}

/// The chain of `selection`'s plugins, and the names of the enabled plugins this server does
/// not have (the caller says so at start-up).
pub fn build(
    selection: &PluginSelection,
    context: &PluginContext,
) -> (Admission, Vec<&'static str>) {
    let mut missing = Vec::new();
    let mut plugins = Vec::new();
    for name in selection.enabled() {
        match plugin(name, context) {
            Some(p) => plugins.push((*name, p)),
            None => missing.push(*name),
        }
    }
    (Admission::new(plugins), missing)
}
