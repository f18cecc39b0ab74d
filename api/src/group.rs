//! API identity: a resource or a kind qualified by its API group, as Kubernetes'
//! `schema.GroupResource` and `schema.GroupKind` name them in URLs, errors and discovery.

use std::fmt;

/// A resource qualified by its group (`configmaps`, `deployments.apps`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GroupResource {
    /// The API group (empty: core).
    pub group: String,
    /// The plural resource name.
    pub resource: String,
}

impl GroupResource {
    /// The resource `resource` of `group`.
    pub fn new(group: impl Into<String>, resource: impl Into<String>) -> Self {
        Self {
            group: group.into(),
            resource: resource.into(),
        }
    }
}

impl fmt::Display for GroupResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.resource)
        } else {
            write!(f, "{}.{}", self.resource, self.group)
        }
    }
}

/// A kind qualified by its group (`ConfigMap`, `Deployment.apps`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GroupKind {
    /// The API group (empty: core).
    pub group: String,
    /// The kind.
    pub kind: String,
}

impl fmt::Display for GroupKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.kind)
        } else {
            write!(f, "{}.{}", self.kind, self.group)
        }
    }
}
