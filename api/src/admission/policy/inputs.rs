//! The values every expression of a policy sees for one write: `object`, `oldObject`,
//! `request` and `namespaceObject` converted to CEL once per version the write is judged in,
//! and the requester's `authorizer`.

use serde_json::Value;
use serde_json::json;

use super::match_resources::Matched;
use super::resources::ResourceTable;
use crate::admission::Attributes;
use crate::admission::Namespaces;
use crate::admission::admission_request;
use crate::auth::Requester;
use crate::cel::CelAuthorizer;
use crate::cel::to_cel;
use crate::error::ApiError;
use crate::request::RequestInfo;
use crate::request::Verb;

/// The values of one write.
pub struct Inputs {
    /// `object`, `oldObject`, `request`, `namespaceObject`, by name.
    pub values: Vec<(&'static str, cel::Value)>,
    /// The requester's authorizer (`None` outside a request).
    pub authorizer: Option<CelAuthorizer>,
}

impl Inputs {
    /// The values of the write `attributes` describes, of `object` and `old`, judged as
    /// `matched`: an equivalent match sees the objects converted to its version through
    /// `resources` (a subresource's own object as it is) and names its resource and kind in
    /// `request.resource` and `request.kind`.
    pub async fn of(
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        old: Option<&Value>,
        namespaces: &Namespaces,
        matched: &Matched,
        resources: &ResourceTable,
    ) -> Result<Self, ApiError> {
        let mut request = admission_request(attributes, "", None, None);
        if let Value::Object(fields) = &mut request {
            for field in ["uid", "object", "oldObject"] {
                fields.remove(field);
            }
        }
        let (mut converted, mut converted_old) = (None, None);
        if let Matched::Equivalent(to) = matched {
            request["resource"] =
                json!({"group": to.group, "version": to.version, "resource": to.plural});
            if attributes.object_kind.is_none() {
                request["kind"] =
                    json!({"group": to.group, "version": to.version, "kind": to.kind});
                if let Some(object) = object {
                    converted = Some(resources.convert(to, object.clone()).await?);
                }
                if let Some(old) = old {
                    converted_old = Some(resources.convert(to, old.clone()).await?);
                }
            }
        }
        let object = converted.as_ref().or(object);
        let old = converted_old.as_ref().or(old);
        let resource = attributes.resource;
        let of_namespace = resource.group.is_empty() && resource.plural == "namespaces";
        let namespace_object = match attributes.namespace {
            "" => None,
            _ if of_namespace => None,
            name => namespaces.get(name),
        };
        let as_cel = |v: Option<&Value>| v.map_or(cel::Value::Null, to_cel);
        let values = vec![
            ("object", as_cel(object)),
            ("oldObject", as_cel(old)),
            ("request", to_cel(&request)),
            (
                "namespaceObject",
                as_cel(namespace_object.map(|ns| trimmed_namespace(&ns)).as_ref()),
            ),
        ];
        let authorizer = Requester::current().map(|requester| {
            let info = RequestInfo {
                is_resource_request: true,
                path: String::new(),
                verb: Verb::Create,
                api_prefix: if resource.group.is_empty() {
                    "api"
                } else {
                    "apis"
                }
                .to_owned(),
                api_group: resource.group.clone(),
                api_version: resource.version.clone(),
                namespace: attributes.namespace.to_owned(),
                resource: resource.plural.clone(),
                subresource: attributes.subresource.to_owned(),
                name: attributes.name.to_owned(),
                parts: Vec::new(),
                field_selector: String::new(),
                label_selector: String::new(),
            };
            CelAuthorizer::new(requester.authz.clone(), attributes.user.clone())
                .with_request_resource(&info)
        });
        Ok(Self { values, authorizer })
    }
}

/// Kubernetes' `namespaceObject`: the Namespace's spec, status and metadata without its
/// managed fields and owner references.
fn trimmed_namespace(namespace: &Value) -> Value {
    const KEPT: &[&str] = &[
        "name",
        "generateName",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "finalizers",
    ];
    let mut trimmed = serde_json::Map::new();
    if let Some(Value::Object(metadata)) = namespace.get("metadata") {
        let kept = (metadata.iter())
            .filter(|(k, _)| KEPT.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        trimmed.insert("metadata".to_owned(), Value::Object(kept));
    }
    for field in ["spec", "status"] {
        if let Some(value) = namespace.get(field) {
            trimmed.insert(field.to_owned(), value.clone());
        }
    }
    Value::Object(trimmed)
}
