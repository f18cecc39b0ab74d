//! Update: a PUT body (or a subresource's part of it) compared against the current object,
//! validated and persisted at the revision read, retried when an unconditional update races.

use serde_json::Value;

use super::RETRY_ATTEMPTS;
use super::Store;
use super::WriteOptions;
use super::Written;
use super::admit::AdmittedWrite;
use super::metadata::bump_generation;
use super::metadata::keep_fields;
use super::metadata::meta_str;
use super::persistence::Persistence;
use crate::admission::Notes;
use crate::admission::Operation;
use crate::error::ApiError;
use crate::error::OPTIMISTIC_LOCK_MESSAGE;
use crate::error::excerpt;
use crate::registry::StoredJson;
use crate::storage::Revision;
use crate::storage::Storage;
use crate::storage::StorageError;
use crate::storage::StoredObject;

impl Store {
    /// Replaces the object `name` with a PUT body (R-RES-069, R-RES-070, R-RES-088): 404 when
    /// absent (these kinds do not create on update), 409 when the body's `resourceVersion` is
    /// stale; without a `resourceVersion` the update is unconditional. An update that changes
    /// nothing writes nothing and keeps the `resourceVersion`.
    ///
    /// With a `subresource` (`status`, `finalize`), only that part of the body is taken
    /// (the strategy's [`Strategy::prepare_for_subresource_update`]); without one, a type with
    /// a `status` subresource keeps its current status. A dry run answers the object it would
    /// store with the current `resourceVersion` (R-RES-193). Unknown and duplicate fields are
    /// answered as `write.field_validation` asks, dry run or not.
    pub async fn update(
        &self,
        storage: &dyn Storage,
        namespace: &str,
        name: &str,
        subresource: &str,
        body: &[u8],
        write: WriteOptions,
    ) -> Result<Written, ApiError> {
        let (decoded, mut warnings) = self.decode_body(body, &write)?;
        let target = (namespace, name, subresource);
        let mut writes = Persistence::optimistic(storage, write.dry_run);
        let written = loop {
            let answer = match &self.shared {
                Some(shared) => {
                    self.update_shared(shared, storage, &writes, target, &decoded, &write)
                        .await
                }
                None => {
                    self.update_decoded(storage, &writes, target, &decoded, &write)
                        .await
                }
            };
            match writes.again() {
                Some(quorum) => writes = quorum,
                None => break answer?,
            }
        };
        warnings.extend(written.warnings);
        Ok(Written {
            body: written.body,
            warnings,
        })
    }

    /// The update of a decoded body; `target` is (namespace, name, subresource). The Update
    /// entry of `write`'s manager is recorded (R-RES-205).
    pub(super) async fn update_decoded(
        &self,
        storage: &dyn Storage,
        writes: &Persistence<'_>,
        target: (&str, &str, &str),
        decoded: &Value,
        write: &WriteOptions,
    ) -> Result<Written, ApiError> {
        let (namespace, name, subresource) = target;
        let body_name = meta_str(decoded, "name");
        if body_name != name {
            return Err(ApiError::BadRequest(format!(
                "the name of the object ({}) does not match the name on the URL ({})",
                excerpt(body_name),
                excerpt(name)
            )));
        }
        let requested: Option<Revision> = match meta_str(decoded, "resourceVersion") {
            "" => None,
            rv => Some(rv.parse().map_err(|_| {
                ApiError::BadRequest(format!("invalid resourceVersion {:?}", excerpt(rv)))
            })?),
        };
        let key = self.resource.object_key(namespace, name);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (current, stored, old) = self.read_current(writes, &key, name).await?;
            if requested.is_some_and(|rv| rv != current.mod_revision) {
                return Err(self.conflict(name, OPTIMISTIC_LOCK_MESSAGE));
            }
            let mut obj = decoded.clone();
            self.apply_namespace(&mut obj, namespace)?;
            self.strategy.default_fields(&mut obj);
            let mut errs = self.prepare_update_meta(&mut obj, &old)?;
            if subresource.is_empty() {
                if self.resource.subresources.iter().any(|s| s == "status") {
                    keep_fields(&mut obj, &old, &["status"]);
                }
                self.strategy.prepare_for_update(&mut obj, &old);
            } else {
                // The subresource takes its part of the body, but the managed fields sent
                // stay: they track the subresource's change (Kubernetes' status rule).
                let managed = obj.pointer("/metadata/managedFields").cloned();
                self.strategy
                    .prepare_for_subresource_update(subresource, &mut obj, &old);
                if let (Some(managed), Some(meta)) = (
                    managed,
                    obj.get_mut("metadata").and_then(Value::as_object_mut),
                ) {
                    meta.insert("managedFields".to_owned(), managed);
                }
            }
            self.record_update(Some(&old), &mut obj, write, subresource)?;
            let admitted = AdmittedWrite::of(Operation::Update, target, write);
            let mut notes = Notes::default();
            self.admit_mutating(admitted, Some(&mut obj), Some(&old), &mut notes)
                .await?;
            if self.strategy.tracks_generation() {
                bump_generation(&mut obj, &old)?;
            }
            errs.extend(self.validate_new(&obj));
            errs.extend(crate::validation::validate_object_meta_update(&obj, &old));
            let status = subresource == "status";
            if !(status && self.strategy.status_validated_alone()) {
                self.check_required(&obj, &mut errs)?;
                errs.extend(self.strategy.validate_update(&obj, &old));
            }
            if status {
                errs.extend(self.strategy.validate_status_update(&obj, &old));
            }
            if !errs.is_empty() {
                return Err(self.invalid(&obj, errs));
            }
            self.admit_validating(admitted, Some(&obj), Some(&old), &mut notes)
                .await?;
            let mut warnings = match subresource {
                "" => self.strategy.warnings_on_update(&obj, &old),
                _ => Vec::new(),
            };
            warnings.append(&mut notes.warnings);
            self.authorize_write(storage, namespace, &obj, Some(&old))
                .await?;
            let (reserved, frees) = self
                .allocate(storage, &mut obj, Some(&old), None, writes.is_dry_run())
                .await?;
            self.strategy.canonicalize(&mut obj);
            let value = self.encode_fitting(&key, &mut obj)?;
            let unchanged =
                StoredJson::from_stored(value.clone()).is_ok_and(|new| new.json == stored.json);
            if unchanged {
                let body = stored.with_resource_version(current.mod_revision);
                return Ok(Written { body, warnings });
            }
            let written = writes
                .update(&key, value, current.mod_revision, self.max_object_bytes)
                .await;
            match &written {
                Ok(_) if !writes.is_dry_run() => self.release(storage, &frees).await,
                Ok(_) => {}
                Err(_) => self.release(storage, &reserved).await,
            }
            match written {
                Ok(updated) if self.strategy.ready_for_removal(&obj) => {
                    let body = self
                        .remove_after_update(writes, &key, name, updated)
                        .await?;
                    return Ok(Written { body, warnings });
                }
                Ok(updated) => {
                    let body = self.respond(&key, updated)?;
                    return Ok(Written { body, warnings });
                }
                Err(StorageError::Conflict { .. })
                    if requested.is_none() && attempt < RETRY_ATTEMPTS =>
                {
                    continue;
                }
                Err(e) => return Err(self.storage_error(e, name)),
            }
        }
    }

    /// An update removed the last thing holding a deleted object: remove it now (R-RES-061)
    /// and answer its final state. A dry run answers the state the update would leave, not
    /// the unchanged stored one.
    pub(super) async fn remove_after_update(
        &self,
        writes: &Persistence<'_>,
        key: &str,
        name: &str,
        updated: StoredObject,
    ) -> Result<Vec<u8>, ApiError> {
        if writes.is_dry_run() {
            return self.respond(key, updated);
        }
        match writes.delete(key, Some(updated.mod_revision)).await {
            Ok(deleted) => {
                self.release_object(writes, &deleted).await;
                self.respond(key, deleted)
            }
            // Someone else changed or removed it first; answer what this update wrote.
            Err(StorageError::Conflict { .. } | StorageError::NotFound { .. }) => {
                self.respond(key, updated)
            }
            Err(e) => Err(self.storage_error(e, name)),
        }
    }
}
