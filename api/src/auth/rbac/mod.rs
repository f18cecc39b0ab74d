//! The RBAC authorization mode (spec 001 "Role-based rules"): Roles, ClusterRoles and their
//! bindings, evaluated from an index of the replicated state that this replica keeps current.
//! Issue 15 builds it behind this constructor; until then the mode has no opinion.

pub mod policy;

use std::sync::Arc;

use super::Attributes;
use super::Authorizer;
use super::Decision;
use crate::flavor::Flavor;
use crate::storage::Storage;

/// The RBAC authorizer of one replica.
pub struct RbacAuthorizer {
    _flavor: Flavor,
    _storage: Arc<dyn Storage>,
}

impl RbacAuthorizer {
    /// The authorizer of `flavor`'s RBAC objects in `storage`; starts following them on the
    /// current tokio runtime.
    pub fn new(flavor: Flavor, storage: Arc<dyn Storage>) -> Arc<Self> {
        Arc::new(Self {
            _flavor: flavor,
            _storage: storage,
        })
    }
}

#[async_trait::async_trait]
impl Authorizer for RbacAuthorizer {
    async fn authorize(&self, _attributes: &Attributes<'_>) -> Decision {
        Decision::NoOpinion(String::new())
    }
}
