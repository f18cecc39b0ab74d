//! The conversion steps of a store whose served version shares another version's storage
//! (`events.k8s.io/v1` events stored as core `v1` events; issue 5 design §3.1).
//!
//! Such a store keys its objects by the storage home, so reads and selectors work on the
//! stored objects as they are; only the objects it answers are converted (and cached per
//! object version, [`ConvertedCache`]). Writes decode and check the body in the served
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
use super::converted::ConvertedCache;
use super::corrupt;
use super::persistence::Persistence;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::registry::DeleteOptions;
use crate::registry::Deleted;
use crate::registry::StoredJson;
use crate::registry::conversion::Conversion;
use crate::storage::Revision;
use crate::storage::Storage;

/// How a served version reads stored objects: the conversion, the served `apiVersion` and
/// `kind`, and the cache of converted encodings. Cheap to clone (watches hold one).
#[derive(Clone)]
pub(crate) struct ReadConversion {
    conversion: &'static dyn Conversion,
    flavor: Flavor,
    api_version: String,
    kind: String,
    cache: Arc<ConvertedCache>,
}

impl std::fmt::Debug for ReadConversion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadConversion")
            .field("api_version", &self.api_version)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// Sets `apiVersion` and `kind` (in place when present, so the field order is kept).
fn set_type(obj: &mut Value, api_version: &str, kind: &str) {
    if let Value::Object(m) = obj {
        m.insert("apiVersion".to_owned(), api_version.into());
        m.insert("kind".to_owned(), kind.into());
    }
}

impl ReadConversion {
    /// The stored version `stored` of `key` at `revision` in the served version, with its
    /// `resourceVersion`: converted and encoded once per replica.
    pub(crate) fn object(
        &self,
        key: &str,
        stored: &StoredJson,
        revision: Revision,
    ) -> Result<Bytes, ApiError> {
        self.cache
            .get_or_convert(key, revision, || self.convert(key, stored, revision))
    }

    /// The same, converted without the cache (a version sent at another revision than its
    /// own).
    pub(crate) fn convert(
        &self,
        key: &str,
        stored: &StoredJson,
        revision: Revision,
    ) -> Result<Bytes, ApiError> {
        let obj = serde_json::from_slice(&stored.with_resource_version(revision))
            .map_err(|e| corrupt(key, e))?;
        self.encode(obj).map(Bytes::from)
    }

    /// A storage-version object in the served version.
    pub(super) fn served(&self, obj: Value) -> Result<Value, ApiError> {
        let mut obj = self
            .conversion
            .to_served(obj, self.flavor)
            .map_err(|e| ApiError::Internal(format!("stored object cannot be converted: {e}")))?;
        set_type(&mut obj, &self.api_version, &self.kind);
        Ok(obj)
    }

    /// A storage-version object in the served version, as JSON.
    fn encode(&self, obj: Value) -> Result<Vec<u8>, ApiError> {
        let obj = self.served(obj)?;
        serde_json::to_vec(&obj).map_err(|e| ApiError::Internal(e.to_string()))
    }

    /// An answer of the home store (a storage-version object) in the served version.
    fn answer(&self, body: &[u8]) -> Result<Vec<u8>, ApiError> {
        let obj = serde_json::from_slice(body)
            .map_err(|e| ApiError::Internal(format!("stored answer cannot be read: {e}")))?;
        self.encode(obj)
    }
}

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
    fn to_storage(&self, mut obj: Value) -> Result<Value, ApiError> {
        if let Value::Object(m) = &mut obj {
            m.remove("apiVersion");
            m.remove("kind");
        }
        let converted = self
            .read
            .conversion
            .to_storage(obj, self.read.flavor)
            .map_err(|e| ApiError::BadRequest(e.to_string()))?;
        let home = self.home.resource();
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
        mut self,
        home: Store,
        conversion: &'static dyn Conversion,
        flavor: Flavor,
    ) -> Self {
        let read = ReadConversion {
            conversion,
            flavor,
            api_version: self.resource.api_version(),
            kind: self.resource.kind.clone(),
            cache: Arc::default(),
        };
        self.shared = Some(Shared {
            home: Box::new(home),
            read,
        });
        self
    }

    /// How watches read this store's objects: `None` for the storage version (stored bytes
    /// are spliced as they are).
    pub(crate) fn read_conversion(&self) -> Option<ReadConversion> {
        self.shared.as_ref().map(|s| s.read.clone())
    }

    /// The answer of a read: the stored bytes with `resourceVersion` spliced in, or for a
    /// served version that is not the storage version, the (cached) conversion.
    pub(super) fn answer(
        &self,
        key: &str,
        stored: &StoredJson,
        revision: Revision,
    ) -> Result<Vec<u8>, ApiError> {
        match &self.shared {
            None => Ok(stored.with_resource_version(revision)),
            Some(shared) => Ok(shared.read.object(key, stored, revision)?.to_vec()),
        }
    }

    /// Appends the answer of a listed object to `out` (see [`Self::answer`]).
    pub(super) fn write_item(
        &self,
        key: &str,
        stored: &StoredJson,
        revision: Revision,
        out: &mut Vec<u8>,
    ) -> Result<(), ApiError> {
        match &self.shared {
            None => stored.write_with_resource_version(revision, out),
            Some(shared) => out.extend_from_slice(&shared.read.object(key, stored, revision)?),
        }
        Ok(())
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
    ) -> Result<Vec<u8>, ApiError> {
        let obj = shared.to_storage(obj)?;
        let writes = Persistence::new(storage, write.dry_run);
        let body = shared
            .home
            .create_decoded(storage, &writes, namespace, obj, now, write)
            .await
            .map_err(|e| shared.rebrand(self, e))?;
        shared.read.answer(&body)
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
    ) -> Result<Vec<u8>, ApiError> {
        let obj = shared.to_storage(obj.clone())?;
        let body = shared
            .home
            .update_decoded(storage, writes, target, &obj, write)
            .await
            .map_err(|e| shared.rebrand(self, e))?;
        shared.read.answer(&body)
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
        let removed = deleted.removed;
        let obj: Value = serde_json::from_slice(&deleted.body)
            .map_err(|e| ApiError::Internal(format!("stored answer cannot be read: {e}")))?;
        if obj.get("kind").and_then(Value::as_str) == Some("Status") {
            let uid = obj
                .pointer("/details/uid")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let body = self.deleted_status(name, uid);
            return Ok(Deleted { body, removed });
        }
        let body = shared.read.encode(obj)?;
        Ok(Deleted { body, removed })
    }
}
