//! One row of the built-in table: `kind::<T>()` reads group, version, kind, list kind, plural
//! and scope from k8s-openapi's `Resource` constants, and builder methods add what those
//! constants lack (short names, categories, verbs, subresources, enablement, storage home,
//! strategy).

use k8s_openapi::ClusterResourceScope;
use k8s_openapi::ListableResource;
use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::Resource;
use schemars::JsonSchema;

use super::generic::GenericStrategy;
use crate::flavor::Flavor;
use crate::registry::ResourceType;
use crate::registry::Scope;
use crate::registry::Strategy;
use crate::registry::Subresource;
use crate::registry::conversion::Conversion;
use crate::registry::conversion::IDENTITY;
use crate::registry::resource_type::CRUD_VERBS;
use crate::registry::resource_type::StorageLocation;
use crate::schema;
use crate::schema::SchemaFn;

/// An API group's name, with the domain left to the flavor (DESIGN.md §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupName {
    /// The core group (`""`, served under `/api`).
    Core,
    /// A group without a domain (`apps`, `batch`, `policy`, `autoscaling`).
    Plain(&'static str),
    /// A group under the flavor's domain: `Domain("rbac.authorization")` is
    /// `rbac.authorization.k8s.io` or `rbac.authorization.platform.io`.
    Domain(&'static str),
}

impl GroupName {
    /// The group of a k8s-openapi `GROUP` constant: a `.k8s.io` suffix is the flavor's domain.
    pub fn of_k8s(group: &'static str) -> Self {
        if group.is_empty() {
            Self::Core
        } else if let Some(prefix) = group.strip_suffix(".k8s.io") {
            Self::Domain(prefix)
        } else {
            Self::Plain(group)
        }
    }

    /// The group's segment in storage keys, the same in every flavor: `core`, the plain name,
    /// or the `k8s.io` spelling k8s-openapi uses (stored keys never change with `--flavor`).
    pub fn storage_name(self) -> String {
        match self {
            Self::Core => "core".to_owned(),
            Self::Plain(name) => name.to_owned(),
            Self::Domain(prefix) => format!("{prefix}.k8s.io"),
        }
    }

    /// The group's name in `flavor` (empty for core).
    pub fn name(self, flavor: Flavor) -> String {
        match self {
            Self::Core => String::new(),
            Self::Plain(name) => name.to_owned(),
            Self::Domain(prefix) => format!("{prefix}.{}", flavor.group_domain()),
        }
    }
}

/// The stability level of an API version, which decides whether it is on by default
/// (R-VER-059..061).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// `v1`, `v2`: on by default.
    Ga,
    /// `v1beta1`: off by default unless introduced before 1.22 (none in the table are).
    Beta,
    /// `v1alpha1`: always off by default.
    Alpha,
}

impl Stage {
    /// The stage of a version string.
    pub fn of(version: &str) -> Self {
        if version.contains("alpha") {
            Self::Alpha
        } else if version.contains("beta") {
            Self::Beta
        } else {
            Self::Ga
        }
    }
}

/// The verbs a row serves, as discovery lists them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verbs {
    /// create, delete, deletecollection, get, list, patch, update, watch.
    Crud,
    /// CRUD without deletecollection (namespaces).
    NoCollectionDelete,
    /// create only (bindings and the reviews).
    CreateOnly,
    /// get and list only (componentstatuses).
    GetList,
}

impl Verbs {
    /// The verb names, in Kubernetes' discovery order.
    pub fn names(self) -> Vec<String> {
        let keep = |v: &str| match self {
            Self::Crud => true,
            Self::NoCollectionDelete => v != "deletecollection",
            Self::CreateOnly => v == "create",
            Self::GetList => v == "get" || v == "list",
        };
        CRUD_VERBS
            .iter()
            .filter(|v| keep(v))
            .map(|v| (*v).to_owned())
            .collect()
    }
}

/// Where a row's objects are stored.
#[derive(Clone, Copy)]
pub enum StorageHome {
    /// Under its own group and plural.
    Own,
    /// In another row's storage (Kubernetes "cohabitation").
    Shared(SharedHome),
    /// Nothing is stored: the answer is computed (reviews, componentstatuses, bindings).
    Virtual,
}

/// The home of a row stored with another version's objects.
#[derive(Clone, Copy)]
pub struct SharedHome {
    /// The home row's group.
    pub group: GroupName,
    /// The home row's version.
    pub version: &'static str,
    /// The home row's plural.
    pub plural: &'static str,
    /// The home kind's compiled schema (compared with the row's for [`IDENTITY`]).
    pub schema: SchemaFn,
    /// How objects convert between the row's version and the home's; without one the row
    /// cannot be served.
    pub conversion: Option<&'static dyn Conversion>,
}

impl SharedHome {
    /// Whether `row` is this home.
    pub fn is(&self, row: &Row) -> bool {
        row.group == self.group && row.version == self.version && row.plural == self.plural
    }
}

impl std::fmt::Debug for StorageHome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Own => f.write_str("Own"),
            Self::Virtual => f.write_str("Virtual"),
            Self::Shared(h) => write!(
                f,
                "Shared({:?}/{}/{}, converted: {})",
                h.group,
                h.version,
                h.plural,
                h.conversion.is_some()
            ),
        }
    }
}

/// The strategy constructor of a row with its own rules.
pub type StrategyFn = fn(Flavor) -> Box<dyn Strategy>;

/// Adds a kind's JSON schema (and every schema it references) to a generator's definitions
/// and answers the reference to it (the OpenAPI documents are built from these).
pub type JsonSchemaFn = fn(&mut schemars::SchemaGenerator) -> schemars::Schema;

/// One group/version/resource of the built-in table.
#[derive(Clone)]
pub struct Row {
    /// The API group.
    pub group: GroupName,
    /// The version (`v1`, `v1beta2`).
    pub version: &'static str,
    /// The kind of one object.
    pub kind: &'static str,
    /// The kind of a collection (empty for the virtual kinds, which have none).
    pub list_kind: &'static str,
    /// The plural resource name used in paths.
    pub plural: &'static str,
    /// Cluster or namespace scope.
    pub scope: Scope,
    /// Short names for clients.
    pub short_names: &'static [&'static str],
    /// Categories (`all`, `api-extensions`).
    pub categories: &'static [&'static str],
    /// The verbs.
    pub verbs: Verbs,
    /// Every subresource Kubernetes has for the row (served or not).
    pub subresources: Vec<Subresource>,
    /// Whether it is served without `--runtime-config`.
    pub default_on: bool,
    /// Where its objects live.
    pub storage: StorageHome,
    /// Whether a delete that removes an object answers the object rather than a `Status`
    /// (Kubernetes' `ReturnDeletedObject`).
    pub returns_deleted_object: bool,
    strategy: Option<StrategyFn>,
    schema: SchemaFn,
    json_schema: JsonSchemaFn,
}

/// The scope of a k8s-openapi scope marker type.
pub trait ScopeOf {
    /// The scope.
    const SCOPE: Scope;
}

impl ScopeOf for ClusterResourceScope {
    const SCOPE: Scope = Scope::Cluster;
}

impl ScopeOf for NamespaceResourceScope {
    const SCOPE: Scope = Scope::Namespaced;
}

/// A row for a listable kind, from its k8s-openapi constants: full CRUD, stored under its
/// own group, on by default when its version is GA.
pub fn kind<T>() -> Row
where
    T: Resource + ListableResource + JsonSchema,
    T::Scope: ScopeOf,
{
    Row {
        list_kind: T::LIST_KIND,
        ..base::<T>()
    }
}

/// A row for a computed kind that is created but never stored (reviews, bindings).
pub fn virtual_kind<T>() -> Row
where
    T: Resource + JsonSchema,
    T::Scope: ScopeOf,
{
    Row {
        verbs: Verbs::CreateOnly,
        storage: StorageHome::Virtual,
        ..base::<T>()
    }
}

fn base<T>() -> Row
where
    T: Resource + JsonSchema,
    T::Scope: ScopeOf,
{
    Row {
        group: GroupName::of_k8s(T::GROUP),
        version: T::VERSION,
        kind: T::KIND,
        list_kind: "",
        plural: T::URL_PATH_SEGMENT,
        scope: <T::Scope as ScopeOf>::SCOPE,
        short_names: &[],
        categories: &[],
        verbs: Verbs::Crud,
        subresources: Vec::new(),
        default_on: Stage::of(T::VERSION) == Stage::Ga,
        storage: StorageHome::Own,
        returns_deleted_object: false,
        strategy: None,
        schema: schema::of::<T>,
        json_schema: |generator| generator.subschema_for::<T>(),
    }
}

impl Row {
    /// Sets the short names.
    pub fn short(mut self, names: &'static [&'static str]) -> Self {
        self.short_names = names;
        self
    }

    /// Puts the row in the `all` category.
    pub fn all(mut self) -> Self {
        self.categories = &["all"];
        self
    }

    /// Puts the row in the `api-extensions` category.
    pub fn api_extensions(mut self) -> Self {
        self.categories = &["api-extensions"];
        self
    }

    /// Sets the verbs.
    pub fn verbs(mut self, verbs: Verbs) -> Self {
        self.verbs = verbs;
        self
    }

    /// Adds a subresource.
    pub fn subresource(mut self, subresource: Subresource) -> Self {
        self.subresources.push(subresource);
        self
    }

    /// Adds the `status` subresource.
    pub fn status(self) -> Self {
        self.subresource(Subresource::Status)
    }

    /// Adds the `scale` and `status` subresources.
    pub fn scale(self) -> Self {
        self.subresource(Subresource::Scale).status()
    }

    /// Off by default, whatever its stage (a GA kind behind a feature gate).
    pub fn off(mut self) -> Self {
        self.default_on = false;
        self
    }

    /// Computed, not stored (componentstatuses).
    pub fn computed(mut self) -> Self {
        self.storage = StorageHome::Virtual;
        self
    }

    /// Stored in `H`'s storage (another version or group of the same objects), not servable
    /// until a conversion exists.
    pub fn shares<H>(mut self) -> Self
    where
        H: Resource + JsonSchema,
    {
        self.storage = StorageHome::Shared(SharedHome {
            group: GroupName::of_k8s(H::GROUP),
            version: H::VERSION,
            plural: H::URL_PATH_SEGMENT,
            schema: schema::of::<H>,
            conversion: None,
        });
        self
    }

    /// Stored in `H`'s storage, served through `conversion`.
    pub fn stored_as<H>(self, conversion: &'static dyn Conversion) -> Self
    where
        H: Resource + JsonSchema,
    {
        let mut row = self.shares::<H>();
        if let StorageHome::Shared(home) = &mut row.storage {
            home.conversion = Some(conversion);
        }
        row
    }

    /// Stored in `H`'s storage, whose schema is structurally the same ([`IDENTITY`]).
    pub fn same_as<H>(self) -> Self
    where
        H: Resource + JsonSchema,
    {
        self.stored_as::<H>(&IDENTITY)
    }

    /// A delete that removes an object answers the object (Kubernetes' `ReturnDeletedObject`).
    pub fn returns_deleted_object(mut self) -> Self {
        self.returns_deleted_object = true;
        self
    }

    /// Uses the kind's own strategy instead of [`GenericStrategy`].
    pub fn strategy(mut self, strategy: StrategyFn) -> Self {
        self.strategy = Some(strategy);
        self
    }

    /// The version's stability level.
    pub fn stage(&self) -> Stage {
        Stage::of(self.version)
    }

    /// Whether the server can serve the row in this build: it owns its storage, shares one
    /// through a conversion, or is computed (its store only carries the resource type; the
    /// handlers answer it).
    pub fn is_servable(&self) -> bool {
        match self.storage {
            StorageHome::Own | StorageHome::Virtual => true,
            StorageHome::Shared(home) => home.conversion.is_some(),
        }
    }

    /// Whether the row has a `status` subresource.
    pub fn has_status(&self) -> bool {
        self.subresources.contains(&Subresource::Status)
    }

    /// The kind's compiled schema (bodies are decoded and checked against it).
    pub fn schema(&self) -> SchemaFn {
        self.schema
    }

    /// The kind's JSON schema generator (for the OpenAPI documents).
    pub fn json_schema(&self) -> JsonSchemaFn {
        self.json_schema
    }

    /// Where the row's objects are stored, given its storage home `home` (the row itself
    /// when it owns its storage): keys spell the home's group as k8s-openapi does, so they do
    /// not depend on the flavor, and `storageVersionHash` names the home's version.
    pub fn storage_location(&self, home: &Row, flavor: Flavor) -> StorageLocation {
        StorageLocation {
            key_group: home.group.storage_name(),
            plural: home.plural.to_owned(),
            group: home.group.name(flavor),
            version: home.version.to_owned(),
            kind: home.kind.to_owned(),
        }
    }

    /// The resource type the row serves in `flavor`, stored as its own version (see
    /// [`Self::resource_type_in`] for a shared storage home).
    pub fn resource_type(&self, flavor: Flavor) -> ResourceType {
        self.resource_type_in(self, flavor)
    }

    /// The resource type the row serves in `flavor`, with its objects stored as `home`'s.
    pub fn resource_type_in(&self, home: &Row, flavor: Flavor) -> ResourceType {
        ResourceType {
            storage: self.storage_location(home, flavor),
            returns_deleted_object: self.returns_deleted_object,
            group: self.group.name(flavor),
            version: self.version.to_owned(),
            kind: self.kind.to_owned(),
            list_kind: self.list_kind.to_owned(),
            plural: self.plural.to_owned(),
            singular: self.kind.to_ascii_lowercase(),
            short_names: self.short_names.iter().map(|s| (*s).to_owned()).collect(),
            categories: self.categories.iter().map(|s| (*s).to_owned()).collect(),
            scope: self.scope,
            verbs: self.verbs.names(),
            subresources: self
                .subresources
                .iter()
                .filter(|s| s.is_served())
                .map(|s| s.name().to_owned())
                .collect(),
        }
    }

    /// The row's strategy: its own, or the generic one (generation tracked when the kind has
    /// a status subresource, as Kubernetes does for kinds with a spec).
    pub fn new_strategy(&self, flavor: Flavor) -> Box<dyn Strategy> {
        match self.strategy {
            Some(make) => make(flavor),
            None => Box::new(GenericStrategy::new(self.has_status())),
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::rbac::v1::ClusterRole;

    use super::*;

    #[test]
    fn rows_come_from_the_k8s_openapi_constants() {
        let d = kind::<Deployment>().short(&["deploy"]).all().scale();
        let t = d.resource_type(Flavor::Platform);
        assert_eq!(t.api_version(), "apps/v1");
        assert_eq!(
            (t.kind.as_str(), t.list_kind.as_str(), t.plural.as_str()),
            ("Deployment", "DeploymentList", "deployments")
        );
        assert_eq!(t.singular, "deployment");
        assert_eq!(t.scope, Scope::Namespaced);
        assert_eq!(t.categories, vec!["all"]);
        assert_eq!(t.subresources, vec!["scale", "status"]);
        assert!(d.default_on);

        let cr = kind::<ClusterRole>();
        assert_eq!(cr.scope, Scope::Cluster);
        assert_eq!(
            cr.resource_type(Flavor::Platform).api_version(),
            "rbac.authorization.platform.io/v1"
        );
        assert_eq!(
            cr.resource_type(Flavor::Kubernetes).api_version(),
            "rbac.authorization.k8s.io/v1"
        );
    }

    // Keys come from the storage home and are the same in both flavors, so a platform- and a
    // kubernetes-flavored server store the same objects under the same keys.
    #[test]
    fn keys_come_from_the_storage_home_in_every_flavor() {
        use k8s_openapi::api::core::v1::Event;
        use k8s_openapi::api::events::v1::Event as EventsEvent;
        let cr = kind::<ClusterRole>();
        for flavor in [Flavor::Platform, Flavor::Kubernetes] {
            assert_eq!(
                cr.resource_type(flavor).object_key("", "r"),
                "/registry/rbac.authorization.k8s.io/clusterroles/r"
            );
        }
        let core = kind::<Event>();
        let events = kind::<EventsEvent>().stored_as::<Event>(&IDENTITY);
        let served = events.resource_type_in(&core, Flavor::Platform);
        assert_eq!(served.api_version(), "events.platform.io/v1");
        assert_eq!(
            served.object_key("default", "e"),
            core.resource_type(Flavor::Kubernetes)
                .object_key("default", "e")
        );
        assert_eq!(
            (served.storage.group.as_str(), served.storage.kind.as_str()),
            ("", "Event")
        );
        assert!(events.is_servable());
        assert!(!kind::<EventsEvent>().shares::<Event>().is_servable());
    }

    // R-VER-059, R-VER-060, R-VER-061
    #[test]
    fn stages_decide_the_default() {
        assert_eq!(Stage::of("v2"), Stage::Ga);
        assert_eq!(Stage::of("v1beta2"), Stage::Beta);
        assert_eq!(Stage::of("v1alpha3"), Stage::Alpha);
        assert_eq!(Verbs::NoCollectionDelete.names().len(), 7);
        assert_eq!(Verbs::GetList.names(), vec!["get", "list"]);
    }
}
