//! A resource type as one table entry: its group, version, kinds, names, scope, verbs and
//! subresources, and where its objects are stored (its storage home: keys and storage
//! version).

use super::Subresource;
use crate::group::GroupKind;
use crate::group::GroupResource;

/// Whether objects of a type live in a namespace (R-RES-010).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Names are unique across the cluster (R-RES-014).
    Cluster,
    /// Names are unique within a namespace (R-RES-012).
    Namespaced,
}

/// Where a type's objects are stored: the storage home's key segments and its version. A
/// type that shares another's storage (`events.k8s.io/v1` events in core `v1` events) has
/// that type's location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageLocation {
    /// The group's segment of keys, the same in every flavor (`core`, `apps`,
    /// `rbac.authorization.k8s.io`).
    pub key_group: String,
    /// The plural's segment of keys.
    pub plural: String,
    /// The storage version's group, in the flavor's spelling (empty: core).
    pub group: String,
    /// The storage version.
    pub version: String,
    /// The storage version's kind.
    pub kind: String,
}

/// One served resource of one group version (a row of discovery's `APIResourceList`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceType {
    /// The API group (empty: core).
    pub group: String,
    /// The API version.
    pub version: String,
    /// The kind of one object (`ConfigMap`).
    pub kind: String,
    /// The kind of a collection (`ConfigMapList`, R-RES-006).
    pub list_kind: String,
    /// The plural resource name used in paths (`configmaps`).
    pub plural: String,
    /// The singular name (`configmap`).
    pub singular: String,
    /// Short names for clients (`cm`).
    pub short_names: Vec<String>,
    /// The categories it belongs to (`all`, `api-extensions`), for `kubectl get <category>`.
    pub categories: Vec<String>,
    /// The scope.
    pub scope: Scope,
    /// The verbs the type supports, as discovery lists them.
    pub verbs: Vec<String>,
    /// The names of the served subresources (`status`, `finalize`).
    pub subresources: Vec<String>,
    /// Where its objects are stored.
    pub storage: StorageLocation,
    /// Whether a delete that removes an object answers the object rather than a `Status`
    /// (Kubernetes' `ReturnDeletedObject`).
    pub returns_deleted_object: bool,
}

/// The verbs of a type with full CRUD, in Kubernetes' discovery order.
pub const CRUD_VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// The verbs of a served subresource, as discovery lists them (`status`: read and write;
/// `finalize`: write only); none for a subresource that is not served.
pub fn subresource_verbs(subresource: &str) -> &'static [&'static str] {
    Subresource::served_named(subresource).map_or(&[], Subresource::verbs)
}

impl ResourceType {
    /// `v1` for the core group, `<group>/<version>` otherwise (R-RES-019).
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The resource qualified by its group, for error messages.
    pub fn group_resource(&self) -> GroupResource {
        GroupResource::new(self.group.clone(), self.plural.clone())
    }

    /// The kind qualified by its group, for error messages.
    pub fn group_kind(&self) -> GroupKind {
        GroupKind {
            group: self.group.clone(),
            kind: self.kind.clone(),
        }
    }

    /// Whether objects live in namespaces.
    pub fn is_namespaced(&self) -> bool {
        self.scope == Scope::Namespaced
    }

    /// Whether the type has `subresource` and it serves `verb`.
    pub fn subresource_supports(&self, subresource: &str, verb: &str) -> bool {
        self.subresources.iter().any(|s| s == subresource)
            && subresource_verbs(subresource).contains(&verb)
    }

    /// Whether the type serves `verb`.
    pub fn supports(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }

    /// The key prefix of all objects of the type, from its storage home:
    /// `/registry/<key group>/<plural>/` (the key group is `core` for the core group).
    pub fn key_prefix(&self) -> String {
        format!(
            "/registry/{}/{}/",
            self.storage.key_group, self.storage.plural
        )
    }

    /// The key prefix of the objects in `namespace` (`None`: all objects).
    pub fn collection_key(&self, namespace: Option<&str>) -> String {
        match namespace {
            Some(ns) if self.is_namespaced() => format!("{}{ns}/", self.key_prefix()),
            _ => self.key_prefix(),
        }
    }

    /// The key of the object `name` (in `namespace` for namespaced types):
    /// `/registry/<key group>/<plural>/[<ns>/]<name>`.
    pub fn object_key(&self, namespace: &str, name: &str) -> String {
        if self.is_namespaced() {
            format!("{}{namespace}/{name}", self.key_prefix())
        } else {
            format!("{}{name}", self.key_prefix())
        }
    }
}

/// An object's storage key read back into its parts ([`ResourceType::object_key`] writes
/// it); neither a namespace nor a name ever holds a `/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectKey<'a> {
    /// The key group (`core` for the core group).
    pub key_group: &'a str,
    /// The resource's plural.
    pub plural: &'a str,
    /// The namespace (empty: cluster scoped).
    pub namespace: &'a str,
    /// The name.
    pub name: &'a str,
}

impl<'a> ObjectKey<'a> {
    /// The API group (empty for the core group, whose key group is `core`).
    pub fn api_group(&self) -> &'a str {
        match self.key_group {
            "core" => "",
            group => group,
        }
    }

    /// The parts of `key`; `None` for a key outside `/registry/<key group>/<plural>/`.
    pub fn parse(key: &'a str) -> Option<Self> {
        let mut parts = key.strip_prefix("/registry/")?.splitn(3, '/');
        let (key_group, plural, object) = (parts.next()?, parts.next()?, parts.next()?);
        let (namespace, name) = object.rsplit_once('/').unwrap_or(("", object));
        (!name.is_empty()).then_some(Self {
            key_group,
            plural,
            namespace,
            name,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(group: &str, plural: &str, scope: Scope) -> ResourceType {
        ResourceType {
            group: group.into(),
            version: "v1".into(),
            kind: "K".into(),
            list_kind: "KList".into(),
            plural: plural.into(),
            singular: "k".into(),
            short_names: vec![],
            categories: vec![],
            scope,
            verbs: CRUD_VERBS.iter().map(|v| (*v).to_owned()).collect(),
            subresources: vec![],
            storage: StorageLocation {
                key_group: if group.is_empty() { "core" } else { group }.into(),
                plural: plural.into(),
                group: group.into(),
                version: "v1".into(),
                kind: "K".into(),
            },
            returns_deleted_object: false,
        }
    }

    // R-RES-019
    #[test]
    fn keys_and_api_versions() {
        let cm = ty("", "configmaps", Scope::Namespaced);
        assert_eq!(cm.api_version(), "v1");
        assert_eq!(
            cm.object_key("default", "x"),
            "/registry/core/configmaps/default/x"
        );
        assert_eq!(
            cm.collection_key(Some("default")),
            "/registry/core/configmaps/default/"
        );
        assert_eq!(cm.collection_key(None), "/registry/core/configmaps/");
        let cr = ty("rbac.authorization.k8s.io", "clusterroles", Scope::Cluster);
        assert_eq!(cr.api_version(), "rbac.authorization.k8s.io/v1");
        assert_eq!(
            cr.object_key("", "r"),
            "/registry/rbac.authorization.k8s.io/clusterroles/r"
        );
        assert_eq!(
            cr.collection_key(Some("ignored")),
            "/registry/rbac.authorization.k8s.io/clusterroles/"
        );
        assert_eq!(
            cr.group_resource().to_string(),
            "clusterroles.rbac.authorization.k8s.io"
        );
        assert!(cr.supports("deletecollection") && !cr.supports("proxy"));
    }

    // R-RES-110: a field selector on the namespace or name is judged by the key.
    #[test]
    fn object_keys_read_back_into_their_parts() {
        let pods = ty("", "pods", Scope::Namespaced);
        let key = pods.object_key("ns", "web");
        assert_eq!(
            ObjectKey::parse(&key),
            Some(ObjectKey {
                key_group: "core",
                plural: "pods",
                namespace: "ns",
                name: "web",
            })
        );
        let roles = ty("rbac.authorization.k8s.io", "clusterroles", Scope::Cluster);
        let key = roles.object_key("", "system:aggregate-to-view");
        let parsed = ObjectKey::parse(&key).expect("an object key");
        assert_eq!(
            (parsed.namespace, parsed.name),
            ("", "system:aggregate-to-view")
        );
        assert_eq!(parsed.api_group(), "rbac.authorization.k8s.io");
        assert_eq!(
            ObjectKey::parse("/registry/core/pods/ns/web").map(|k| k.api_group()),
            Some("")
        );
        assert_eq!(ObjectKey::parse("/registry/core/pods/"), None);
        assert_eq!(ObjectKey::parse("/other/core/pods/ns/web"), None);
    }
}
