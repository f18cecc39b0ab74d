//! The conversion steps of a store whose served version shares another version's storage
//! (`events.k8s.io/v1` events stored as core `v1` events; issue 5 design §3.1).
//!
//! Such a store keys its objects by the storage home, so reads and selectors work on the
//! stored objects as they are; only the objects it answers are converted (and cached per
//! object version, [`ReadConversion`]). Writes decode and check the body in the served
//! version, convert it to the storage version, and hand it to the home's store, which runs
//! the home's strategy and validation and stores it; its answer is converted back. One
//! object set, one revision sequence: continue tokens and watches are shared.

use std::sync::Arc;

use bytes::Bytes;
use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;

use super::Store;
use super::WriteOptions;
use super::Written;
use super::corrupt;
use super::persistence::Persistence;
use super::read_conversion::Converter;
use super::read_conversion::ReadConversion;
use super::read_conversion::set_type;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::registry::DeleteOptions;
use crate::registry::Deleted;
use crate::registry::StoredJson;
use crate::registry::conversion::Conversion;
use crate::registry::conversion::VersionConversion;
use crate::storage::Revision;
use crate::storage::Storage;

/// The storage side of a store that shares another version's storage.
pub(super) struct Shared {
    /// The store of the storage version: its strategy, validation and persistence.
    pub(super) home: Box<Store>,
    pub(super) read: ReadConversion,
}

impl Shared {
    /// Sets the home store's object size limit (it runs the writes).
    pub(super) fn set_max_object_bytes(&mut self, limit: usize) {
        self.home.max_object_bytes = limit;
    }

    /// A served-version body (decoded and checked) in the storage version.
    async fn to_storage(&self, mut obj: Value) -> Result<Value, ApiError> {
        let home = self.home.resource();
        let converted = match &self.read.conversion {
            Converter::Builtin(conversion) => {
                if let Value::Object(m) = &mut obj {
                    m.remove("apiVersion");
                    m.remove("kind");
                }
                conversion
                    .to_storage(obj, self.read.flavor)
                    .map_err(|e| ApiError::BadRequest(e.to_string()))?
            }
            Converter::Versions(versions) => {
                set_type(&mut obj, &self.read.api_version, &self.read.kind);
                (versions.convert(vec![obj], &home.api_version()).await?)
                    .pop()
                    .ok_or_else(|| ApiError::Internal("no object was converted".into()))?
            }
        };
        let cannot = |e: &dyn std::fmt::Display| {
            ApiError::BadRequest(format!(
                "the object cannot be converted to {}: {e}",
                home.api_version()
            ))
        };
        // The home's decoder checks and orders what the conversion produced.
        let bytes = serde_json::to_vec(&converted).map_err(|e| cannot(&e))?;
        let (mut stored, _) = match self.home.decode_body(&bytes, &WriteOptions::default()) {
            Ok(decoded) => decoded,
            Err(ApiError::BadRequest(e)) => return Err(cannot(&e)),
            Err(e) => return Err(e),
        };
        set_type(&mut stored, &home.api_version(), &home.kind);
        Ok(stored)
    }

    /// `e`, an error of the home store, naming the served resource when it named the home's
    /// (other resources, such as the namespace of a create, stay named).
    fn rebrand(&self, served: &Store, e: ApiError) -> ApiError {
        let home = self.home.group_resource();
        let ours = served.group_resource();
        match e {
            ApiError::NotFound { resource, name } if resource == home => ApiError::NotFound {
                resource: ours,
                name,
            },
            ApiError::AlreadyExists { resource, name } if resource == home => {
                ApiError::AlreadyExists {
                    resource: ours,
                    name,
                }
            }
            ApiError::Conflict {
                resource,
                name,
                reason,
            } if resource == home => ApiError::Conflict {
                resource: ours,
                name,
                reason,
            },
            ApiError::Invalid { name, causes, .. } => ApiError::Invalid {
                kind: served.resource.group_kind(),
                name,
                causes,
            },
            ApiError::Forbidden {
                resource: Some(resource),
                name,
                reason,
            } if resource == home => ApiError::Forbidden {
                resource: Some(ours),
                name,
                reason,
            },
            other => other,
        }
    }
}

impl Store {
    /// This store (of a served version) with its objects stored by `home` (the store of the
    /// storage version), converted by `conversion`.
    pub fn stored_in(
        self,
        home: Store,
        conversion: &'static dyn Conversion,
        flavor: Flavor,
    ) -> Self {
        self.sharing(home, Converter::Builtin(conversion), flavor)
    }

    /// This store (of a served version of a custom resource) with its objects stored by
    /// `home` (the store of the storage version, [`Store::reading_versions`]), each
    /// converted from the version it was stored in by `conversion`.
    pub fn stored_in_versions(
        self,
        home: Store,
        conversion: Arc<dyn VersionConversion>,
        flavor: Flavor,
    ) -> Self {
        self.sharing(home, Converter::Versions(conversion), flavor)
    }

    fn sharing(mut self, home: Store, conversion: Converter, flavor: Flavor) -> Self {
        let read = ReadConversion::new(conversion, flavor, &self);
        self.shared = Some(Shared {
            home: Box::new(home),
            read,
        });
        self
    }

    /// This store (of the storage version of a custom resource) reading its objects through
    /// `conversion`: they stay stored in the version they were written in, which a change
    /// of the storage version leaves behind.
    pub fn reading_versions(
        mut self,
        conversion: Arc<dyn VersionConversion>,
        flavor: Flavor,
    ) -> Self {
        self.versions = Some(ReadConversion::new(
            Converter::Versions(conversion),
            flavor,
            &self,
        ));
        self
    }

    /// How this store's reads convert stored objects: `None` when they are served as
    /// stored (the stored bytes are spliced as they are).
    pub(crate) fn read_conversion(&self) -> Option<ReadConversion> {
        self.reader().cloned()
    }

    fn reader(&self) -> Option<&ReadConversion> {
        (self.shared.as_ref().map(|s| &s.read)).or(self.versions.as_ref())
    }

    /// The answer of a read: the stored bytes with `resourceVersion` spliced in, or when
    /// the object is stored in another version, the (cached) conversion.
    pub(super) async fn answer(
        &self,
        key: &str,
        stored: &StoredJson,
        revision: Revision,
    ) -> Result<Vec<u8>, ApiError> {
        match self.reader() {
            None => Ok(stored.with_resource_version(revision)),
            Some(reader) => (reader.objects(&[(key, stored, revision)]).await?)
                .pop()
                .map(|b| b.to_vec())
                .ok_or_else(|| ApiError::Internal("no object was converted".into())),
        }
    }

    /// The answers of listed objects (see [`Self::answer`]), converted together; `None`
    /// for those served as stored (all of them without a conversion).
    pub(super) async fn converted_items(
        &self,
        items: &[(String, StoredJson, Revision)],
    ) -> Result<Vec<Option<Bytes>>, ApiError> {
        let Some(reader) = self.reader() else {
            return Ok(vec![None; items.len()]);
        };
        let items: Vec<(&str, &StoredJson, Revision)> = (items.iter())
            .map(|(key, stored, revision)| (key.as_str(), stored, *revision))
            .collect();
        reader.listed(&items, true).await
    }

    /// Appends the answer of a listed object to `out` (see [`Self::answer`]), for readers
    /// that convert without calling out.
    pub(super) fn write_item(
        &self,
        key: &str,
        stored: &StoredJson,
        revision: Revision,
        out: &mut Vec<u8>,
    ) -> Result<(), ApiError> {
        match self.reader() {
            None => stored.write_with_resource_version(revision, out),
            Some(reader) => out.extend_from_slice(&reader.object(key, stored, revision)?),
        }
        Ok(())
    }

    /// `obj`, the current object a write read, in this store's version with its stored
    /// form `stored` to match (custom resources stored in another version); as read
    /// otherwise.
    pub(super) async fn current_in_version(
        &self,
        key: &str,
        stored: StoredJson,
        obj: Value,
    ) -> Result<(StoredJson, Value), ApiError> {
        let Some(versions) = &self.versions else {
            return Ok((stored, obj));
        };
        let Some(converted) = versions.current(&obj).await? else {
            return Ok((stored, obj));
        };
        let bytes = StoredJson::to_stored(&converted).map_err(|e| corrupt(key, e))?;
        let stored = StoredJson::from_stored(bytes).map_err(|e| corrupt(key, e))?;
        Ok((stored, converted))
    }

    /// The create of a decoded served-version body, stored through the home (a dry run as
    /// `write` asks).
    pub(super) async fn create_shared(
        &self,
        shared: &Shared,
        storage: &dyn Storage,
        namespace: &str,
        obj: Value,
        now: DateTime<Utc>,
        write: &WriteOptions,
    ) -> Result<Written, ApiError> {
        let obj = shared.to_storage(obj).await?;
        let writes = Persistence::new(storage, write.dry_run);
        let written = shared
            .home
            .create_decoded(storage, &writes, namespace, obj, now, write)
            .await
            .map_err(|e| shared.rebrand(self, e))?;
        Ok(Written {
            body: shared.read.answer(&written.body).await?,
            warnings: written.warnings,
        })
    }

    /// The update of a decoded served-version body, stored through the home; `target` is
    /// (namespace, name, subresource).
    pub(super) async fn update_shared(
        &self,
        shared: &Shared,
        storage: &dyn Storage,
        writes: &Persistence<'_>,
        target: (&str, &str, &str),
        obj: &Value,
        write: &WriteOptions,
    ) -> Result<Written, ApiError> {
        let obj = shared.to_storage(obj.clone()).await?;
        let written = shared
            .home
            .update_decoded(storage, writes, target, &obj, write)
            .await
            .map_err(|e| shared.rebrand(self, e))?;
        Ok(Written {
            body: shared.read.answer(&written.body).await?,
            warnings: written.warnings,
        })
    }

    /// The delete of a shared object, through the home: a removed object is answered with a
    /// `Status` naming the served resource, a marked one in the served version.
    pub(super) async fn delete_shared(
        &self,
        shared: &Shared,
        storage: &dyn Storage,
        target: (&str, &str),
        options: &DeleteOptions,
        now: DateTime<Utc>,
        write: WriteOptions,
    ) -> Result<Deleted, ApiError> {
        let (namespace, name) = target;
        // Boxed: `delete` calls this for shared stores, so the future would contain itself.
        let home_delete = Box::pin(
            shared
                .home
                .delete(storage, namespace, name, options, now, write),
        );
        let deleted = home_delete.await.map_err(|e| shared.rebrand(self, e))?;
        let (removed, warnings) = (deleted.removed, deleted.warnings);
        let obj: Value = serde_json::from_slice(&deleted.body)
            .map_err(|e| ApiError::Internal(format!("stored answer cannot be read: {e}")))?;
        if obj.get("kind").and_then(Value::as_str) == Some("Status") {
            let uid = obj
                .pointer("/details/uid")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let body = self.deleted_status(name, uid);
            return Ok(Deleted {
                body,
                removed,
                warnings,
            });
        }
        let body = shared.read.encode(obj).await?;
        Ok(Deleted {
            body,
            removed,
            warnings,
        })
    }
}
