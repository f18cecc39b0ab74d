//! The access reviews of authorization/v1 (`kubectl auth can-i`): SubjectAccessReview (any
//! user), SelfSubjectAccessReview (the caller) and LocalSubjectAccessReview (any user, in the
//! path's namespace). Each asks the authorizer chain with the attributes its spec names and
//! answers `allowed`, `denied` and `reason` as the chain decided; resource attributes may
//! carry field and label selectors, which reach the authorizers as a request's do.

use k8s_openapi::api::authorization::v1::LocalSubjectAccessReview;
use k8s_openapi::api::authorization::v1::NonResourceAttributes;
use k8s_openapi::api::authorization::v1::ResourceAttributes;
use k8s_openapi::api::authorization::v1::SelfSubjectAccessReviewSpec;
use k8s_openapi::api::authorization::v1::SubjectAccessReviewSpec;
use serde_json::Value;
use serde_json::json;

use super::invalid;
use super::selectors;
use crate::auth::Attributes;
use crate::auth::AuthorizerChain;
use crate::auth::Decision;
use crate::auth::UserInfo;
use crate::error::ApiError;
use crate::registry::ResourceType;
use crate::request::RequestInfo;
use crate::request::Verb;
use crate::validation::FieldError;

/// The status of a SubjectAccessReview (of kind `rt`) about the user or groups in `spec`.
pub(crate) async fn subject(
    rt: &ResourceType,
    spec: &SubjectAccessReviewSpec,
    authz: &AuthorizerChain,
) -> Result<Value, ApiError> {
    let mut errs = attributes_errors(&spec.resource_attributes, &spec.non_resource_attributes);
    errs.extend(subject_errors(spec));
    if !errs.is_empty() {
        return Err(invalid(rt, errs));
    }
    Ok(decide(authz, &subject_user(spec), spec).await)
}

/// The status of a SelfSubjectAccessReview (of kind `rt`) about the caller `user`.
pub(crate) async fn self_subject(
    rt: &ResourceType,
    spec: SelfSubjectAccessReviewSpec,
    user: &UserInfo,
    authz: &AuthorizerChain,
) -> Result<Value, ApiError> {
    let errs = attributes_errors(&spec.resource_attributes, &spec.non_resource_attributes);
    if !errs.is_empty() {
        return Err(invalid(rt, errs));
    }
    let as_subject = SubjectAccessReviewSpec {
        resource_attributes: spec.resource_attributes,
        non_resource_attributes: spec.non_resource_attributes,
        ..SubjectAccessReviewSpec::default()
    };
    Ok(decide(authz, user, &as_subject).await)
}

/// The status of the LocalSubjectAccessReview `review` (of kind `rt`) in `namespace`: 400
/// when it or its resource attributes name another namespace (upstream's wording), 422 for
/// non-resource attributes.
pub(crate) async fn local(
    rt: &ResourceType,
    review: &LocalSubjectAccessReview,
    namespace: &str,
    authz: &AuthorizerChain,
) -> Result<Value, ApiError> {
    if review
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
    let spec = &review.spec;
    let mut errs = Vec::new();
    if spec.non_resource_attributes.is_some() {
        errs.push(FieldError::invalid(
            "spec.nonResourceAttributes",
            json!(spec.non_resource_attributes),
            "disallowed on this kind of request",
        ));
    }
    errs.extend(attributes_errors(&spec.resource_attributes, &None));
    errs.extend(subject_errors(spec));
    if !errs.is_empty() {
        return Err(invalid(rt, errs));
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
    Ok(decide(authz, &subject_user(spec), spec).await)
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
        (Some(r), None) => selectors::errors(r, "spec.resourceAttributes"),
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
async fn decide(authz: &AuthorizerChain, user: &UserInfo, spec: &SubjectAccessReviewSpec) -> Value {
    let request = request_info(spec);
    let attributes = Attributes {
        user,
        request: &request,
    };
    match authz.decide(&attributes).await {
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
        info.verb = Verb::named(&text(&r.verb));
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
        info.field_selector = selectors::field_text(r.field_selector.as_ref());
        info.label_selector = selectors::label_text(r.label_selector.as_ref());
    } else if let Some(n) = &spec.non_resource_attributes {
        info.path = text(&n.path);
        info.verb = Verb::Other(text(&n.verb));
    }
    info
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
        assert_eq!(Verb::named("escalate"), Verb::Other("escalate".into()));
    }

    fn with_selectors(field: Value, label: Value) -> SubjectAccessReviewSpec {
        let spec = json!({"user": "u", "resourceAttributes": {
            "verb": "list", "resource": "pods", "fieldSelector": field, "labelSelector": label,
        }});
        serde_json::from_value(spec).expect("a spec")
    }

    // R-ACC-172, R-ACC-097: selectors reach the authorizers, raw or from requirements.
    #[test]
    fn selectors_reach_the_authorizers() {
        let spec = with_selectors(
            json!({"rawSelector": "spec.nodeName=n1"}),
            json!({"rawSelector": "app=web"}),
        );
        let info = request_info(&spec);
        assert_eq!(info.field_selector, "spec.nodeName=n1");
        assert_eq!(info.label_selector, "app=web");
        let spec = with_selectors(
            json!({"requirements": [
                {"key": "spec.nodeName", "operator": "In", "values": ["n1"]},
                {"key": "metadata.name", "operator": "NotIn", "values": ["x"]},
            ]}),
            json!({"requirements": [
                {"key": "app", "operator": "In", "values": ["a", "b"]},
                {"key": "tier", "operator": "NotIn", "values": ["db"]},
                {"key": "env", "operator": "Exists"},
                {"key": "old", "operator": "DoesNotExist"},
            ]}),
        );
        assert!(attributes_errors(&spec.resource_attributes, &None).is_empty());
        let info = request_info(&spec);
        assert_eq!(info.field_selector, "spec.nodeName=n1,metadata.name!=x");
        assert_eq!(info.label_selector, "app in (a,b),tier notin (db),env,!old");
        let info = request_info(&with_selectors(Value::Null, Value::Null));
        assert_eq!(
            (info.field_selector.as_str(), info.label_selector.as_str()),
            ("", "")
        );
    }

    // R-ACC-172: selectors are validated as Kubernetes validates them.
    #[test]
    fn selectors_are_validated() {
        let rendered = |field: Value, label: Value| -> Vec<String> {
            let spec = with_selectors(field, label);
            (attributes_errors(&spec.resource_attributes, &None).iter())
                .map(ToString::to_string)
                .collect()
        };
        assert_eq!(
            rendered(
                json!({"rawSelector": "a=b", "requirements": [{"key": "a", "operator": "In", "values": ["b"]}]}),
                json!({})
            ),
            [
                r#"spec.resourceAttributes.fieldSelector.rawSelector: Invalid value: "a=b": may not specified at the same time as requirements"#,
                "spec.resourceAttributes.labelSelector.requirements: Required value: when spec.resourceAttributes.labelSelector is specified, requirements or rawSelector is required",
            ]
        );
        assert_eq!(
            rendered(
                json!({"requirements": [
                    {"key": "", "operator": "In", "values": ["a", "b"]},
                    {"key": "k", "operator": "Exists", "values": ["v"]},
                    {"key": "k", "operator": "Future"},
                ]}),
                json!({"requirements": [
                    {"key": "app", "operator": "In"},
                    {"key": "bad key", "operator": "Exists"},
                ]}),
            ),
            [
                "spec.resourceAttributes.fieldSelector.requirements[0].key: Required value: must be specified",
                r#"spec.resourceAttributes.fieldSelector.requirements[0].values: Invalid value: ["a","b"]: must be only one value when `operator` is 'In' or 'NotIn' for fieldSelector"#,
                "spec.resourceAttributes.fieldSelector.requirements[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                "spec.resourceAttributes.labelSelector.requirements[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
                r#"spec.resourceAttributes.labelSelector.requirements[1].key: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"#,
            ]
        );
    }
}
