//! The handler's part of the forced deletion of corrupt objects (R-RES-063..068, KEP-3926):
//! the `AllowUnsafeMalformedObjectDeletion` gate, the options that cannot go with
//! `ignoreStoreReadErrorWithClusterBreakingPotential`, the second permission it needs, and
//! how a list reports the corrupt objects it met.
//!
//! One difference from kube-apiserver, where the specification is explicit: the option set
//! together with `dryRun`, `gracePeriodSeconds`, `orphanDependents`, `preconditions` or
//! `propagationPolicy` is a 400 BadRequest (R-RES-067) where kube-apiserver answers 422
//! Invalid on `DeleteOptions`; the message is kube-apiserver's.

use serde_json::json;

use crate::auth::Attributes;
use crate::auth::AuthorizerChain;
use crate::auth::Decision;
use crate::auth::UserInfo;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::group::GroupKind;
use crate::group::GroupResource;
use crate::registry::DeleteOptions;
use crate::registry::IGNORE_READ_ERRORS as OPTION;
use crate::request::RequestInfo;
use crate::request::Verb;
use crate::validation::FieldError;

/// The verb a forced delete needs besides `delete` (R-RES-065).
pub(crate) const UNSAFE_DELETE_VERB: &str = "unsafe-delete-ignore-read-errors";

/// Checks a delete's options for the forced removal. With the gate off the option is
/// dropped, as kube-apiserver drops it (R-RES-066). With it on, a delete that also sets
/// another option is a 400 (R-RES-067), and a deletecollection with it a 422, as
/// kube-apiserver answers.
pub(crate) fn check_options(
    options: &mut DeleteOptions,
    gate: bool,
    verb: &Verb,
    flavor: Flavor,
) -> Result<(), ApiError> {
    if !gate {
        options.ignore_store_read_errors = false;
    }
    if !options.ignore_store_read_errors {
        return Ok(());
    }
    let kind = GroupKind {
        group: flavor.meta_group(),
        kind: "DeleteOptions".to_owned(),
    };
    if *verb == Verb::DeleteCollection {
        return Err(ApiError::Invalid {
            kind,
            name: String::new(),
            causes: vec![FieldError::invalid(
                OPTION,
                true,
                "is not allowed with DELETECOLLECTION, try again after removing the option",
            )],
        });
    }
    let detail = format!("can not be set together with {OPTION}");
    let mut causes = Vec::new();
    if options.dry_run {
        causes.push(FieldError::invalid("dryRun", "All", detail.as_str()));
    }
    if let Some(seconds) = options.grace_period_seconds {
        causes.push(FieldError::invalid(
            "gracePeriodSeconds",
            seconds,
            detail.as_str(),
        ));
    }
    if let Some(orphan) = options.orphan_dependents {
        causes.push(FieldError::invalid(
            "orphanDependents",
            orphan,
            detail.as_str(),
        ));
    }
    let preconditions = &options.preconditions;
    if preconditions.uid.is_some() || preconditions.resource_version.is_some() {
        let given = json!({
            "uid": preconditions.uid,
            "resourceVersion": preconditions.resource_version,
        });
        causes.push(FieldError::invalid("preconditions", given, detail.as_str()));
    }
    if let Some(policy) = options.propagation_policy {
        causes.push(FieldError::invalid(
            "propagationPolicy",
            policy.as_str(),
            detail.as_str(),
        ));
    }
    if causes.is_empty() {
        return Ok(());
    }
    let invalid = ApiError::Invalid {
        kind,
        name: String::new(),
        causes,
    };
    Err(ApiError::BadRequest(invalid.to_string()))
}

/// Ok when `user` may also do `unsafe-delete-ignore-read-errors` on the target of
/// `request`; 403 naming the verb otherwise (R-RES-065), worded as kube-apiserver's
/// admission check words it.
pub(crate) async fn authorize(
    authz: &AuthorizerChain,
    user: &UserInfo,
    request: &RequestInfo,
) -> Result<(), ApiError> {
    let unsafe_delete = RequestInfo {
        verb: Verb::Other(UNSAFE_DELETE_VERB.to_owned()),
        ..request.clone()
    };
    let attributes = Attributes {
        user,
        request: &unsafe_delete,
    };
    let reason = match authz.decide(&attributes).await {
        Decision::Allow => return Ok(()),
        Decision::Deny(reason) | Decision::NoOpinion(reason) => reason,
    };
    Err(ApiError::Forbidden {
        resource: Some(GroupResource::new(
            request.api_group.clone(),
            request.resource.clone(),
        )),
        name: request.name.clone(),
        reason: format!("not permitted to do {UNSAFE_DELETE_VERB:?}, reason: {reason}"),
    })
}

/// A list's failure as reported: with the gate on, the corrupt objects it met are all named
/// in a `StorageReadError` (kube-apiserver's list with `AllowUnsafeMalformedObjectDeletion`);
/// with it off, the first one is an internal error, as kube-apiserver's list stops there.
pub(crate) fn list_error(error: ApiError, gate: bool, resource: GroupResource) -> ApiError {
    match error {
        ApiError::Corrupt(corrupt) if gate => ApiError::StoreReadError { resource, corrupt },
        other => other,
    }
}
