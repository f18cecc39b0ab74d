//! Delete: preconditions, the strategy's choice (remove, mark with `deletionTimestamp`,
//! refuse), and the delete of a whole selected collection.

use chrono::DateTime;
use chrono::Utc;
use serde_json::Map;
use serde_json::json;

use super::RETRY_ATTEMPTS;
use super::Store;
use super::WriteOptions;
use super::corrupt;
use super::encode;
use super::metadata::meta_str;
use super::persistence::Persistence;
use super::rfc3339;
use crate::error::ApiError;
use crate::error::excerpt;
use crate::registry::DeleteOptions;
use crate::registry::strategy::DeleteAction;
use crate::request::ListOptions;
use crate::request::ListRead;
use crate::storage::ReadConsistency;
use crate::storage::Storage;
use crate::storage::StorageError;

impl Store {
    /// Deletes the object `name` (R-RES-062, R-RES-055, R-RES-060, R-RES-092): 404 when
    /// absent; 409 when a precondition differs. Objects held by finalizers are marked with
    /// `deletionTimestamp` and answered as they now are; removed objects are answered with a
    /// `Status` of `status: Success` naming them. A dry run answers the same and leaves the
    /// object as it is (R-RES-193).
    pub async fn delete(
        &self,
        storage: &dyn Storage,
        namespace: &str,
        name: &str,
        options: &DeleteOptions,
        now: DateTime<Utc>,
        write: WriteOptions,
    ) -> Result<Vec<u8>, ApiError> {
        self.check_namespace_deletable(name)?;
        if let Some(shared) = &self.shared {
            let target = (namespace, name);
            return self
                .delete_shared(shared, storage, target, options, now, write)
                .await;
        }
        let writes = Persistence::new(storage, write.dry_run);
        let key = self.resource.object_key(namespace, name);
        let now = rfc3339(now);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (current, stored, mut obj) = self.read_current(storage, &key, name).await?;
            let uid = meta_str(&obj, "uid").to_owned();
            if let Some(want) = &options.preconditions.uid
                && *want != uid
            {
                return Err(self.conflict(
                    name,
                    format!(
                        "Precondition failed: UID in precondition: {}, UID in object meta: {uid}",
                        excerpt(want)
                    ),
                ));
            }
            let have = current.mod_revision.to_string();
            if let Some(want) = &options.preconditions.resource_version
                && *want != have
            {
                return Err(self.conflict(
                    name,
                    format!(
                        "Precondition failed: ResourceVersion in precondition: {}, ResourceVersion in object meta: {have}",
                        excerpt(want)
                    ),
                ));
            }
            let result = match self.strategy.before_delete(&mut obj, &now) {
                DeleteAction::Unchanged => {
                    return Ok(stored.with_resource_version(current.mod_revision));
                }
                DeleteAction::Refuse(reason) => return Err(self.conflict(name, reason)),
                DeleteAction::Remove => match writes.delete(&key, Some(current.mod_revision)).await
                {
                    Ok(deleted) => {
                        self.release_object(&writes, &deleted).await;
                        Ok(self.deleted_status(name, &uid))
                    }
                    Err(e) => Err(e),
                },
                DeleteAction::Mark => {
                    let value = encode(&key, &obj)?;
                    match writes
                        .update(&key, value, current.mod_revision, self.max_object_bytes)
                        .await
                    {
                        Ok(updated) => return self.respond(&key, updated),
                        Err(e) => Err(e),
                    }
                }
            };
            match result {
                Ok(body) => return Ok(body),
                Err(StorageError::Conflict { .. }) if attempt < RETRY_ATTEMPTS => continue,
                Err(e) => return Err(self.storage_error(e, name)),
            }
        }
    }

    pub(super) fn deleted_status(&self, name: &str, uid: &str) -> Vec<u8> {
        let mut details = Map::new();
        details.insert("name".to_owned(), name.into());
        if !self.resource.group.is_empty() {
            details.insert("group".to_owned(), self.resource.group.clone().into());
        }
        details.insert("kind".to_owned(), self.resource.plural.clone().into());
        details.insert("uid".to_owned(), uid.into());
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": details,
        })
        .to_string()
        .into_bytes()
    }

    /// Deletes every object in `namespace` (`None`: all namespaces) that the options'
    /// selectors select, each as a single delete would (R-RES-093; a dry run dry-runs each),
    /// and answers the `<Kind>List` of the objects as they were listed (Most Recent, unpaged).
    /// Objects that vanish meanwhile are skipped.
    pub async fn delete_collection(
        &self,
        storage: &dyn Storage,
        namespace: Option<&str>,
        options: &ListOptions,
        delete: &DeleteOptions,
        now: DateTime<Utc>,
        write: WriteOptions,
    ) -> Result<Vec<u8>, ApiError> {
        let selectors = self.selectors(options.selectors.clone())?;
        let prefix = self.resource.collection_key(namespace);
        let read = ListRead {
            consistency: ReadConsistency::Linearizable,
            after_key: None,
        };
        let page = self
            .select(storage, &prefix, &selectors, read, None)
            .await?;
        for (key, stored, _) in &page.items {
            let obj = stored.to_value().map_err(|e| corrupt(key, e))?;
            let ns = meta_str(&obj, "namespace");
            let name = meta_str(&obj, "name");
            match self
                .delete(storage, ns, name, delete, now, write.clone())
                .await
            {
                Ok(_) | Err(ApiError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        self.list_body(&page)
    }
}
