//! Start-up work that needs a working cluster: creating the system namespaces and the API
//! servers' own Service. Every replica runs it (it is idempotent), retrying until a leader
//! accepts the writes or the replica stops.

use std::sync::Arc;
use std::time::Duration;

use apiary_api::Flavor;
use apiary_api::bootstrap::ensure_api_service;
use apiary_api::bootstrap::ensure_system_namespaces;
use apiary_api::error::ApiError;
use apiary_api::registry::allocator::ServiceRanges;
use apiary_api::storage::Storage;
use tokio_util::sync::CancellationToken;

/// First pause between attempts; doubled up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// Longest pause between attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// Ensures the system namespaces exist, retrying (no leader yet, leader changing) until it
/// succeeds (`true`) or `stop` is cancelled (`false`).
pub async fn ensure_namespaces(
    storage: Arc<dyn Storage>,
    flavor: Flavor,
    stop: CancellationToken,
) -> bool {
    ensure_cluster_objects(storage, flavor, None, stop).await
}

/// As [`ensure_namespaces`], and then the API servers' Service when `service` gives the
/// ranges it allocates from and the API port it points at.
pub async fn ensure_cluster_objects(
    storage: Arc<dyn Storage>,
    flavor: Flavor,
    service: Option<(ServiceRanges, u16)>,
    stop: CancellationToken,
) -> bool {
    let mut backoff = FIRST_BACKOFF;
    loop {
        let created = match ensure_system_namespaces(storage.as_ref(), flavor).await {
            Ok(()) => match service {
                Some((ranges, port)) => {
                    ensure_api_service(storage.as_ref(), flavor, ranges, port).await
                }
                None => Ok(()),
            },
            Err(e) => Err(e),
        };
        match created {
            Ok(()) => {
                tracing::info!("system namespaces present");
                return true;
            }
            // No leader yet is the expected start-up state; anything else (a corrupt store, a
            // refused object) will not go away by itself, so it is logged where it is seen.
            Err(error @ ApiError::ServiceUnavailable(_)) => {
                tracing::debug!(%error, "system namespaces not created yet; retrying");
            }
            Err(error) => tracing::warn!(%error, "creating the system namespaces failed; retrying"),
        }
        tokio::select! {
            () = stop.cancelled() => return false,
            () = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}
