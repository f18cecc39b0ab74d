//! The admission plugins this server has, built by name for the chain a
//! [`PluginSelection`] enables. One file per plugin.

mod always;
mod validating_admission_policy;

use std::sync::Arc;

use super::Admission;
use super::Namespaces;
use super::Plugin;
use super::PluginSelection;
use super::policy::ResourceTable;
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
    /// The served resource types (a policy's `paramKind`).
    pub resources: ResourceTable,
}

/// The plugin named `name`, or `None` when this server does not have it.
fn plugin(name: &str, context: &PluginContext) -> Option<Arc<dyn Plugin>> {
    match name {
        "AlwaysAdmit" => Some(Arc::new(always::AlwaysAdmit)),
        "AlwaysDeny" => Some(Arc::new(always::AlwaysDeny)),
        "ValidatingAdmissionPolicy" => Some(Arc::new(
            validating_admission_policy::ValidatingAdmissionPolicy::new(
                crate::admission::policy::Dispatcher::start(
                    &context.storage,
                    context.resources.clone(),
                    context.namespaces.clone(),
                    context.flavor,
                ),
            ),
        )),
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
