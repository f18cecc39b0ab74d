//! The HTTP side of the computed kinds (upstream's virtual resources): the authentication
//! and authorization reviews, decoded here and decided in `registry::review` from the
//! request's user, the authorizer chain and the token signer, and `componentstatuses`,
//! answered from the readiness seam. Nothing is stored; a review's create answers 201 with
//! the request echoed and its `status` filled in.

mod component_status;

use axum::response::Response;
use http::StatusCode;
use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::authentication::v1::TokenReview;
use k8s_openapi::api::authorization::v1::LocalSubjectAccessReview;
use k8s_openapi::api::authorization::v1::SelfSubjectAccessReview;
use k8s_openapi::api::authorization::v1::SelfSubjectRulesReview;
use k8s_openapi::api::authorization::v1::SubjectAccessReview;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::json;

use super::ResourceRequest;
use super::json_response;
use super::subresource::body;
use crate::auth::AuthContext;
use crate::error::ApiError;
use crate::registry::Registry;
use crate::registry::ResourceType;
use crate::registry::review;
use crate::registry::review::access;
use crate::registry::review::rules;
use crate::registry::review::token_review;
use crate::request::Verb;
use crate::storage::Storage;

/// Whether `rt` is a computed kind served here (the core `bindings` collection has its own
/// handler among the subresources).
pub(crate) fn is_computed(rt: &ResourceType) -> bool {
    component_status::serves(rt) || review_kind(rt).is_some()
}

/// The reviews, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReviewKind {
    SelfSubject,
    Token,
    SubjectAccess,
    SelfSubjectAccess,
    LocalSubjectAccess,
    SelfSubjectRules,
}

fn review_kind(rt: &ResourceType) -> Option<ReviewKind> {
    let group = rt.group.split('.').next().unwrap_or_default();
    match (group, rt.kind.as_str()) {
        ("authentication", "SelfSubjectReview") => Some(ReviewKind::SelfSubject),
        ("authentication", "TokenReview") => Some(ReviewKind::Token),
        ("authorization", "SubjectAccessReview") => Some(ReviewKind::SubjectAccess),
        ("authorization", "SelfSubjectAccessReview") => Some(ReviewKind::SelfSubjectAccess),
        ("authorization", "LocalSubjectAccessReview") => Some(ReviewKind::LocalSubjectAccess),
        ("authorization", "SelfSubjectRulesReview") => Some(ReviewKind::SelfSubjectRules),
        _ => None,
    }
}

/// Serves `req` to the computed kind `rt`, whose verbs and path scope the caller already
/// checked; `namespace` is the path's (empty for cluster-scoped kinds, `None` for a
/// namespaced kind's path outside a namespace, which no computed kind serves: 404).
pub(crate) async fn serve(
    storage: &dyn Storage,
    registry: &Registry,
    rt: &ResourceType,
    namespace: Option<&str>,
    req: &ResourceRequest<'_>,
) -> Result<Response, ApiError> {
    let info = req.info;
    let namespace = namespace.ok_or(ApiError::UnknownResource)?;
    if component_status::serves(rt) {
        let body = component_status::serve(rt, info, req.readiness.check().is_ok())?;
        return Ok(json_response(StatusCode::OK, body.to_string().into_bytes()));
    }
    let kind = review_kind(rt).ok_or(ApiError::UnknownResource)?;
    if info.verb != Verb::Create || !info.name.is_empty() {
        return Err(ApiError::MethodNotAllowed {
            resource: rt.group_resource(),
            name: info.name.clone(),
        });
    }
    let review = Review { rt, req };
    let (authz, user) = (req.authz, req.user);
    let (value, status) = match kind {
        ReviewKind::SelfSubject => {
            let (value, _): (Value, SelfSubjectReview) = review.body()?;
            (value, review::self_subject_status(user))
        }
        ReviewKind::Token => {
            let (value, typed): (Value, TokenReview) = review.body()?;
            let context =
                AuthContext::new(req.now, req.api_audiences, req.flavor, storage, registry);
            let status = token_review::status(typed.spec, req.tokens, &context).await?;
            (value, status)
        }
        ReviewKind::SubjectAccess => {
            let (value, typed): (Value, SubjectAccessReview) = review.body()?;
            (value, access::subject(rt, &typed.spec, authz).await?)
        }
        ReviewKind::SelfSubjectAccess => {
            let (value, typed): (Value, SelfSubjectAccessReview) = review.body()?;
            (
                value,
                access::self_subject(rt, typed.spec, user, authz).await?,
            )
        }
        ReviewKind::LocalSubjectAccess => {
            let (mut value, typed): (Value, LocalSubjectAccessReview) = review.body()?;
            let status = access::local(rt, &typed, namespace, authz).await?;
            value["metadata"]["namespace"] = namespace.into();
            (value, status)
        }
        ReviewKind::SelfSubjectRules => {
            let (value, typed): (Value, SelfSubjectRulesReview) = review.body()?;
            let namespace = typed.spec.namespace.unwrap_or_default();
            (value, rules::status(authz, user, &namespace).await)
        }
    };
    Ok(review.answer(value, status))
}

/// One review request.
struct Review<'a> {
    rt: &'a ResourceType,
    req: &'a ResourceRequest<'a>,
}

impl Review<'_> {
    /// The body as JSON and as the kind's struct: 400 for another `apiVersion` or `kind`, or
    /// a field of the wrong type.
    fn body<T: DeserializeOwned>(&self) -> Result<(Value, T), ApiError> {
        let value = body::parse(&self.req.body)?;
        let typed = body::typed(&value, &[&self.rt.api_version()], &self.rt.kind)?;
        Ok((value, typed))
    }

    /// 201 with the request `value` echoed, typed as the kind, with `status` (upstream's
    /// create answers the object it was given, filled in).
    fn answer(&self, mut value: Value, status: Value) -> Response {
        if let Value::Object(m) = &mut value {
            m.insert("apiVersion".into(), self.rt.api_version().into());
            m.insert("kind".into(), self.rt.kind.clone().into());
            m.entry("metadata").or_insert_with(|| json!({}));
            m.insert("status".into(), status);
        }
        json_response(StatusCode::CREATED, value.to_string().into_bytes())
    }
}
