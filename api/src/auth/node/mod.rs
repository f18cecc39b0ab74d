//! The Node authorization mode (spec 001 "Node authorization", R-ACC-169..173, R-ACC-175):
//! node agents may read what the pods bound to their node need and write their own node's
//! objects, decided from a graph of the replicated state this replica keeps current. The
//! graph ([`graph`]) is fed from the store ([`populator`]); the decision ([`decision`]) is
//! Kubernetes' node authorizer's.

mod decision;
mod graph;
mod populator;
mod references;
mod rules;

use std::sync::Arc;

use self::decision::Policy;
use self::populator::GraphCache;
use super::Attributes;
use super::Authorizer;
use super::Decision;
use super::Rules;
use super::UserInfo;
use crate::flavor::Flavor;
use crate::reflector::Reflector;
use crate::storage::Storage;

/// The group every node agent is in.
const NODES_GROUP: &str = "system:nodes";

/// The user name prefix of node agents: `system:node:<node name>`.
const NODE_USER_PREFIX: &str = "system:node:";

/// The Node authorizer of one replica.
pub struct NodeAuthorizer {
    policy: Policy,
    graph: Arc<GraphCache>,
}

impl NodeAuthorizer {
    /// The authorizer of node agents over `storage`; `with_selectors` when the
    /// `AuthorizeNodeWithSelectors` and `AuthorizeWithSelectors` gates are both on (a node
    /// may then read only its own Node and the pods bound to it). Starts following the
    /// objects it needs on the current tokio runtime.
    pub fn new(flavor: Flavor, storage: Arc<dyn Storage>, with_selectors: bool) -> Arc<Self> {
        let graph = Arc::new(GraphCache::new(flavor));
        for prefix in graph.prefixes() {
            // The reflector's task holds the graph weakly: it ends with this authorizer.
            Reflector::start(storage.clone(), prefix.to_owned(), &graph);
        }
        Arc::new(Self {
            policy: Policy {
                flavor,
                with_selectors,
            },
            graph,
        })
    }
}

/// The node a user is the agent of: `Some("")` for a member of `system:nodes` whose name
/// carries no node, `None` for anyone who is not a node agent.
fn node_of(user: &UserInfo) -> Option<&str> {
    let node = user.name.strip_prefix(NODE_USER_PREFIX)?;
    user.in_group(NODES_GROUP).then_some(node)
}

/// The decision of `policy` over `graph` on `attributes`: no opinion on anyone who is not
/// a node agent (R-ACC-169).
fn decide(policy: &Policy, graph: &GraphCache, attributes: &Attributes<'_>) -> Decision {
    let user = attributes.user;
    match node_of(user) {
        None => Decision::NoOpinion(String::new()),
        Some("") => Decision::NoOpinion(format!("unknown node for user {:?}", user.name)),
        Some(node) => policy.decide(&graph.read(), node, attributes.request),
    }
}

#[async_trait::async_trait]
impl Authorizer for NodeAuthorizer {
    async fn authorize(&self, attributes: &Attributes<'_>) -> Decision {
        decide(&self.policy, &self.graph, attributes)
    }

    /// A node's permissions depend on the graph and are not listed (the review is incomplete,
    /// and says why, in Kubernetes' words); others get none here.
    async fn rules(&self, user: &UserInfo, _namespace: &str) -> Option<Rules> {
        Some(match node_of(user) {
            Some(_) => Rules {
                incomplete: true,
                evaluation_errors: vec![
                    "node authorizer does not support user rule resolution".to_owned(),
                ],
                ..Rules::default()
            },
            None => Rules::default(),
        })
    }
}

#[cfg(test)]
#[path = "node_test.rs"]
mod tests;
