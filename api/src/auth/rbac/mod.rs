//! The RBAC authorization mode (spec 001 "Role-based rules"): Roles, ClusterRoles and their
//! bindings, evaluated from an index of the replicated state that this replica keeps current
//! from the store's watch, so a decision never costs a store round trip and every replica
//! decides alike once it has applied a binding. RBAC allows or has no opinion; it never
//! denies. The same rules drive escalation prevention on writes of roles and bindings
//! (escalation.rs).

mod escalation;
mod index;
pub mod policy;
mod resolver;
mod rule;
#[cfg(test)]
mod tests;

use std::ops::ControlFlow;

use std::sync::Arc;

pub use self::escalation::EscalationCheck;
pub use self::escalation::confirm_no_escalation;
use self::index::Index;
pub use self::rule::Rule;
use super::Attributes;
use super::Authorizer;
use super::Decision;
use super::Rules;
use super::UserInfo;
use crate::flavor::Flavor;
use crate::reflector::Reflector;
use crate::storage::Revision;
use crate::storage::Storage;

/// The RBAC authorizer of one replica.
pub struct RbacAuthorizer {
    /// `rbac.authorization.<domain>`, which the reasons name.
    group: String,
    index: Arc<Index>,
    reflector: Reflector,
}

impl RbacAuthorizer {
    /// The authorizer of `flavor`'s RBAC objects in `storage`; starts following them on the
    /// current tokio runtime.
    pub fn new(flavor: Flavor, storage: Arc<dyn Storage>) -> Arc<Self> {
        let index = Arc::new(Index::new(flavor));
        let reflector = Reflector::start(storage, index.group_prefix(), &index);
        Arc::new(Self {
            group: format!("rbac.authorization.{}", flavor.group_domain()),
            index,
            reflector,
        })
    }

    /// The revision up to which every RBAC change is in force on this replica (0 before the
    /// first list).
    pub fn revision(&self) -> Revision {
        self.reflector.revision()
    }

    /// Waits until every RBAC change up to `revision` is in force on this replica.
    pub async fn wait_for(&self, revision: Revision) {
        self.reflector.wait_for(revision).await;
    }

    /// The rules `user` holds in `namespace` (cluster-wide ones included; empty: only
    /// those), in binding order, and the problems of broken bindings.
    pub fn rules_for(&self, user: &UserInfo, namespace: &str) -> (Vec<Rule>, Vec<String>) {
        rules_in(&self.index, &self.group, user, namespace)
    }
}

/// What [`RbacAuthorizer::rules_for`] answers, from `index`.
fn rules_in(
    index: &Index,
    group: &str,
    user: &UserInfo,
    namespace: &str,
) -> (Vec<Rule>, Vec<String>) {
    let state = index.read();
    let mut rules = Vec::new();
    let (_, errors) = resolver::visit_rules(&state, group, user, namespace, |rule: &Rule| {
        rules.push(rule.clone());
        ControlFlow::Continue(())
    });
    (rules, errors)
}

/// RBAC's decision on `attributes` from `index`: allowed when a rule the user holds in the
/// request's namespace (or cluster-wide) allows it; otherwise no opinion, with
/// `RBAC: <problems>` when bindings were broken.
fn decide(index: &Index, group: &str, attributes: &Attributes<'_>) -> Decision {
    let request = attributes.request;
    let state = index.read();
    let (allowed, errors) = resolver::visit_rules(
        &state,
        group,
        attributes.user,
        &request.namespace,
        |rule: &Rule| {
            if rule.allows(request) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        },
    );
    if allowed {
        Decision::Allow
    } else if errors.is_empty() {
        Decision::NoOpinion(String::new())
    } else {
        Decision::NoOpinion(format!("RBAC: {}", resolver::aggregate(&errors)))
    }
}

#[async_trait::async_trait]
impl Authorizer for RbacAuthorizer {
    async fn authorize(&self, attributes: &Attributes<'_>) -> Decision {
        decide(&self.index, &self.group, attributes)
    }

    /// Every rule RBAC grants `user` in `namespace`: RBAC knows all it grants.
    async fn rules(&self, user: &UserInfo, namespace: &str) -> Option<Rules> {
        let (rules, _) = self.rules_for(user, namespace);
        let mut all = Rules::default();
        for rule in &rules {
            let (resource, non_resource) = rule.review_rules();
            all.resource.extend(resource);
            all.non_resource.extend(non_resource);
        }
        Some(all)
    }
}

/// An RBAC object as its `k8s_openapi` type, in any flavor: the type checks `apiVersion`
/// against Kubernetes' group, so the type fields are left out (the key or the caller already
/// says which kind it is).
pub(crate) fn typed<T: serde::de::DeserializeOwned>(
    object: &serde_json::Value,
) -> Result<T, serde_json::Error> {
    let mut object = object.clone();
    if let Some(fields) = object.as_object_mut() {
        fields.remove("apiVersion");
        fields.remove("kind");
    }
    serde_json::from_value(object)
}
