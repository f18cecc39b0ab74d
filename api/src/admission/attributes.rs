//! What an admission plugin knows of a write: Kubernetes' `admission.Attributes` less the
//! objects, which the plugin receives beside them.

use crate::auth::UserInfo;
use crate::patch::Shape;
use crate::registry::DeleteOptions;
use crate::registry::ResourceType;

/// The operation admitted, as AdmissionReview spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// A create (POST, or an apply or update that creates).
    Create,
    /// An update (PUT, PATCH, apply, a subresource's write).
    Update,
    /// A delete (also each object of a delete collection).
    Delete,
    /// A connect-like request (`pods/exec`, `pods/proxy`, ...).
    Connect,
}

impl Operation {
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "CREATE",
            Self::Update => "UPDATE",
            Self::Delete => "DELETE",
            Self::Connect => "CONNECT",
        }
    }
}

/// The group, version and kind of an admitted object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectKind<'a> {
    /// The API group (empty: core).
    pub group: &'a str,
    /// The version.
    pub version: &'a str,
    /// The kind.
    pub kind: &'a str,
}

/// One write as admission sees it.
#[derive(Debug, Clone, Copy)]
pub struct Attributes<'a> {
    /// What is done.
    pub operation: Operation,
    /// The resource type written (its group, version, kind and plural): the storage
    /// version's for kinds whose versions share storage.
    pub resource: &'a ResourceType,
    /// The subresource (`status`, `scale`, `binding`, ...), empty for the object itself.
    pub subresource: &'a str,
    /// The kind of the object admitted when it is not the resource's own: a subresource's
    /// (`autoscaling/v1` Scale, `v1` Binding, `policy/v1` Eviction, ...).
    pub object_kind: Option<ObjectKind<'a>>,
    /// The namespace, empty for cluster-scoped objects.
    pub namespace: &'a str,
    /// The object's name; empty on a create whose name is still to be generated.
    pub name: &'a str,
    /// Who writes.
    pub user: &'a UserInfo,
    /// `dryRun=All`: nothing will be stored; plugins with side effects must not act.
    pub dry_run: bool,
    /// The write's field manager, when it names one.
    pub field_manager: Option<&'a str>,
    /// An apply's `force`.
    pub force: bool,
    /// A delete's options.
    pub delete: Option<&'a DeleteOptions>,
    /// The schema of the object admitted, as server-side apply merges into it (a mutating
    /// policy's apply configuration); untyped for a subresource's own object.
    pub shape: Shape<'a>,
}

impl Attributes<'_> {
    /// The kind of the object admitted: [`Attributes::object_kind`], else the resource's.
    pub fn kind(&self) -> ObjectKind<'_> {
        self.object_kind.unwrap_or(ObjectKind {
            group: &self.resource.group,
            version: &self.resource.version,
            kind: &self.resource.kind,
        })
    }

    /// The 403 of a plugin refusing this write: `<resource> "<name>" is forbidden: <reason>`
    /// (Kubernetes' `admission.NewForbidden`).
    pub fn forbidden(&self, reason: impl Into<String>) -> crate::error::ApiError {
        crate::error::ApiError::Forbidden {
            resource: Some(self.resource.group_resource()),
            name: self.name.to_owned(),
            reason: reason.into(),
        }
    }
}
