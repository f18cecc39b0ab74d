//! `OwnerReferencesPermissionEnforcement` (off unless enabled, as in Kubernetes): an update
//! that changes `metadata.ownerReferences` needs `delete` on the object itself (a create may
//! always set them), and a reference that newly sets `blockOwnerDeletion=true` needs `update`
//! on the owner's `finalizers` subresource, since it can hold the owner's foreground
//! deletion. Judges the object as it will be stored, for every kind but `pods/status`.

use std::sync::LazyLock;

use serde_json::Value;

use crate::admission::Attributes as Admitted;
use crate::admission::Notes;
use crate::admission::Operation;
use crate::admission::Plugin;
use crate::auth::Attributes;
use crate::auth::Decision;
use crate::auth::Requester;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::registry::builtin;
use crate::registry::builtin::Row;
use crate::request::RequestInfo;
use crate::request::Verb;

/// The built-in kinds, built once: an owner reference is resolved to its kind on every write
/// that newly blocks its owner's deletion (a ReplicaSet's every pod).
static KINDS: LazyLock<Vec<Row>> = LazyLock::new(builtin::rows);

fn references(obj: Option<&Value>) -> &[Value] {
    obj.and_then(|o| o.pointer("/metadata/ownerReferences"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn blocks(reference: &Value) -> bool {
    reference["blockOwnerDeletion"].as_bool() == Some(true)
}

/// The references of `new` that block and did not block in `old` (by uid).
fn newly_blocking<'a>(new: &'a [Value], old: &[Value]) -> Vec<&'a Value> {
    new.iter()
        .filter(|reference| blocks(reference))
        .filter(|reference| {
            !old.iter()
                .any(|o| o["uid"] == reference["uid"] && blocks(o))
        })
        .collect()
}

/// A resource request's attributes for `verb` on `plural` (`subresource`) `name`.
fn request(
    group: &str,
    version: &str,
    plural: &str,
    subresource: &str,
    namespace: &str,
    name: &str,
    verb: Verb,
) -> RequestInfo {
    let mut request = RequestInfo::non_resource("", verb);
    request.is_resource_request = true;
    request.api_prefix = if group.is_empty() { "api" } else { "apis" }.to_owned();
    request.api_group = group.to_owned();
    request.api_version = version.to_owned();
    request.resource = plural.to_owned();
    request.subresource = subresource.to_owned();
    request.namespace = namespace.to_owned();
    request.name = name.to_owned();
    request
}

/// The OwnerReferencesPermissionEnforcement admission plugin.
pub struct OwnerReferencesPermissionEnforcement {
    flavor: Flavor,
}

impl OwnerReferencesPermissionEnforcement {
    /// The plugin of a server of `flavor` (whose kinds owners are resolved to).
    pub fn new(flavor: Flavor) -> Self {
        Self { flavor }
    }
}

#[async_trait::async_trait]
impl Plugin for OwnerReferencesPermissionEnforcement {
    /// Ok when the requester may write `new`'s owner references over `old`'s (`None`: a
    /// create); 403 worded as Kubernetes' admission plugin words it.
    async fn validate(
        &self,
        attributes: &Admitted<'_>,
        new: Option<&Value>,
        old: Option<&Value>,
        _notes: &mut Notes,
    ) -> Result<(), ApiError> {
        let (Some(new), Operation::Create | Operation::Update) = (new, attributes.operation) else {
            return Ok(());
        };
        let r = attributes.resource;
        if r.group.is_empty() && r.plural == "pods" && attributes.subresource == "status" {
            return Ok(());
        }
        let Some(requester) = Requester::current() else {
            return Ok(());
        };
        let namespace = attributes.namespace;
        let (new_refs, old_refs) = (references(Some(new)), references(old));
        let changing = match old {
            None => !new_refs.is_empty(),
            Some(_) => new_refs != old_refs,
        };
        if !changing {
            return Ok(());
        }
        let name = new
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let forbidden = |reason: String| ApiError::Forbidden {
            resource: Some(r.group_resource()),
            name: name.to_owned(),
            reason,
        };
        if old.is_some() {
            let own = request(
                &r.group,
                &r.version,
                &r.plural,
                "",
                namespace,
                name,
                Verb::Delete,
            );
            if let Some(reason) = denied(&requester, &own).await {
                return Err(forbidden(format!(
                    "cannot set an ownerRef on a resource you can't delete: {reason}, <nil>"
                )));
            }
        }
        for reference in newly_blocking(new_refs, old_refs) {
            let api_version = reference["apiVersion"].as_str().unwrap_or_default();
            let kind = reference["kind"].as_str().unwrap_or_default();
            let owner_name = reference["name"].as_str().unwrap_or_default();
            let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
            let flavor = self.flavor;
            let owners: Vec<_> = KINDS
                .iter()
                .filter(|row| row.kind == kind && row.version == version && row.is_servable())
                .map(|row| row.resource_type(flavor))
                .filter(|t| t.group == group)
                .collect();
            if owners.is_empty() {
                return Err(forbidden(format!(
                    "cannot set blockOwnerDeletion in this case because cannot find \
                     RESTMapping for APIVersion {api_version} Kind {kind}: no matches for \
                     kind \"{kind}\" in version \"{api_version}\""
                )));
            }
            for owner in owners {
                let owner_namespace = if owner.is_namespaced() { namespace } else { "" };
                let finalizers = request(
                    &owner.group,
                    &owner.version,
                    &owner.plural,
                    "finalizers",
                    owner_namespace,
                    owner_name,
                    Verb::Update,
                );
                if let Some(reason) = denied(&requester, &finalizers).await {
                    return Err(forbidden(format!(
                        "cannot set blockOwnerDeletion if an ownerReference refers to a \
                         resource you can't set finalizers on: {reason}, <nil>"
                    )));
                }
            }
        }
        Ok(())
    }
}

/// `None` when the requester's authorizers allow `request`; the reason they gave otherwise.
async fn denied(requester: &Requester, request: &RequestInfo) -> Option<String> {
    let attributes = Attributes {
        user: &requester.user,
        request,
    };
    match requester.authz.decide(&attributes).await {
        Decision::Allow => None,
        Decision::Deny(reason) | Decision::NoOpinion(reason) => Some(reason),
    }
}
