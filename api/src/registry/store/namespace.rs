//! Namespace lifecycle, as Kubernetes' NamespaceLifecycle admission: a namespaced create
//! needs its namespace to exist and not be terminating, and the system namespaces cannot be
//! deleted. The namespace is read from the replica's own state (as the plugin reads its
//! informer cache), with a quorum read only when it is not found there.

use serde_json::Value;

use super::Store;
use super::corrupt;
use crate::error::ApiError;
use crate::registry::StoredJson;
use crate::registry::builtin::namespace_type;
use crate::storage::ReadConsistency;
use crate::storage::Storage;
use crate::storage::StoredObject;

impl Store {
    /// A namespaced create needs its namespace to exist (404 naming the namespace) and not
    /// be terminating (403 with the `NamespaceTerminating` cause), as Kubernetes'
    /// NamespaceLifecycle admission. `name` names the object (its `generateName` if unnamed).
    pub(super) async fn check_namespace_open(
        &self,
        storage: &dyn Storage,
        namespace: &str,
        name: &str,
    ) -> Result<(), ApiError> {
        let ns_type = namespace_type();
        let key = ns_type.object_key("", namespace);
        let resource = ns_type.group_resource();
        let read = |consistency| storage.get(&key, consistency);
        // The replica's own state first; a namespace it does not have yet may have just been
        // created through another replica, so only then does a quorum read decide.
        let found: Option<StoredObject> = match read(ReadConsistency::Any).await {
            Ok(Some(found)) => Ok(Some(found)),
            Ok(None) => read(ReadConsistency::Linearizable).await,
            Err(e) => Err(e),
        }
        .map_err(|e| ApiError::from_storage(e, &resource, namespace))?;
        let Some(found) = found else {
            return Err(ApiError::NotFound {
                resource,
                name: namespace.to_owned(),
            });
        };
        let ns = StoredJson::from_stored(found.value)
            .and_then(|s| s.to_value())
            .map_err(|e| corrupt(&key, e))?;
        if ns.pointer("/status/phase").and_then(Value::as_str) == Some("Terminating") {
            return Err(ApiError::NamespaceTerminating {
                resource: self.group_resource(),
                name: name.to_owned(),
                namespace: namespace.to_owned(),
            });
        }
        Ok(())
    }

    /// The system namespaces (the flavor's system and public namespaces, and `default`)
    /// cannot be deleted: 403, as Kubernetes' NamespaceLifecycle admission answers.
    pub(super) fn check_namespace_deletable(&self, name: &str) -> Result<(), ApiError> {
        let Some(flavor) = self.builtin else {
            return Ok(());
        };
        if self.group_resource() != namespace_type().group_resource() {
            return Ok(());
        }
        let immortal = [
            flavor.system_namespace(),
            flavor.public_namespace(),
            "default",
        ];
        if immortal.contains(&name) {
            return Err(ApiError::Forbidden {
                resource: Some(self.group_resource()),
                name: name.to_owned(),
                reason: "this namespace may not be deleted".to_owned(),
            });
        }
        Ok(())
    }
}
