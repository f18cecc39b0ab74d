//! What an authenticator may consult besides the request: the time, the audiences the API
//! accepts and the objects this replica has applied (service accounts, their Secrets and Pods,
//! bootstrap token Secrets).

use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;

use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::registry::Registry;
use crate::storage::ReadConsistency;
use crate::storage::Storage;

/// The surroundings of one authentication, borrowed from the API for its duration.
#[derive(Clone, Copy)]
pub struct AuthContext<'a> {
    /// The time of the request (the replica's clock).
    pub now: DateTime<Utc>,
    /// The audiences a token must be meant for: the API's own (`--api-audiences`), or the
    /// ones a TokenReview asks for.
    pub audiences: &'a [String],
    /// The naming flavor.
    pub flavor: Flavor,
    storage: &'a dyn Storage,
    registry: &'a Registry,
}

impl<'a> AuthContext<'a> {
    /// The context of an authentication at `now` for `audiences`, reading from `storage`
    /// through `registry`.
    pub fn new(
        now: DateTime<Utc>,
        audiences: &'a [String],
        flavor: Flavor,
        storage: &'a dyn Storage,
        registry: &'a Registry,
    ) -> Self {
        Self {
            now,
            audiences,
            flavor,
            storage,
            registry,
        }
    }

    /// The same context for other `audiences` (a TokenReview's).
    pub fn for_audiences(self, audiences: &'a [String]) -> Self {
        Self { audiences, ..self }
    }

    /// The stored object `namespace/name` of `resource` in `group/version`, as this replica
    /// has applied it (no round trip to the leader: like Kubernetes' informer caches, a lookup
    /// per request must not cost a quorum read); `None` when it does not exist.
    pub async fn stored(
        &self,
        group: &str,
        version: &str,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, ApiError> {
        let Some(store) = self.registry.lookup(group, version, resource) else {
            return Err(ApiError::Internal(format!(
                "{resource}.{group} is not served"
            )));
        };
        match store
            .get(self.storage, namespace, name, ReadConsistency::Any)
            .await
        {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| ApiError::Internal(format!("stored {resource} {name}: {e}"))),
            Err(ApiError::NotFound { .. }) => Ok(None),
            Err(error) => Err(error),
        }
    }
}
