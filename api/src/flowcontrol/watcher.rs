//! Keeps the filter's configuration current: lists the FlowSchemas and
//! PriorityLevelConfigurations, watches both, and reloads on every change; every ten seconds
//! it reassigns the seats levels lend and borrow. Retries with a backoff while the store is
//! unavailable, and ends when the filter is gone.

use std::sync::Arc;
use std::sync::Weak;
use std::time::Duration;

use serde_json::Value;

use super::FlowControl;
use crate::registry::StoredJson;
use crate::storage::ReadConsistency;
use crate::storage::Storage;
use crate::storage::StorageError;

/// How often borrowed seats are reassigned (Kubernetes' 10 s).
const REBALANCE_PERIOD: Duration = Duration::from_secs(10);
/// First pause after a failure; doubled up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
/// Longest pause after a failure.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// The objects under `prefix`, parsed; objects that do not parse are skipped.
async fn objects(
    storage: &dyn Storage,
    prefix: &str,
    consistency: ReadConsistency,
) -> Result<(Vec<Value>, u64), StorageError> {
    let page = storage.list(prefix, None, 0, consistency).await?;
    let values = page
        .items
        .into_iter()
        .filter_map(|item| StoredJson::from_stored(item.value).ok()?.to_value().ok())
        .collect();
    Ok((values, page.revision))
}

/// Reads both kinds and installs them; the revision read.
async fn reload(
    control: &FlowControl,
    storage: &dyn Storage,
    consistency: ReadConsistency,
) -> Result<u64, StorageError> {
    let (schema_prefix, level_prefix) = control.prefixes();
    let (schemas, revision) = objects(storage, &schema_prefix, consistency).await?;
    let at_least = ReadConsistency::NotOlderThan(revision);
    let (levels, _) = objects(storage, &level_prefix, at_least).await?;
    control.install(&schemas, &levels);
    Ok(revision)
}

/// Lists, then follows changes until the store fails or the filter is gone.
async fn follow(control: Weak<FlowControl>, storage: &dyn Storage) -> Result<(), StorageError> {
    let Some(strong) = control.upgrade() else {
        return Ok(());
    };
    let revision = reload(&strong, storage, ReadConsistency::Linearizable).await?;
    let (schema_prefix, level_prefix) = strong.prefixes();
    drop(strong);
    let mut schemas = storage.watch(&schema_prefix, revision).await?;
    let mut levels = storage.watch(&level_prefix, revision).await?;
    let mut rebalance = tokio::time::interval(REBALANCE_PERIOD);
    loop {
        let changed = tokio::select! {
            batch = schemas.next() => batch?,
            batch = levels.next() => batch?,
            _ = rebalance.tick() => {
                let Some(control) = control.upgrade() else { return Ok(()) };
                control.rebalance();
                continue;
            }
        };
        let Some(batch) = changed else {
            return Err(StorageError::Unavailable {
                reason: "the store stopped serving the watch".into(),
            });
        };
        let Some(control) = control.upgrade() else {
            return Ok(());
        };
        reload(
            &control,
            storage,
            ReadConsistency::NotOlderThan(batch.revision),
        )
        .await?;
    }
}

/// Runs [`follow`] until the filter is gone, retrying after failures.
pub async fn run(control: Weak<FlowControl>, storage: Arc<dyn Storage>) {
    let mut backoff = FIRST_BACKOFF;
    loop {
        match follow(control.clone(), storage.as_ref()).await {
            Ok(()) => return,
            Err(error) => {
                tracing::debug!(%error, "flow-control configuration not current; retrying");
            }
        }
        if control.strong_count() == 0 {
            return;
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}
