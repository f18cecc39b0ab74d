//! The resource types the server serves, found by kind or by resource: a policy's
//! `paramKind` names a kind, its params are read under that kind's resource; custom kinds
//! count as soon as the custom resources' table serves them.

use std::sync::Arc;

use crate::registry::Registry;
use crate::registry::ResourceType;
use crate::registry::custom_resource::CustomResources;

/// The served resource types: the built-in ones, fixed at start-up, and the custom ones.
#[derive(Clone)]
pub struct ResourceTable {
    builtin: Arc<[ResourceType]>,
    custom: Arc<CustomResources>,
}

impl ResourceTable {
    /// The table of `registry`'s served types.
    pub fn new(registry: &Registry) -> Self {
        Self {
            builtin: registry.stores().map(|s| s.resource().clone()).collect(),
            custom: registry.custom_resources().clone(),
        }
    }

    /// The served type of `kind` in `group`/`version`.
    pub fn by_kind(&self, group: &str, version: &str, kind: &str) -> Option<ResourceType> {
        let found = |r: &ResourceType| r.group == group && r.version == version && r.kind == kind;
        match self.builtin.iter().find(|r| found(r)) {
            Some(r) => Some(r.clone()),
            None => self.custom.served_types().into_iter().find(found),
        }
    }

    /// The served type of `plural` in `group`/`version`.
    pub fn by_resource(&self, group: &str, version: &str, plural: &str) -> Option<ResourceType> {
        let found =
            |r: &ResourceType| r.group == group && r.version == version && r.plural == plural;
        match self.builtin.iter().find(|r| found(r)) {
            Some(r) => Some(r.clone()),
            None => self.custom.served_types().into_iter().find(found),
        }
    }
}
