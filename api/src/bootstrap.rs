//! Start-up objects every cluster has: the `default`, system, public and node-lease
//! namespaces, and the Service in `default` that points at the API servers (`kubernetes`),
//! created through the normal create path (uid and timestamps set), with the server's clock
//! and randomness.

use serde_json::json;

use crate::config::Clock;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::random::RandomSource;
use crate::registry::Registry;
use crate::registry::WriteOptions;
use crate::registry::allocator::ServiceRanges;
use crate::storage::ReadConsistency;
use crate::storage::Storage;

/// Creates the system namespaces that do not exist yet; idempotent (existing ones are left
/// as they are), so every replica may run it at start-up. `clock` stamps them, `random` draws
/// their uids.
pub async fn ensure_system_namespaces(
    storage: &dyn Storage,
    flavor: Flavor,
    clock: &dyn Clock,
    random: &RandomSource,
) -> Result<(), ApiError> {
    let registry = Registry::builtin(flavor).with_random(random);
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
                clock.now(),
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

/// Creates the Service that points at the API servers (`default/kubernetes` in the
/// kubernetes flavor) unless it exists, as Kubernetes' apiserver does: the first IP of the
/// cluster IP range, port `https` 443 to `api_port`. Idempotent; needs the `default`
/// namespace. `clock` stamps it, `random` draws its uid and its IPAddress record's.
pub async fn ensure_api_service(
    storage: &dyn Storage,
    flavor: Flavor,
    ranges: ServiceRanges,
    api_port: u16,
    clock: &dyn Clock,
    random: &RandomSource,
) -> Result<(), ApiError> {
    let registry = Registry::builtin(flavor)
        .with_service_ranges(flavor, ranges)
        .with_random(random);
    let store = registry
        .builtin_store("", "v1", "services")
        .ok_or_else(|| ApiError::Internal("services are not served".into()))?;
    let name = flavor.api_service_name();
    // Look first: a second create would fail on the taken IP before it finds the name taken.
    match store
        .get(storage, "default", name, ReadConsistency::Linearizable)
        .await
    {
        Ok(_) => return Ok(()),
        Err(ApiError::NotFound { .. }) => {}
        Err(e) => return Err(e),
    }
    let body = json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": name,
            "labels": {"component": "apiserver", "provider": name},
        },
        "spec": {
            "type": "ClusterIP",
            "clusterIP": ranges.cluster_ips.first().to_string(),
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": api_port}],
            "sessionAffinity": "None",
        },
    });
    match store
        .create(
            storage,
            "default",
            body.to_string().as_bytes(),
            clock.now(),
            WriteOptions::default(),
        )
        .await
    {
        Ok(_) | Err(ApiError::AlreadyExists { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}
