//! The authorization stage: a chain of authorizers (spec 001 "Authorization", R-ACC-002,
//! R-ACC-086..088).

use std::sync::Arc;

use k8s_openapi::api::authorization::v1::NonResourceRule;
use k8s_openapi::api::authorization::v1::ResourceRule;

use super::Attributes;
use super::UserInfo;
use crate::error::ApiError;

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

    /// What `user` may do in `namespace` (SelfSubjectRulesReview), or `None` when this mode
    /// cannot list it (the review is then incomplete).
    async fn rules(&self, _user: &UserInfo, _namespace: &str) -> Option<Rules> {
        None
    }
}

/// The rules an authorizer grants a user.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rules {
    /// Rules over resources.
    pub resource: Vec<ResourceRule>,
    /// Rules over non-resource paths.
    pub non_resource: Vec<NonResourceRule>,
    /// Whether some mode could not list its rules, so more may be allowed than listed.
    pub incomplete: bool,
    /// Why modes could not list their rules (a review's `evaluationError`).
    pub evaluation_errors: Vec<String>,
}

impl Rules {
    /// Every verb on every resource and path (`system:masters`, `AlwaysAllow`).
    pub fn everything() -> Self {
        let all = || Some(vec!["*".to_owned()]);
        Self {
            resource: vec![ResourceRule {
                verbs: vec!["*".to_owned()],
                api_groups: all(),
                resources: all(),
                resource_names: None,
            }],
            non_resource: vec![NonResourceRule {
                verbs: vec!["*".to_owned()],
                non_resource_urls: all(),
            }],
            incomplete: false,
            evaluation_errors: Vec::new(),
        }
    }
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

    /// The chain's decision: the first allow or deny, or no opinion with every mode's
    /// reason (the access reviews answer it as it is).
    pub async fn decide(&self, attributes: &Attributes<'_>) -> Decision {
        let mut reasons = Vec::new();
        for a in &self.authorizers {
            match a.authorize(attributes).await {
                Decision::Allow => return Decision::Allow,
                Decision::Deny(reason) => {
                    reasons.push(reason);
                    reasons.retain(|r| !r.is_empty());
                    return Decision::Deny(reasons.join("\n"));
                }
                Decision::NoOpinion(reason) => reasons.push(reason),
            }
        }
        reasons.retain(|r| !r.is_empty());
        Decision::NoOpinion(reasons.join("\n"))
    }

    /// Every mode's rules for `user` in `namespace`, merged; incomplete when some mode
    /// cannot list its own.
    pub async fn rules(&self, user: &UserInfo, namespace: &str) -> Rules {
        let mut all = Rules::default();
        for a in &self.authorizers {
            match a.rules(user, namespace).await {
                Some(rules) => {
                    all.resource.extend(rules.resource);
                    all.non_resource.extend(rules.non_resource);
                    all.incomplete |= rules.incomplete;
                    all.evaluation_errors.extend(rules.evaluation_errors);
                }
                None => all.incomplete = true,
            }
        }
        all
    }

    /// Ok when some authorizer allows before any denies; 403 Forbidden, worded as
    /// Kubernetes words it, otherwise.
    pub async fn authorize(&self, attributes: &Attributes<'_>) -> Result<(), ApiError> {
        let reasons = match self.decide(attributes).await {
            Decision::Allow => return Ok(()),
            Decision::Deny(reasons) | Decision::NoOpinion(reasons) => reasons,
        };
        Err(attributes.forbidden(&reasons))
    }
}
