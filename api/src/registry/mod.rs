//! The resource registry: which resource types exist ([`ResourceType`], one table entry each),
//! how each kind behaves ([`Strategy`]), and the one generic [`Store`] that runs every write
//! through the same fixed steps (decode -> defaults -> prepare -> validate -> persist).

pub mod builtin;
mod resource_type;
mod store;
mod stored_json;
mod strategy;

pub use resource_type::CRUD_VERBS;
pub use resource_type::ResourceType;
pub use resource_type::Scope;
pub use resource_type::subresource_verbs;
pub use store::Preconditions;
pub use store::Store;
pub use store::WriteOptions;
pub use stored_json::StoredJson;
pub use stored_json::StoredJsonError;
pub use strategy::DeleteAction;
pub use strategy::Strategy;
pub use strategy::decode_typed;
pub use strategy::has_finalizers;
pub use strategy::mark_for_finalizers;

use crate::flavor::Flavor;

/// Every served resource type with its store, in discovery order.
pub struct Registry {
    stores: Vec<Store>,
}

impl Registry {
    /// The built-in kinds of the core group: Namespace, ConfigMap, Secret, ServiceAccount,
    /// Event.
    pub fn builtin(flavor: Flavor) -> Self {
        Self {
            stores: vec![
                Store::new(
                    builtin::config_map_type(),
                    Box::new(builtin::ConfigMapStrategy),
                ),
                Store::new(builtin::event_type(), Box::new(builtin::EventStrategy)),
                Store::new(
                    builtin::namespace_type(),
                    Box::new(builtin::NamespaceStrategy::new(flavor)),
                ),
                Store::new(builtin::secret_type(), Box::new(builtin::SecretStrategy)),
                Store::new(
                    builtin::service_account_type(),
                    Box::new(builtin::ServiceAccountStrategy),
                ),
            ],
        }
    }

    /// The store of `plural` in `group`/`version`, if served.
    pub fn lookup(&self, group: &str, version: &str, plural: &str) -> Option<&Store> {
        self.stores.iter().find(|s| {
            let r = s.resource();
            r.group == group && r.version == version && r.plural == plural
        })
    }

    /// Every store, in table order.
    pub fn stores(&self) -> impl Iterator<Item = &Store> {
        self.stores.iter()
    }

    /// The store of namespaces, if served (namespaced creates check their namespace in it).
    pub fn namespaces(&self) -> Option<&Store> {
        self.lookup("", "v1", "namespaces")
    }
}
