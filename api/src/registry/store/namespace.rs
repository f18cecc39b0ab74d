//! Namespace lifecycle: a namespaced create needs its namespace to exist and not be
//! terminating (Kubernetes' NamespaceLifecycle admission).

use serde_json::Value;

use super::Store;
use super::corrupt;
use crate::error::ApiError;
use crate::registry::StoredJson;
use crate::registry::builtin::namespace_type;
use crate::storage::ReadConsistency;
use crate::storage::Storage;

impl Store {
    /// A namespaced create needs its namespace to exist (404 naming the namespace) and not
    /// be terminating (403), as Kubernetes' NamespaceLifecycle admission.
    pub(super) async fn check_namespace_open(
        &self,
        storage: &dyn Storage,
        namespace: &str,
        name: &str,
    ) -> Result<(), ApiError> {
        let ns_type = namespace_type();
        let key = ns_type.object_key("", namespace);
        let found = storage
            .get(&key, ReadConsistency::Linearizable)
            .await
            .map_err(|e| ApiError::from_storage(e, &ns_type.group_resource(), namespace))?;
        let Some(found) = found else {
            return Err(ApiError::NotFound {
                resource: ns_type.group_resource(),
                name: namespace.to_owned(),
            });
        };
        let ns = StoredJson::from_stored(found.value)
            .and_then(|s| s.to_value())
            .map_err(|e| corrupt(&key, e))?;
        if ns.pointer("/status/phase").and_then(Value::as_str) == Some("Terminating") {
            return Err(ApiError::Forbidden {
                resource: Some(self.group_resource()),
                name: name.to_owned(),
                reason: format!(
                    "unable to create new content in namespace {namespace} because it is being terminated"
                ),
            });
        }
        Ok(())
    }
}
