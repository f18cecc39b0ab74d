//! The access reviews of authorization/v1 (`kubectl auth can-i`): SubjectAccessReview (any
//! user), SelfSubjectAccessReview (the caller) and LocalSubjectAccessReview (any user, in the
//! path's namespace). Each asks the authorizer chain with the attributes its spec names and
//! answers `allowed`, `denied` and `reason` as the chain decided.

use k8s_openapi::api::authorization::v1::LocalSubjectAccessReview;
use k8s_openapi::api::authorization::v1::NonResourceAttributes;
use k8s_openapi::api::authorization::v1::ResourceAttributes;
use k8s_openapi::api::authorization::v1::SelfSubjectAccessReview;
use k8s_openapi::api::authorization::v1::SubjectAccessReview;
use k8s_openapi::api::authorization::v1::SubjectAccessReviewSpec;
use serde_json::Value;
use serde_json::json;

use super::Review;
use crate::auth::Attributes;
use crate::auth::Decision;
use crate::auth::UserInfo;
use crate::error::ApiError;
use crate::request::RequestInfo;
use crate::request::Verb;
use crate::validation::FieldError;

/// A SubjectAccessReview: the user or groups in the spec.
pub(super) async fn subject(review: &Review<'_>) -> Result<(Value, Value), ApiError> {
    let (value, typed): (Value, SubjectAccessReview) = review.body()?;
    let spec = typed.spec;
    let mut errs = attributes_errors(&spec.resource_attributes, &spec.non_resource_attributes);
    errs.extend(subject_errors(&spec));
    if !errs.is_empty() {
        return Err(review.invalid(errs));
    }
    let status = decide(review, &subject_user(&spec), &spec).await;
    Ok((value, status))
}

/// A SelfSubjectAccessReview: the caller.
pub(super) async fn self_subject(review: &Review<'_>) -> Result<(Value, Value), ApiError> {
    let (value, typed): (Value, SelfSubjectAccessReview) = review.body()?;
    let spec = typed.spec;
    let errs = attributes_errors(&spec.resource_attributes, &spec.non_resource_attributes);
    if !errs.is_empty() {
        return Err(review.invalid(errs));
    }
    let as_subject = SubjectAccessReviewSpec {
        resource_attributes: spec.resource_attributes,
        non_resource_attributes: spec.non_resource_attributes,
        ..SubjectAccessReviewSpec::default()
    };
    let status = decide(review, review.req.user, &as_subject).await;
    Ok((value, status))
}

/// A LocalSubjectAccessReview in `namespace`: 400 when its resource attributes name another
/// namespace (upstream's wording), 422 for non-resource attributes.
pub(super) async fn local(
    review: &Review<'_>,
    namespace: &str,
) -> Result<(Value, Value), ApiError> {
    let (value, typed): (Value, LocalSubjectAccessReview) = review.body()?;
    if typed
        .metadata
        .namespace
        .as_deref()
        .is_some_and(|ns| !ns.is_empty() && ns != namespace)
    {
        return Err(ApiError::BadRequest(
            "the namespace of the provided object does not match the namespace sent on the request"
                .to_owned(),
        ));
    }
    let spec = typed.spec;
    let mut errs = Vec::new();
    if spec.non_resource_attributes.is_some() {
        errs.push(FieldError::invalid(
            "spec.nonResourceAttributes",
            json!(spec.non_resource_attributes),
            "disallowed on this kind of request",
        ));
    }
    errs.extend(attributes_errors(&spec.resource_attributes, &None));
    errs.extend(subject_errors(&spec));
    if !errs.is_empty() {
        return Err(review.invalid(errs));
    }
    let asked = spec
        .resource_attributes
        .as_ref()
        .and_then(|r| r.namespace.as_deref())
        .unwrap_or_default();
    if asked != namespace {
        return Err(ApiError::BadRequest(format!(
            "spec.resourceAttributes.namespace must match namespace: {namespace}"
        )));
    }
    let status = decide(review, &subject_user(&spec), &spec).await;
    let mut value = value;
    value["metadata"]["namespace"] = namespace.into();
    Ok((value, status))
}

/// Upstream's rule: exactly one of the two attribute kinds.
fn attributes_errors(
    resource: &Option<ResourceAttributes>,
    non_resource: &Option<NonResourceAttributes>,
) -> Vec<FieldError> {
    match (resource, non_resource) {
        (Some(_), Some(n)) => vec![FieldError::invalid(
            "spec.nonResourceAttributes",
            json!(n),
            "cannot be specified in combination with resourceAttributes",
        )],
        (None, None) => vec![FieldError::invalid(
            "spec.resourceAttributes",
            Value::Null,
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        )],
        _ => Vec::new(),
    }
}

/// Upstream's rule for reviews about another subject: a user or a group.
fn subject_errors(spec: &SubjectAccessReviewSpec) -> Vec<FieldError> {
    let user = spec.user.clone().unwrap_or_default();
    if user.is_empty() && spec.groups.as_ref().is_none_or(Vec::is_empty) {
        vec![FieldError::invalid(
            "spec.user",
            user,
            "at least one of user or group must be specified",
        )]
    } else {
        Vec::new()
    }
}

/// The subject a spec names.
fn subject_user(spec: &SubjectAccessReviewSpec) -> UserInfo {
    UserInfo {
        name: spec.user.clone().unwrap_or_default(),
        uid: spec.uid.clone().unwrap_or_default(),
        groups: spec.groups.clone().unwrap_or_default(),
        extra: spec.extra.clone().unwrap_or_default(),
    }
}

/// The chain's decision on `user` doing what `spec` names, as a review status.
async fn decide(review: &Review<'_>, user: &UserInfo, spec: &SubjectAccessReviewSpec) -> Value {
    let request = request_info(spec);
    let attributes = Attributes {
        user,
        request: &request,
    };
    match review.req.authz.decide(&attributes).await {
        Decision::Allow => json!({"allowed": true}),
        Decision::Deny(reason) => json!({"allowed": false, "denied": true, "reason": reason}),
        Decision::NoOpinion(reason) if reason.is_empty() => json!({"allowed": false}),
        Decision::NoOpinion(reason) => json!({"allowed": false, "reason": reason}),
    }
}

/// The request a spec describes, as the authorizers see requests.
fn request_info(spec: &SubjectAccessReviewSpec) -> RequestInfo {
    let text = |s: &Option<String>| s.clone().unwrap_or_default();
    let mut info = RequestInfo::non_resource("", Verb::Other(String::new()));
    if let Some(r) = &spec.resource_attributes {
        info.is_resource_request = true;
        info.verb = verb(&text(&r.verb));
        info.api_group = text(&r.group);
        info.api_prefix = if info.api_group.is_empty() {
            "api"
        } else {
            "apis"
        }
        .to_owned();
        info.api_version = text(&r.version);
        info.namespace = text(&r.namespace);
        info.resource = text(&r.resource);
        info.subresource = text(&r.subresource);
        info.name = text(&r.name);
    } else if let Some(n) = &spec.non_resource_attributes {
        info.path = text(&n.path);
        info.verb = Verb::Other(text(&n.verb));
    }
    info
}

/// A verb as a request would carry it.
fn verb(name: &str) -> Verb {
    match name {
        "get" => Verb::Get,
        "list" => Verb::List,
        "watch" => Verb::Watch,
        "create" => Verb::Create,
        "update" => Verb::Update,
        "patch" => Verb::Patch,
        "delete" => Verb::Delete,
        "deletecollection" => Verb::DeleteCollection,
        "proxy" => Verb::Proxy,
        other => Verb::Other(other.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // R-ACC-079, R-ACC-097: resource attributes become a resource request with the verb
    // named; non-resource attributes a path request.
    #[test]
    fn specs_become_request_attributes() {
        let spec = SubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                verb: Some("list".into()),
                group: Some("apps".into()),
                resource: Some("deployments".into()),
                namespace: Some("a".into()),
                ..ResourceAttributes::default()
            }),
            ..SubjectAccessReviewSpec::default()
        };
        let info = request_info(&spec);
        assert!(info.is_resource_request);
        assert_eq!(info.verb, Verb::List);
        assert_eq!(
            (info.api_prefix.as_str(), info.api_group.as_str()),
            ("apis", "apps")
        );
        assert_eq!(info.namespace, "a");
        let spec = SubjectAccessReviewSpec {
            non_resource_attributes: Some(NonResourceAttributes {
                path: Some("/healthz".into()),
                verb: Some("get".into()),
            }),
            ..SubjectAccessReviewSpec::default()
        };
        let info = request_info(&spec);
        assert!(!info.is_resource_request);
        assert_eq!(
            (info.path.as_str(), info.verb.as_str()),
            ("/healthz", "get")
        );
        assert_eq!(verb("escalate"), Verb::Other("escalate".into()));
    }
}
