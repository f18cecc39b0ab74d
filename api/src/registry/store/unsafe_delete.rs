//! The forced removal of an object that cannot be read (R-RES-063, R-RES-064, R-RES-068):
//! Kubernetes' corrupt object deleter (KEP-3926). The handler comes here only for a delete
//! with `ignoreStoreReadErrorWithClusterBreakingPotential=true`, the
//! `AllowUnsafeMalformedObjectDeletion` gate on and both permissions granted.

use chrono::DateTime;
use chrono::Utc;
use serde_json::json;

use super::Store;
use super::WriteOptions;
use crate::error::ApiError;
use crate::group::GroupKind;
use crate::registry::DeleteOptions;
use crate::registry::IGNORE_READ_ERRORS;
use crate::registry::StoredJson;
use crate::storage::ReadConsistency;
use crate::storage::Storage;
use crate::storage::StorageError;
use crate::validation::FieldError;

impl Store {
    /// Deletes the object `name` (in `namespace`) that can no longer be decoded. An object
    /// that reads normally, or none, is refused with 422 `Invalid` on the option and left
    /// as it is (R-RES-068). Otherwise the normal delete is tried first; when it fails
    /// because the object cannot be read, the key is removed from storage unconditionally:
    /// no finalizer, precondition or strategy is consulted and nothing the object held (a
    /// Service's addresses) is released, as Kubernetes skips its after-delete hooks
    /// (R-RES-063, R-RES-064). The answer is the `Status` kube-apiserver fills in for a
    /// deleter that returns no object.
    pub async fn delete_corrupt(
        &self,
        storage: &dyn Storage,
        namespace: &str,
        name: &str,
        options: &DeleteOptions,
        now: DateTime<Utc>,
        write: WriteOptions,
    ) -> Result<Vec<u8>, ApiError> {
        let home = self.shared.as_ref().map_or(self, |shared| &*shared.home);
        let key = home.resource.object_key(namespace, name);
        let found = storage
            .get(&key, ReadConsistency::Linearizable)
            .await
            .map_err(|e| self.storage_error(e, name))?;
        let unreadable = found.is_some_and(|found| {
            StoredJson::from_stored(found.value)
                .and_then(|stored| stored.to_value())
                .is_err()
        });
        if !unreadable {
            return Err(self.readable(name));
        }
        match self
            .delete(storage, namespace, name, options, now, write)
            .await
        {
            Ok(deleted) => return Ok(deleted.body),
            Err(ApiError::Corrupt(_)) => {}
            Err(e) => return Err(e),
        }
        tracing::warn!(key, "forced removal of an object that cannot be read");
        match storage.delete(&key, None).await {
            Ok(_) | Err(StorageError::NotFound { .. }) => Ok(self.forced_status(name)),
            Err(e) => Err(self.storage_error(e, name)),
        }
    }

    /// Kubernetes' refusal of the option for an object that is not corrupt.
    fn readable(&self, name: &str) -> ApiError {
        ApiError::Invalid {
            kind: GroupKind {
                group: self.resource.group.clone(),
                kind: self.resource.plural.clone(),
            },
            name: name.to_owned(),
            causes: vec![FieldError::invalid(
                IGNORE_READ_ERRORS,
                true,
                "is exclusively used to delete corrupt object(s), try again by removing this option",
            )],
        }
    }

    /// The `Status` of a forced removal: success, code 200, the name and the kind.
    fn forced_status(&self, name: &str) -> Vec<u8> {
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": {"name": name, "kind": self.resource.kind},
            "code": 200,
        })
        .to_string()
        .into_bytes()
    }
}
