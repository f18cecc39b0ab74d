//! The admission plugins this server has, built by name for the chain a
//! [`PluginSelection`] enables. One file per plugin.

mod always;
mod default_class;
mod default_ingress_class;
mod default_storage_class;
mod default_toleration_seconds;
mod limit_ranger;
mod objects;
mod persistent_volume_claim_resize;
mod priority;
mod quantity;
mod runtime_class;
mod storage_object_in_use_protection;
mod taint_nodes_by_condition;
mod tolerations;

use std::sync::Arc;

use super::Admission;
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
}

/// The plugin named `name`, or `None` when this server does not have it.
fn plugin(name: &str, context: &PluginContext) -> Option<Arc<dyn Plugin>> {
    let (storage, flavor) = (context.storage.clone(), context.flavor);
    Some(match name {
        "AlwaysAdmit" => Arc::new(always::AlwaysAdmit),
        "AlwaysDeny" => Arc::new(always::AlwaysDeny),
        "DefaultTolerationSeconds" => Arc::new(
            default_toleration_seconds::DefaultTolerationSeconds::new(flavor),
        ),
        "LimitRanger" => Arc::new(limit_ranger::LimitRanger::new(storage, flavor)),
        "Priority" => Arc::new(priority::Priority::new(storage, flavor)),
        "RuntimeClass" => Arc::new(runtime_class::RuntimeClass::new(storage, flavor)),
        "TaintNodesByCondition" => {
            Arc::new(taint_nodes_by_condition::TaintNodesByCondition::new(flavor))
        }
        "DefaultStorageClass" => Arc::new(default_storage_class::DefaultStorageClass::new(
            storage, flavor,
        )),
        "DefaultIngressClass" => Arc::new(default_ingress_class::DefaultIngressClass::new(
            storage, flavor,
        )),
        "PersistentVolumeClaimResize" => Arc::new(
            persistent_volume_claim_resize::PersistentVolumeClaimResize::new(storage, flavor),
        ),
        "StorageObjectInUseProtection" => {
            Arc::new(storage_object_in_use_protection::StorageObjectInUseProtection::new(flavor))
        }
        _ => return None,
    })
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
