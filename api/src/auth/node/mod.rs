//! The Node authorization mode (spec 001 "Node authorization"): node agents may read what
//! the pods bound to their node need and write their own node's objects, decided from a
//! graph of the replicated state this replica keeps current. Issue 15 builds it behind this
//! constructor; until then the mode has no opinion.

use std::sync::Arc;

use super::Attributes;
use super::Authorizer;
use super::Decision;
use crate::flavor::Flavor;
use crate::storage::Storage;

/// The Node authorizer of one replica.
pub struct NodeAuthorizer {
    _flavor: Flavor,
    _storage: Arc<dyn Storage>,
    _with_selectors: bool,
}

impl NodeAuthorizer {
    /// The authorizer of node agents over `storage`; `with_selectors` when the
    /// `AuthorizeNodeWithSelectors` and `AuthorizeWithSelectors` gates are both on (a node
    /// may then read only its own Node and the pods bound to it). Starts following the
    /// objects it needs on the current tokio runtime.
    pub fn new(flavor: Flavor, storage: Arc<dyn Storage>, with_selectors: bool) -> Arc<Self> {
        Arc::new(Self {
            _flavor: flavor,
            _storage: storage,
            _with_selectors: with_selectors,
        })
    }
}

#[async_trait::async_trait]
impl Authorizer for NodeAuthorizer {
    async fn authorize(&self, _attributes: &Attributes<'_>) -> Decision {
        Decision::NoOpinion(String::new())
    }
}
