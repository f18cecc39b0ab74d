//! Binding a pod to a node: POST of a `v1` Binding to `pods/<name>/binding`, or to the core
//! `bindings` collection of a namespace (the name then comes from the body), as upstream's
//! `BindingREST`: `spec.nodeName` is set from `target.name` on a pod that has none, the
//! binding's annotations are merged in and the `PodScheduled` condition becomes `True`.

use chrono::DateTime;
use chrono::SecondsFormat;
use chrono::Utc;
use k8s_openapi::api::core::v1::Binding;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::Parent;
use crate::admission::ObjectKind;
use crate::admission::Operation;
use crate::error::ApiError;
use crate::error::excerpt;
use crate::group::GroupKind;
use crate::group::GroupResource;
use crate::registry::Registry;
use crate::registry::WriteOptions;
use crate::storage::Revision;
use crate::storage::Storage;
use crate::validation::FieldError;

/// The target kinds a binding may name (empty means Node).
const TARGET_KINDS: [&str; 2] = ["Node", "<empty>"];

/// Binds the pod `parent` as `binding` says (POST `pods/<name>/binding`): 400 when the
/// binding names another pod, 422 for a target that is not a node or has no name, 404 for a
/// missing pod, 409 when the pod is already assigned, being deleted or gated, or a
/// precondition (`metadata.uid`, `metadata.resourceVersion` of the binding) fails.
pub(crate) async fn bind(
    parent: &Parent<'_>,
    binding: &Binding,
    now: DateTime<Utc>,
    write: WriteOptions,
) -> Result<Vec<String>, ApiError> {
    if binding.metadata.name.as_deref().unwrap_or_default() != parent.name {
        return Err(ApiError::BadRequest(
            "name in URL does not match name in Binding object".to_owned(),
        ));
    }
    let kind = ObjectKind {
        group: "",
        version: "v1",
        kind: "Binding",
    };
    let create = (Operation::Create, "binding");
    let (binding, warnings) = parent
        .admit(create, kind, binding, None, write.dry_run)
        .await?;
    validate(&binding)?;
    assign(parent, &binding, now, write.dry_run).await?;
    Ok(warnings)
}

/// Binds the pod `binding` names in `namespace` (POST to the core `bindings` collection,
/// upstream's `LegacyBindingREST`).
pub(crate) async fn bind_collection(
    storage: &dyn Storage,
    registry: &Registry,
    namespace: &str,
    binding: &Binding,
    now: DateTime<Utc>,
    write: WriteOptions,
) -> Result<Vec<String>, ApiError> {
    let pods = registry
        .builtin_store("", "v1", "pods")
        .ok_or(ApiError::UnknownResource)?;
    let name = binding.metadata.name.clone().unwrap_or_default();
    let parent = Parent {
        storage,
        registry,
        store: pods,
        namespace,
        name: &name,
    };
    bind(&parent, binding, now, write).await
}

/// Upstream's `ValidatePodBinding`. Upstream answers these as a 500 (an aggregate error,
/// not a Status); they are 422 here, with one cause each, as every other validation.
fn validate(binding: &Binding) -> Result<(), ApiError> {
    let mut causes = Vec::new();
    let kind = binding.target.kind.as_deref().unwrap_or_default();
    if !kind.is_empty() && kind != "Node" {
        causes.push(FieldError::not_supported(
            "target.kind",
            kind,
            &TARGET_KINDS,
        ));
    }
    if binding
        .target
        .name
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        causes.push(FieldError::required("target.name", ""));
    }
    if causes.is_empty() {
        return Ok(());
    }
    Err(ApiError::Invalid {
        kind: GroupKind {
            group: String::new(),
            kind: "Binding".to_owned(),
        },
        name: binding.metadata.name.clone().unwrap_or_default(),
        causes,
    })
}

/// Upstream's `assignPod`: the refusals found on the pod are conflicts on `pods/binding`.
async fn assign(
    parent: &Parent<'_>,
    binding: &Binding,
    now: DateTime<Utc>,
    dry_run: bool,
) -> Result<(), ApiError> {
    let name = parent.name;
    let node = binding.target.name.clone().unwrap_or_default();
    let want_uid = binding.metadata.uid.clone().filter(|u| !u.is_empty());
    let expected: Option<Revision> = match binding.metadata.resource_version.as_deref() {
        None | Some("") => None,
        Some(rv) => Some(rv.parse().map_err(|_| {
            ApiError::BadRequest(format!("invalid resourceVersion {:?}", excerpt(rv)))
        })?),
    };
    let annotations = binding.metadata.annotations.clone().unwrap_or_default();
    let refuse = |reason: String| ApiError::Conflict {
        resource: GroupResource::new("", "pods/binding"),
        name: name.to_owned(),
        reason,
    };
    let now = now.to_rfc3339_opts(SecondsFormat::Secs, true);
    let change = |pod: &mut Value| -> Result<(), ApiError> {
        let uid = pod
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if let Some(want) = &want_uid
            && want != uid
        {
            return Err(ApiError::Conflict {
                resource: GroupResource::new("", "pods"),
                name: name.to_owned(),
                reason: format!(
                    "Precondition failed: UID in precondition: {want}, UID in object meta: {uid}"
                ),
            });
        }
        if pod.pointer("/metadata/deletionTimestamp").is_some() {
            return Err(refuse(format!(
                "pod {name} is being deleted, cannot be assigned to a host"
            )));
        }
        let assigned = pod
            .pointer("/spec/nodeName")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !assigned.is_empty() {
            return Err(refuse(format!(
                "pod {name} is already assigned to node {assigned:?}"
            )));
        }
        if pod
            .pointer("/spec/schedulingGates")
            .and_then(Value::as_array)
            .is_some_and(|g| !g.is_empty())
        {
            return Err(refuse(format!(
                "pod {name} has non-empty .spec.schedulingGates"
            )));
        }
        let pod = pod
            .as_object_mut()
            .ok_or_else(|| ApiError::Internal("the stored pod is not an object".to_owned()))?;
        object(pod, "spec")?.insert("nodeName".to_owned(), node.clone().into());
        let meta_annotations = object(object(pod, "metadata")?, "annotations")?;
        for (k, v) in &annotations {
            meta_annotations.insert(k.clone(), v.clone().into());
        }
        set_scheduled(object(pod, "status")?, &now);
        Ok(())
    };
    parent
        .store
        .guaranteed_update(
            parent.storage,
            parent.namespace,
            name,
            expected,
            dry_run,
            change,
        )
        .await
        .map(drop)
}

/// The object at `field` of `map`, made when absent or null; 500 when the stored pod holds
/// something else there.
fn object<'a>(
    map: &'a mut Map<String, Value>,
    field: &str,
) -> Result<&'a mut Map<String, Value>, ApiError> {
    let slot = map
        .entry(field)
        .or_insert_with(|| Value::Object(Map::new()));
    if slot.is_null() {
        *slot = Value::Object(Map::new());
    }
    slot.as_object_mut()
        .ok_or_else(|| ApiError::Internal(format!("the stored pod's {field} is not an object")))
}

/// Upstream's `UpdatePodCondition` for `PodScheduled=True`: the transition time moves only
/// when the status changes.
fn set_scheduled(status: &mut Map<String, Value>, now: &str) {
    let conditions = status
        .entry("conditions")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !conditions.is_array() {
        *conditions = Value::Array(Vec::new());
    }
    let Value::Array(list) = conditions else {
        return;
    };
    let scheduled = json!({"type": "PodScheduled", "status": "True", "lastTransitionTime": now});
    match list
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("PodScheduled"))
    {
        Some(c) if c.get("status").and_then(Value::as_str) == Some("True") => {}
        Some(c) => *c = scheduled,
        None => list.push(scheduled),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduled_condition_is_set_once() {
        let mut status = Map::new();
        set_scheduled(&mut status, "t1");
        set_scheduled(&mut status, "t2");
        assert_eq!(
            Value::Object(status),
            json!({"conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": "t1"}]})
        );
        let mut pod = Map::new();
        let meta = object(&mut pod, "metadata").expect("made");
        object(meta, "annotations")
            .expect("made")
            .insert("a".into(), "b".into());
        assert_eq!(
            Value::Object(pod.clone()),
            json!({"metadata": {"annotations": {"a": "b"}}})
        );
        pod.insert("spec".into(), json!(1));
        assert!(object(&mut pod, "spec").is_err());
    }
}
