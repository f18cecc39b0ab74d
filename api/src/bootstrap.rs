//! Start-up objects every cluster has: the `default`, system, public and node-lease
//! namespaces, created through the normal create path (uid and timestamps set).

use chrono::Utc;
use serde_json::json;

use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::registry::Registry;
use crate::registry::WriteOptions;
use crate::storage::Storage;

/// Creates the system namespaces that do not exist yet; idempotent (existing ones are left
/// as they are), so every replica may run it at start-up.
pub async fn ensure_system_namespaces(
    storage: &dyn Storage,
    flavor: Flavor,
) -> Result<(), ApiError> {
    let registry = Registry::builtin(flavor);
    let store = registry
        .namespaces()
        .ok_or_else(|| ApiError::Internal("namespaces are not served".into()))?;
    let names = [
        "default",
        flavor.system_namespace(),
        flavor.public_namespace(),
        flavor.node_lease_namespace(),
    ];
    for name in names {
        let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
        match store
            .create(
                storage,
                "",
                body.to_string().as_bytes(),
                Utc::now(),
                WriteOptions::default(),
            )
            .await
        {
            Ok(_) | Err(ApiError::AlreadyExists { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
