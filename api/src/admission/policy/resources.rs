//! The resource types the server serves, found by kind or by resource: a policy's
//! `paramKind` names a kind, its params are read under that kind's resource; custom kinds
//! count as soon as the custom resources' table serves them. Also the types equivalent to a
//! written one (`matchPolicy: Equivalent`) and the conversion of an object to one of them.

use std::sync::Arc;
use std::sync::OnceLock;

use serde_json::Value;

use crate::error::ApiError;
use crate::registry::ReadConversion;
use crate::registry::Registry;
use crate::registry::ResourceType;
use crate::registry::custom_resource::CustomResources;

/// A built-in served type and how it reads objects of its storage version.
#[derive(Clone)]
struct Builtin {
    resource: ResourceType,
    reader: Option<ReadConversion>,
}

/// The served resource types: the built-in ones, fixed at start-up, and the custom ones.
#[derive(Clone)]
pub struct ResourceTable {
    builtin: Arc<[Builtin]>,
    custom: Arc<CustomResources>,
}

/// Whether `a` and `b` are the same resource in two versions (or groups): their objects
/// are stored together, under one plural (Kubernetes' equivalent resources).
fn equivalent(a: &ResourceType, b: &ResourceType) -> bool {
    a.plural == b.plural
        && a.storage.key_group == b.storage.key_group
        && a.storage.plural == b.storage.plural
        && (a.group != b.group || a.version != b.version)
}

impl ResourceTable {
    /// The table of `registry`'s served types.
    pub fn new(registry: &Registry) -> Self {
        Self {
            builtin: (registry.stores())
                .map(|s| Builtin {
                    resource: s.resource().clone(),
                    reader: s.read_conversion(),
                })
                .collect(),
            custom: registry.custom_resources().clone(),
        }
    }

    /// The served type of `kind` in `group`/`version`.
    pub fn by_kind(&self, group: &str, version: &str, kind: &str) -> Option<ResourceType> {
        let found = |r: &ResourceType| r.group == group && r.version == version && r.kind == kind;
        match self.builtin.iter().find(|b| found(&b.resource)) {
            Some(b) => Some(b.resource.clone()),
            None => self.custom.served_types().into_iter().find(found),
        }
    }

    /// The served type of `plural` in `group`/`version`.
    pub fn by_resource(&self, group: &str, version: &str, plural: &str) -> Option<ResourceType> {
        let found =
            |r: &ResourceType| r.group == group && r.version == version && r.plural == plural;
        match self.builtin.iter().find(|b| found(&b.resource)) {
            Some(b) => Some(b.resource.clone()),
            None => self.custom.served_types().into_iter().find(found),
        }
    }

    /// The other served types of `resource`'s objects (its other versions; a built-in type
    /// sharing another's storage), in discovery's order.
    pub fn equivalents(&self, resource: &ResourceType) -> Vec<ResourceType> {
        let builtin: Vec<ResourceType> = (self.builtin.iter())
            .filter(|b| equivalent(&b.resource, resource))
            .map(|b| b.resource.clone())
            .collect();
        let is_builtin = (self.builtin.iter())
            .any(|b| b.resource.group == resource.group && b.resource.plural == resource.plural);
        match is_builtin {
            true => builtin,
            false => (self.custom.served_types().into_iter())
                .filter(|r| equivalent(r, resource))
                .collect(),
        }
    }

    /// How the served type `of` reads stored objects (`None`: as they are stored).
    fn reader(&self, of: &ResourceType) -> Option<ReadConversion> {
        match self.builtin.iter().find(|b| same(&b.resource, of)) {
            Some(b) => b.reader.clone(),
            None => (self.custom.lookup(&of.group, &of.version, &of.plural))
                .and_then(|store| store.read_conversion()),
        }
    }

    /// `object`, an object of `to`'s resource as admission sees it (in the storage version),
    /// in `to`'s version: converted as reads of `to` convert it (a custom resource's
    /// conversion webhook is called), or only renamed when `to` reads objects as stored.
    pub async fn convert(&self, to: &ResourceType, object: Value) -> Result<Value, ApiError> {
        match self.reader(to) {
            Some(reader) => reader.served(object).await,
            None => Ok(renamed(object, to)),
        }
    }
    /// `object`, an object of the equivalent type `from`, back in `home`, the type admission
    /// sees its resource as (a mutating webhook's answer to an object sent converted).
    pub async fn convert_back(
        &self,
        from: &ResourceType,
        home: &ResourceType,
        object: Value,
    ) -> Result<Value, ApiError> {
        match self.reader(from) {
            Some(reader) => reader.stored(object, home).await,
            None => Ok(renamed(object, home)),
        }
    }
}

/// Whether `a` and `b` are the same served type.
fn same(a: &ResourceType, b: &ResourceType) -> bool {
    a.group == b.group && a.version == b.version && a.plural == b.plural
}

/// `object` with `to`'s `apiVersion` and `kind`.
fn renamed(mut object: Value, to: &ResourceType) -> Value {
    if let Some(map) = object.as_object_mut() {
        map.insert("apiVersion".to_owned(), to.api_version().into());
        map.insert("kind".to_owned(), to.kind.clone().into());
    }
    object
}

/// The types equivalent to one written type, looked up once per write, when a rule first
/// needs them.
pub struct Equivalents<'a> {
    table: &'a ResourceTable,
    resource: &'a ResourceType,
    found: OnceLock<Vec<ResourceType>>,
}

impl<'a> Equivalents<'a> {
    /// The equivalents of `resource` in `table`, not looked up yet.
    pub fn new(table: &'a ResourceTable, resource: &'a ResourceType) -> Self {
        Self {
            table,
            resource,
            found: OnceLock::new(),
        }
    }

    /// The equivalent types.
    pub fn get(&self) -> &[ResourceType] {
        self.found
            .get_or_init(|| self.table.equivalents(self.resource))
    }
}
