//! The `AdmissionRequest` of a write: the body of an AdmissionReview's `request` sent to
//! admission webhooks, and the `request` variable of admission policies' CEL expressions.

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::Attributes;
use super::Operation;
use crate::auth::UserInfo;
use crate::registry::DeleteOptions;

/// `request.userInfo`.
fn user_info(user: &UserInfo) -> Value {
    let mut info = Map::new();
    info.insert("username".to_owned(), user.name.clone().into());
    if !user.uid.is_empty() {
        info.insert("uid".to_owned(), user.uid.clone().into());
    }
    if !user.groups.is_empty() {
        info.insert("groups".to_owned(), user.groups.clone().into());
    }
    if !user.extra.is_empty() {
        info.insert("extra".to_owned(), json!(user.extra));
    }
    Value::Object(info)
}

fn dry_run(options: &mut Map<String, Value>, dry_run: bool) {
    if dry_run {
        options.insert("dryRun".to_owned(), json!(["All"]));
    }
}

fn delete_options(delete: &DeleteOptions) -> Map<String, Value> {
    let mut options = Map::new();
    if let Some(seconds) = delete.grace_period_seconds {
        options.insert("gracePeriodSeconds".to_owned(), seconds.into());
    }
    let preconditions = &delete.preconditions;
    if preconditions.uid.is_some() || preconditions.resource_version.is_some() {
        let mut p = Map::new();
        if let Some(uid) = &preconditions.uid {
            p.insert("uid".to_owned(), uid.clone().into());
        }
        if let Some(rv) = &preconditions.resource_version {
            p.insert("resourceVersion".to_owned(), rv.clone().into());
        }
        options.insert("preconditions".to_owned(), Value::Object(p));
    }
    if let Some(orphan) = delete.orphan_dependents {
        options.insert("orphanDependents".to_owned(), orphan.into());
    }
    if let Some(policy) = delete.propagation_policy {
        options.insert("propagationPolicy".to_owned(), policy.as_str().into());
    }
    options
}

/// `request.options`: the operation's `CreateOptions`, `UpdateOptions` or `DeleteOptions`
/// (`null` for CONNECT).
fn options(attributes: &Attributes<'_>) -> Value {
    let (kind, mut options) = match attributes.operation {
        Operation::Create => ("CreateOptions", Map::new()),
        Operation::Update => ("UpdateOptions", Map::new()),
        Operation::Delete => (
            "DeleteOptions",
            attributes.delete.map(delete_options).unwrap_or_default(),
        ),
        Operation::Connect => return Value::Null,
    };
    options.insert("kind".to_owned(), kind.into());
    options.insert("apiVersion".to_owned(), "meta.k8s.io/v1".into());
    dry_run(&mut options, attributes.dry_run);
    if let Some(manager) = attributes.field_manager
        && attributes.operation != Operation::Delete
    {
        options.insert("fieldManager".to_owned(), manager.into());
    }
    Value::Object(options)
}

/// The AdmissionRequest (`admission.k8s.io/v1`) of the write `attributes` describes, with
/// `uid` (one per review) and the objects (`null` where the operation has none).
pub fn admission_request(
    attributes: &Attributes<'_>,
    uid: &str,
    object: Option<&Value>,
    old: Option<&Value>,
) -> Value {
    let resource = attributes.resource;
    let object_kind = attributes.kind();
    let kind = json!({"group": object_kind.group, "version": object_kind.version, "kind": object_kind.kind});
    let gvr =
        json!({"group": resource.group, "version": resource.version, "resource": resource.plural});
    let mut request = Map::new();
    request.insert("uid".to_owned(), uid.into());
    request.insert("kind".to_owned(), kind.clone());
    request.insert("resource".to_owned(), gvr.clone());
    request.insert("requestKind".to_owned(), kind);
    request.insert("requestResource".to_owned(), gvr);
    if !attributes.subresource.is_empty() {
        request.insert("subResource".to_owned(), attributes.subresource.into());
        request.insert(
            "requestSubResource".to_owned(),
            attributes.subresource.into(),
        );
    }
    if !attributes.name.is_empty() {
        request.insert("name".to_owned(), attributes.name.into());
    }
    if !attributes.namespace.is_empty() {
        request.insert("namespace".to_owned(), attributes.namespace.into());
    }
    request.insert("operation".to_owned(), attributes.operation.as_str().into());
    request.insert("userInfo".to_owned(), user_info(attributes.user));
    request.insert("object".to_owned(), object.cloned().unwrap_or(Value::Null));
    request.insert("oldObject".to_owned(), old.cloned().unwrap_or(Value::Null));
    request.insert("dryRun".to_owned(), attributes.dry_run.into());
    request.insert("options".to_owned(), options(attributes));
    Value::Object(request)
}

#[cfg(test)]
#[path = "request_test.rs"]
mod request_test;
