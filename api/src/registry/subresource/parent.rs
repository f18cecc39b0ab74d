//! The object a subresource request is about, reached through its own generic store so the
//! store's steps (validation, generation, optimistic locking, dry run) apply unchanged.

use serde_json::Value;

use crate::admission::ObjectKind;
use crate::admission::Operation;
use crate::error::ApiError;
use crate::registry::Registry;
use crate::registry::Store;
use crate::registry::SubresourceWrite;
use crate::storage::ReadConsistency;
use crate::storage::Storage;

/// The object a subresource request is about.
pub(crate) struct Parent<'a> {
    /// Where objects are.
    pub storage: &'a dyn Storage,
    /// Every served store (eviction reads pods and disruption budgets).
    pub registry: &'a Registry,
    /// The parent's store.
    pub store: &'a Store,
    /// The parent's namespace (empty for cluster-scoped parents).
    pub namespace: &'a str,
    /// The parent's name.
    pub name: &'a str,
}

impl Parent<'_> {
    /// The parent as it is now (a linearizable read, 404 when absent), as JSON.
    pub(crate) async fn read(&self) -> Result<Value, ApiError> {
        let body = self
            .store
            .get(
                self.storage,
                self.namespace,
                self.name,
                ReadConsistency::Linearizable,
            )
            .await?;
        stored(&body)
    }

    /// Admits `object`, the subresource's own object of `kind` (a Scale, a Binding, an
    /// Eviction, a TokenRequest), in place of the parent (crate::admission); `old` is the
    /// current one where there is one (a Scale). Answers the plugins' warnings.
    pub(crate) async fn admit<T>(
        &self,
        (operation, subresource): (Operation, &str),
        kind: ObjectKind<'_>,
        object: &T,
        old: Option<&Value>,
        dry_run: bool,
    ) -> Result<(T, Vec<String>), ApiError>
    where
        T: serde::Serialize + serde::de::DeserializeOwned,
    {
        let mut value = serde_json::to_value(object)
            .map_err(|e| ApiError::Internal(format!("{} cannot be admitted: {e}", kind.kind)))?;
        let write = SubresourceWrite {
            operation,
            namespace: self.namespace,
            name: self.name,
            subresource,
            kind,
            dry_run,
        };
        let warnings = self.store.admit_subresource(write, &mut value, old).await?;
        let admitted = serde_json::from_value(value).map_err(|e| {
            ApiError::BadRequest(format!(
                "{} changed by admission is invalid: {e}",
                kind.kind
            ))
        })?;
        Ok((admitted, warnings))
    }
}

/// A stored object (or list) as JSON; 500 when it cannot be read, as the store wrote it.
pub(crate) fn stored(body: &[u8]) -> Result<Value, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::Internal(format!("a stored object cannot be read: {e}")))
}
