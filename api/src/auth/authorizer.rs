//! The authorization stage: a chain of authorizers (spec 001 "Authorization", R-ACC-002,
//! R-ACC-086..088).

use std::sync::Arc;

use super::Attributes;
use crate::error::ApiError;
use crate::error::GroupResource;

/// One authorizer's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Allowed: the chain stops, the request proceeds.
    Allow,
    /// Denied: the chain stops, 403 with this reason.
    Deny(String),
    /// No opinion: the next authorizer decides; the reason is reported if nobody allows.
    NoOpinion(String),
}

/// One authorization mode.
///
/// ### Correctness requirements
/// - Pure with respect to the request: decide from the attributes (and the mode's own
///   configuration or cached state) only.
/// - Answer [`Decision::NoOpinion`] for anything the mode does not cover, so later modes
///   still get to allow it; [`Decision::Deny`] only when the mode must veto.
#[async_trait::async_trait]
pub trait Authorizer: Send + Sync + 'static {
    /// Decides on a request with `attributes`.
    async fn authorize(&self, attributes: &Attributes<'_>) -> Decision;
}

/// Authorizers consulted in order until one allows or denies; denied by default.
#[derive(Clone, Default)]
pub struct AuthorizerChain {
    authorizers: Vec<Arc<dyn Authorizer>>,
}

impl AuthorizerChain {
    /// A chain of `authorizers`, consulted in this order.
    pub fn new(authorizers: Vec<Arc<dyn Authorizer>>) -> Self {
        Self { authorizers }
    }

    /// Ok when some authorizer allows before any denies; 403 Forbidden, worded as
    /// Kubernetes words it, otherwise.
    pub async fn authorize(&self, attributes: &Attributes<'_>) -> Result<(), ApiError> {
        let mut reasons = Vec::new();
        for a in &self.authorizers {
            match a.authorize(attributes).await {
                Decision::Allow => return Ok(()),
                Decision::Deny(reason) => {
                    reasons.push(reason);
                    break;
                }
                Decision::NoOpinion(reason) => reasons.push(reason),
            }
        }
        reasons.retain(|r| !r.is_empty());
        let mut reason = attributes.forbidden_message();
        if !reasons.is_empty() {
            reason = format!("{reason}: {}", reasons.join("\n"));
        }
        let r = attributes.request;
        let resource = r
            .is_resource_request
            .then(|| GroupResource::new(r.api_group.clone(), r.resource.clone()));
        Err(ApiError::Forbidden {
            resource,
            name: r.name.clone(),
            reason,
        })
    }
}
