//! Delete: preconditions, the strategy's choice (remove, mark with `deletionTimestamp`,
//! refuse), and the delete of a whole selected collection.

use bytes::Bytes;
use chrono::DateTime;
use chrono::Utc;
use serde_json::Map;
use serde_json::json;

use super::RETRY_ATTEMPTS;
use super::Store;
use super::WriteOptions;
use super::admit::AdmittedWrite;
use super::corrupt;
use super::encode;
use super::metadata::meta_str;
use super::persistence::Persistence;
use crate::admission::Notes;
use crate::error::ApiError;
use crate::error::excerpt;
use crate::registry::DeleteAction;
use crate::registry::DeleteOptions;
use crate::registry::Deleted;
use crate::registry::Preconditions;
use crate::request::ListOptions;
use crate::request::ListRead;
use crate::storage::ReadConsistency;
use crate::storage::Storage;
use crate::storage::StorageError;
use crate::storage::StoredObject;

impl Store {
    /// Deletes the object `name` (R-RES-062, R-RES-055, R-RES-060, R-RES-092) as `options`
    /// ask: 404 when absent; 409 when a precondition differs. The kind's strategy decides
    /// ([`DeleteAction`]): objects kept by finalizers or a grace period are marked with
    /// `deletionTimestamp` and answered as they now are; removed objects are answered as the
    /// kind answers them (the object, or a `Status` of `status: Success` naming it). A dry run
    /// answers the same and leaves the object as it is (R-RES-193).
    pub async fn delete(
        &self,
        storage: &dyn Storage,
        namespace: &str,
        name: &str,
        options: &DeleteOptions,
        now: DateTime<Utc>,
        write: WriteOptions,
    ) -> Result<Deleted, ApiError> {
        if let Some(shared) = &self.shared {
            let target = (namespace, name);
            return self
                .delete_shared(shared, storage, target, options, now, write)
                .await;
        }
        let key = self.resource.object_key(namespace, name);
        let mut writes = Persistence::optimistic(storage, write.dry_run);
        loop {
            let target = (key.as_str(), name, write.admitted);
            let answer = self.delete_once(&writes, target, options, now).await;
            match writes.again() {
                Some(quorum) => writes = quorum,
                None => return answer,
            }
        }
    }

    /// One delete of the object at `key`, its object read through `writes`; `target` is
    /// (key, name, whether admission already ran: [`WriteOptions::admitted`]).
    async fn delete_once(
        &self,
        writes: &Persistence<'_>,
        (key, name, admitted): (&str, &str, bool),
        options: &DeleteOptions,
        now: DateTime<Utc>,
    ) -> Result<Deleted, ApiError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (current, stored, mut obj) = self.read_current(writes, key, name).await?;
            let uid = meta_str(&obj, "uid").to_owned();
            self.check_preconditions(name, &options.preconditions, &uid, &current)?;
            let namespace = meta_str(&obj, "namespace").to_owned();
            let write = AdmittedWrite::delete(&namespace, name, options, admitted);
            let mut notes = Notes::default();
            self.admit_mutating(write, None, None, &mut notes).await?;
            self.admit_validating(write, None, Some(&obj), &mut notes)
                .await?;
            let answer = |body, removed| Deleted {
                body,
                removed,
                warnings: notes.warnings.clone(),
            };
            let kept = |body| answer(body, false);
            let action = self.strategy.before_delete(&mut obj, now, options);
            let marked = match action {
                DeleteAction::Mark | DeleteAction::MarkThenRemove => Some(encode(key, &obj)?),
                _ => None,
            };
            let result = match (action, marked) {
                (DeleteAction::Refuse(reason), _) => return Err(self.conflict(name, reason)),
                (DeleteAction::Remove, _) => writes.delete(key, Some(current.mod_revision)).await,
                (DeleteAction::Mark, Some(value)) => {
                    match self.mark(writes, key, value, &current).await {
                        Ok(marked) => return self.respond(key, marked).map(kept),
                        Err(e) => Err(e),
                    }
                }
                (DeleteAction::MarkThenRemove, Some(value)) => {
                    match self.mark(writes, key, value, &current).await {
                        Ok(marked) if writes.is_dry_run() => {
                            let body = self.respond(key, marked)?;
                            return Ok(answer(body, true));
                        }
                        Ok(marked) => writes.delete(key, Some(marked.mod_revision)).await,
                        Err(e) => Err(e),
                    }
                }
                (
                    DeleteAction::Unchanged | DeleteAction::Mark | DeleteAction::MarkThenRemove,
                    _,
                ) => {
                    return Ok(kept(stored.with_resource_version(current.mod_revision)));
                }
            };
            match result {
                Ok(deleted) => {
                    self.release_object(writes, &deleted).await;
                    let body = match self.resource.returns_deleted_object {
                        true => self.respond(key, deleted)?,
                        false => self.deleted_status(name, &uid),
                    };
                    return Ok(answer(body, true));
                }
                Err(StorageError::Conflict { .. }) if attempt < RETRY_ATTEMPTS => continue,
                Err(e) => return Err(self.storage_error(e, name)),
            }
        }
    }

    /// 409 when `preconditions` name another uid or resourceVersion than `current`'s.
    fn check_preconditions(
        &self,
        name: &str,
        preconditions: &Preconditions,
        uid: &str,
        current: &StoredObject,
    ) -> Result<(), ApiError> {
        if let Some(want) = &preconditions.uid
            && want != uid
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
        if let Some(want) = &preconditions.resource_version
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
        Ok(())
    }

    /// Persists `value`, the object at `key` as a delete marked it, over `current`.
    async fn mark(
        &self,
        writes: &Persistence<'_>,
        key: &str,
        value: Bytes,
        current: &StoredObject,
    ) -> Result<StoredObject, StorageError> {
        writes
            .update(key, value, current.mod_revision, self.max_object_bytes)
            .await
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
        let converted = self.converted_items(&page.items).await?;
        self.list_body(&page, converted)
    }
}
