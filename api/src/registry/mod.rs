//! The resource registry: which resource types exist ([`ResourceType`], one table entry each),
//! how each kind behaves ([`Strategy`]), and the one generic [`Store`] that runs every write
//! through the same fixed steps (decode -> defaults -> prepare -> validate -> persist), one
//! file per step under `store/`.
//!
//! The domain logic Kubernetes keeps in its registry packages beside the generic store lives
//! here too: the subresources with code of their own (`subresource`: scale, binding, eviction
//! and disruption budgets, service account tokens) and the reviews (`review`: access, rules
//! and token reviews). The HTTP handlers only decode requests for them and render answers.

pub mod allocator;
pub mod builtin;
pub mod conversion;
mod corrupt;
pub mod custom_resource;
mod deletion;
mod resource_type;
pub(crate) mod review;
mod runtime_config;
mod store;
mod stored_json;
mod strategy;
pub(crate) mod subresource;

pub(crate) use store::generated_name;

pub use corrupt::CorruptObject;
pub use corrupt::CorruptObjects;
pub use corrupt::IGNORE_READ_ERRORS;
pub use corrupt::MAX_REPORTED;
pub use deletion::DeleteAction;
pub use deletion::DeleteOptions;
pub use deletion::Deleted;
pub use deletion::FOREGROUND_FINALIZER;
pub use deletion::GcPolicy;
pub use deletion::ORPHAN_FINALIZER;
pub use deletion::Preconditions;
pub use deletion::PropagationPolicy;
pub use deletion::plan_delete;
pub use resource_type::CRUD_VERBS;
pub use resource_type::ObjectKey;
pub use resource_type::ResourceType;
pub use resource_type::Scope;
pub use resource_type::StorageLocation;
pub use resource_type::subresource_verbs;
pub use runtime_config::RuntimeConfig;
pub use runtime_config::RuntimeConfigError;
pub use store::Applied;
pub use store::CustomKind;
pub use store::ListBody;
pub use store::ProtobufListBody;
pub(crate) use store::ReadConversion;
pub use store::Store;
pub use store::SubresourceWrite;
pub use store::WriteAuthorization;
pub use store::WriteManager;
pub use store::WriteOptions;
pub use store::Written;
pub use stored_json::StoredJson;
pub use stored_json::StoredJsonError;
pub use strategy::Strategy;
pub use strategy::has_finalizers;
pub(crate) use subresource::Parent;
pub use subresource::ScalePaths;
pub use subresource::Subresource;
pub use subresource::subresource_kind;

use self::allocator::ServiceAllocator;
use self::allocator::ServiceRanges;
use self::custom_resource::CustomResources;
use crate::flavor::Flavor;
use crate::random::RandomSource;

/// The built-in resource types: the stores of the served ones, in discovery order, and the
/// registered rows that are not served (off, or waiting for conversions). Computed kinds
/// (reviews, componentstatuses, bindings) have stores too, which only carry their resource
/// types: their handlers answer them and never touch storage through them.
pub struct Registry {
    stores: Vec<Store>,
    unserved: Vec<ResourceType>,
    /// The custom resources' stores, kept current with their definitions.
    custom: std::sync::Arc<CustomResources>,
}

/// A served store: a built-in one the registry owns, or a custom one shared with the table
/// it came from (which may have moved on since).
pub enum StoreRef<'a> {
    /// A built-in kind's store.
    Builtin(&'a Store),
    /// A custom kind's store.
    Custom(std::sync::Arc<Store>),
}

impl std::ops::Deref for StoreRef<'_> {
    type Target = Store;

    fn deref(&self) -> &Store {
        match self {
            Self::Builtin(store) => store,
            Self::Custom(store) => store,
        }
    }
}

impl Registry {
    /// The built-in table with the default enablement.
    pub fn builtin(flavor: Flavor) -> Self {
        Self::new(flavor, &RuntimeConfig::default())
    }

    /// The built-in table as `runtime_config` enables it: a row is served when it is enabled
    /// and owns its storage or shares one through a conversion. A shared row's store keys
    /// its objects by its storage home and writes them through the home row's store.
    pub fn new(flavor: Flavor, runtime_config: &RuntimeConfig) -> Self {
        let table = builtin::rows();
        let store_of = |row: &builtin::Row, home: &builtin::Row| {
            Store::new(row.resource_type_in(home, flavor), row.new_strategy(flavor))
                .with_schema(row.schema())
                .builtin_in(flavor)
        };
        let mut stores = Vec::new();
        let mut unserved = Vec::new();
        for row in &table {
            if !(row.is_servable() && runtime_config.enabled(row, flavor)) {
                unserved.push(row.resource_type(flavor));
                continue;
            }
            let store = match row.storage {
                builtin::StorageHome::Shared(home) => {
                    let found = table.iter().find(|h| home.is(h));
                    match (home.conversion, found) {
                        (Some(conversion), Some(home)) => {
                            store_of(row, home).stored_in(store_of(home, home), conversion, flavor)
                        }
                        _ => {
                            unserved.push(row.resource_type(flavor));
                            continue;
                        }
                    }
                }
                _ => store_of(row, row),
            };
            stores.push(store);
        }
        let custom = std::sync::Arc::new(CustomResources::new(flavor));
        Self {
            stores,
            unserved,
            custom,
        }
        .with_service_ranges(flavor, ServiceRanges::default())
        .with_escalation_checks(flavor)
    }

    /// The registry with the RBAC kinds' stores refusing roles and bindings that grant more
    /// than their writer holds (crate::auth::rbac's escalation prevention).
    fn with_escalation_checks(mut self, flavor: Flavor) -> Self {
        self.stores = std::mem::take(&mut self.stores)
            .into_iter()
            .map(
                |s| match crate::auth::rbac::EscalationCheck::for_type(flavor, s.resource()) {
                    Some(check) => s.with_write_authorization(std::sync::Arc::new(check)),
                    None => s,
                },
            )
            .collect();
        self
    }

    /// The registry with Services allocating from `ranges` (`--service-cluster-ip-range`,
    /// `--service-node-port-range`); cluster IPs are recorded as IPAddress objects whether
    /// or not that kind is served.
    pub fn with_service_ranges(mut self, flavor: Flavor, ranges: ServiceRanges) -> Self {
        let ip_addresses = self
            .stores
            .iter()
            .map(Store::resource)
            .chain(&self.unserved)
            .find(|r| r.kind == "IPAddress" && r.version == "v1")
            .cloned();
        let Some(ip_addresses) = ip_addresses else {
            return self;
        };
        let allocator = ServiceAllocator::new(ranges, ip_addresses, flavor);
        self.stores = std::mem::take(&mut self.stores)
            .into_iter()
            .map(|s| {
                let r = s.resource();
                if r.group.is_empty() && r.plural == "services" {
                    s.with_allocator(allocator.clone())
                } else {
                    s
                }
            })
            .collect();
        self
    }

    /// The registry with every store refusing objects whose stored form has more than `limit`
    /// bytes (`--max-object-bytes`).
    pub fn with_max_object_bytes(mut self, limit: usize) -> Self {
        self.custom.set_max_object_bytes(limit);
        self.stores = std::mem::take(&mut self.stores)
            .into_iter()
            .map(|s| s.with_max_object_bytes(limit))
            .collect();
        self
    }

    /// The registry with every store admitting the writes of requests through `admission`.
    pub fn with_admission(
        mut self,
        admission: std::sync::Arc<crate::admission::Admission>,
    ) -> Self {
        self.custom.set_admission(admission.clone());
        self.stores = std::mem::take(&mut self.stores)
            .into_iter()
            .map(|s| s.with_admission(admission.clone()))
            .collect();
        self
    }

    /// The registry with every store drawing uids and generated names from `random`; call it
    /// after the other builders, as it reaches into what they set up.
    pub fn with_random(mut self, random: &RandomSource) -> Self {
        self.custom.set_random(random);
        self.stores = std::mem::take(&mut self.stores)
            .into_iter()
            .map(|s| s.with_random(random))
            .collect();
        self
    }

    /// The store of built-in `plural` in `group`/`version`, if served.
    pub fn builtin_store(&self, group: &str, version: &str, plural: &str) -> Option<&Store> {
        self.stores.iter().find(|s| {
            let r = s.resource();
            r.group == group && r.version == version && r.plural == plural
        })
    }

    /// The store of `plural` in `group`/`version`, built-in or custom, if served.
    pub fn lookup(&self, group: &str, version: &str, plural: &str) -> Option<StoreRef<'_>> {
        match self.builtin_store(group, version, plural) {
            Some(store) => Some(StoreRef::Builtin(store)),
            None => (self.custom.lookup(group, version, plural)).map(StoreRef::Custom),
        }
    }

    /// The custom resources' table.
    pub fn custom_resources(&self) -> &std::sync::Arc<CustomResources> {
        &self.custom
    }

    /// The resource types discovery lists, in its order: the built-in ones, then the
    /// established custom ones.
    pub fn served_types(&self) -> Vec<ResourceType> {
        (self.stores.iter().map(|s| s.resource().clone()))
            .chain(self.custom.served_types())
            .collect()
    }

    /// A number that changes whenever what the registry serves does.
    pub fn generation(&self) -> u64 {
        self.custom.generation()
    }

    /// The registered resource types that are not served.
    pub fn unserved(&self) -> impl Iterator<Item = &ResourceType> {
        self.unserved.iter()
    }

    /// Every built-in store, in table order.
    pub fn stores(&self) -> impl Iterator<Item = &Store> {
        self.stores.iter()
    }

    /// The store of namespaces, if served (namespaced creates check their namespace in it).
    pub fn namespaces(&self) -> Option<&Store> {
        self.builtin_store("", "v1", "namespaces")
    }
}
