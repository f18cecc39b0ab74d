//! Create: a POST body decoded, defaulted, given its server-set metadata, validated,
//! allocated and persisted in one proposal that also checks the namespace is as it was found
//! open, with generated names drawn again when taken.

use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;

use super::Store;
use super::WriteOptions;
use super::Written;
use super::admit::AdmittedWrite;
use super::metadata::generated_name;
use super::metadata::meta_mut;
use super::metadata::meta_str;
use super::persistence::Persistence;
use super::rfc3339;
use crate::admission::Notes;
use crate::admission::Operation;
use crate::error::ApiError;
use crate::storage::Storage;
use crate::storage::StorageError;

/// Attempts of a create: a generated name that is taken is drawn again (Kubernetes retries
/// generated names), and a namespace that changed since it was found open is read again.
const CREATE_ATTEMPTS: usize = 8;

impl Store {
    /// Creates an object from a POST body (R-RES-087): the created object, with `uid`,
    /// `creationTimestamp`, `resourceVersion` (and `generation`) set. 409 AlreadyExists for a
    /// taken name; a generated name that is taken is drawn again. A dry run answers the same,
    /// without `resourceVersion` (R-RES-193). Unknown and duplicate fields are answered as
    /// `write.field_validation` asks, dry run or not.
    pub async fn create(
        &self,
        storage: &dyn Storage,
        namespace: &str,
        body: &[u8],
        now: DateTime<Utc>,
        write: WriteOptions,
    ) -> Result<Written, ApiError> {
        let (obj, mut warnings) = self.decode_body(body, &write)?;
        let writes = Persistence::new(storage, write.dry_run);
        let written = match &self.shared {
            Some(shared) => {
                self.create_shared(shared, storage, namespace, obj, now, &write)
                    .await?
            }
            None => {
                self.create_decoded(storage, &writes, namespace, obj, now, &write)
                    .await?
            }
        };
        warnings.extend(written.warnings);
        Ok(Written {
            body: written.body,
            warnings,
        })
    }

    /// The create of a decoded body, recording the Update entry of `write`'s manager; the
    /// strategy's warnings come with the created object.
    pub(super) async fn create_decoded(
        &self,
        storage: &dyn Storage,
        writes: &Persistence<'_>,
        namespace: &str,
        mut obj: Value,
        now: DateTime<Utc>,
        write: &WriteOptions,
    ) -> Result<Written, ApiError> {
        if !meta_str(&obj, "resourceVersion").is_empty() {
            // Kubernetes' storage refuses this (an object copied from a read), worded so.
            return Err(ApiError::Internal(
                "resourceVersion should not be set on objects to be created".into(),
            ));
        }
        self.apply_namespace(&mut obj, namespace)?;
        let named = match meta_str(&obj, "name") {
            "" => meta_str(&obj, "generateName"),
            name => name,
        }
        .to_owned();
        let checked = self.resource.is_namespaced() && self.namespace_lifecycle;
        let open_namespace = async |quorum| match checked {
            true => self
                .check_namespace_open(storage, namespace, &named, quorum)
                .await
                .map(Some),
            false => Ok(None),
        };
        let mut guard = open_namespace(writes.is_dry_run()).await?;
        self.strategy.default_fields(&mut obj);
        self.record_update(None, &mut obj, write, "")?;
        let admitted_name = meta_str(&obj, "name").to_owned();
        let admitted = AdmittedWrite::of(Operation::Create, (namespace, &admitted_name, ""), write);
        let mut notes = Notes::default();
        self.admit_mutating(admitted, Some(&mut obj), None, &mut notes)
            .await?;
        let generate_prefix = match (meta_str(&obj, "name"), meta_str(&obj, "generateName")) {
            ("", prefix) if !prefix.is_empty() => Some(prefix.to_owned()),
            _ => None,
        };
        let created = rfc3339(now);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut candidate = obj.clone();
            {
                let meta = meta_mut(&mut candidate)?;
                if let Some(prefix) = &generate_prefix {
                    meta.insert(
                        "name".to_owned(),
                        generated_name(prefix, &self.random).into(),
                    );
                }
                meta.remove("deletionTimestamp");
                meta.remove("deletionGracePeriodSeconds");
                meta.insert("uid".to_owned(), self.random.uuid().into());
                meta.insert("creationTimestamp".to_owned(), created.clone().into());
                if self.strategy.tracks_generation() {
                    meta.insert("generation".to_owned(), 1.into());
                } else {
                    meta.remove("generation");
                }
            }
            self.strategy.prepare_for_create(&mut candidate);
            let mut errs = self.validate_new(&candidate);
            errs.extend(self.strategy.validate_create(&candidate));
            self.check_required(&candidate, &mut errs)?;
            if !errs.is_empty() {
                return Err(self.invalid(&candidate, errs));
            }
            let mut validated = Notes::default();
            self.admit_validating(admitted, Some(&candidate), None, &mut validated)
                .await?;
            let mut warnings = self.strategy.warnings_on_create(&candidate);
            warnings.extend(notes.warnings.iter().chain(&validated.warnings).cloned());
            self.authorize_write(storage, namespace, &candidate, None)
                .await?;
            let (reserved, _) = self
                .allocate(
                    storage,
                    &mut candidate,
                    None,
                    Some(now),
                    writes.is_dry_run(),
                )
                .await?;
            self.strategy.canonicalize(&mut candidate);
            let name = meta_str(&candidate, "name").to_owned();
            let key = self.resource.object_key(namespace, &name);
            let written = match self.encode_fitting(&key, &mut candidate) {
                Ok(value) => {
                    let limit = self.max_object_bytes;
                    writes.create(&key, value, limit, guard.as_ref()).await
                }
                Err(e) => {
                    self.release(storage, &reserved).await;
                    return Err(e);
                }
            };
            if written.is_err() {
                self.release(storage, &reserved).await;
            }
            match written {
                Ok(stored) => {
                    let body = match writes.is_dry_run() {
                        true => self.respond_unstored(&key, stored)?,
                        false => self.respond(&key, stored)?,
                    };
                    return Ok(Written { body, warnings });
                }
                Err(StorageError::AlreadyExists { .. })
                    if generate_prefix.is_some() && attempt < CREATE_ATTEMPTS =>
                {
                    continue;
                }
                // The namespace changed since it was found open: look again, with a quorum
                // read (it may have started terminating).
                Err(StorageError::GuardFailed { .. }) if attempt < CREATE_ATTEMPTS => {
                    guard = open_namespace(true).await?;
                    continue;
                }
                Err(e) => return Err(self.storage_error(e, &name)),
            }
        }
    }
}
