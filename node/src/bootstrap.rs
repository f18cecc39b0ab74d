//! Start-up work that needs a working cluster: creating the system namespaces, the API
//! servers' own Service and the bootstrap flow-control objects. Every replica runs it (it is idempotent), retrying until a leader
//! accepts the writes or the replica stops.

use std::sync::Arc;
use std::time::Duration;

use apiary_api::Clock;
use apiary_api::Flavor;
use apiary_api::RandomSource;
use apiary_api::bootstrap::ensure_api_service;
use apiary_api::bootstrap::ensure_system_namespaces;
use apiary_api::error::ApiError;
use apiary_api::flowcontrol::bootstrap::ensure_flow_control_objects;
use apiary_api::registry::allocator::ServiceRanges;
use apiary_api::storage::Storage;
use tokio_util::sync::CancellationToken;

use crate::readiness::PostStartHook;
use crate::readiness::ReplicaReadiness;

/// First pause between attempts; doubled up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// Longest pause between attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// What the start-up objects are made of, besides the storage they are written to.
#[derive(Clone)]
pub struct ClusterObjects {
    /// The API's naming flavor.
    pub flavor: Flavor,
    /// The ranges the API servers' Service allocates from.
    pub service_ranges: ServiceRanges,
    /// The API port the Service points at.
    pub api_port: u16,
    /// Stamps the objects (the replica's clock).
    pub clock: Arc<dyn Clock>,
    /// Draws their uids (the replica's randomness).
    pub random: RandomSource,
}

/// Ensures the system namespaces, then the API servers' Service, then the bootstrap
/// flow-control objects exist, retrying (no leader
/// yet, leader changing) until it succeeds or `stop` is cancelled. Each step
/// done is marked on `readiness` (its `poststarthook/<name>` check).
pub async fn ensure_cluster_objects(
    storage: Arc<dyn Storage>,
    objects: ClusterObjects,
    readiness: ReplicaReadiness,
    stop: CancellationToken,
) {
    let ClusterObjects {
        flavor,
        service_ranges,
        api_port,
        clock,
        random,
    } = objects;
    let mut backoff = FIRST_BACKOFF;
    loop {
        let storage = storage.as_ref();
        let created = match ensure_system_namespaces(storage, flavor, clock.as_ref(), &random).await
        {
            Ok(()) => {
                readiness.mark_done(PostStartHook::SystemNamespaces);
                let (clock, random) = (clock.as_ref(), &random);
                match ensure_api_service(storage, flavor, service_ranges, api_port, clock, random)
                    .await
                {
                    Ok(()) => {
                        readiness.mark_done(PostStartHook::ApiService);
                        ensure_flow_control_objects(storage, flavor, clock, random).await
                    }
                    Err(e) => Err(e),
                }
            }
            Err(e) => Err(e),
        };
        match created {
            Ok(()) => {
                readiness.mark_done(PostStartHook::FlowControlObjects);
                tracing::info!("system namespaces and flow-control objects present");
                return;
            }
            // No leader yet is the expected start-up state; anything else (a corrupt store, a
            // refused object) will not go away by itself, so it is logged where it is seen.
            Err(error @ ApiError::ServiceUnavailable(_)) => {
                tracing::debug!(%error, "system namespaces not created yet; retrying");
            }
            Err(error) => tracing::warn!(%error, "creating the system namespaces failed; retrying"),
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(backoff) => {}
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}
