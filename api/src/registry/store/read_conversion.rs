//! How a served version reads stored objects ([`ReadConversion`]): converted from the
//! storage version in place (built-in versions sharing storage), or for custom resources
//! from whichever version each object was stored in, through a [`VersionConversion`] that
//! may call out (awaited, and batched for lists). Each converted object version is encoded
//! once per replica ([`ConvertedCache`]).

use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;

use super::Store;
use super::converted::ConvertedCache;
use super::corrupt;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::registry::StoredJson;
use crate::registry::conversion::Conversion;
use crate::registry::conversion::VersionConversion;
use crate::storage::Revision;

/// Where a served version's objects come from.
#[derive(Clone)]
pub(super) enum Converter {
    /// From the storage version, in place (built-in versions sharing storage).
    Builtin(&'static dyn Conversion),
    /// From whichever version each object was stored in (custom resources).
    Versions(Arc<dyn VersionConversion>),
}

/// How a served version reads stored objects: the conversion, the served `apiVersion` and
/// `kind`, and the cache of converted encodings. Cheap to clone (watches hold one).
#[derive(Clone)]
pub(crate) struct ReadConversion {
    pub(super) conversion: Converter,
    pub(super) flavor: Flavor,
    pub(super) api_version: String,
    pub(super) kind: String,
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
pub(super) fn set_type(obj: &mut Value, api_version: &str, kind: &str) {
    if let Value::Object(m) = obj {
        m.insert("apiVersion".to_owned(), api_version.into());
        m.insert("kind".to_owned(), kind.into());
    }
}

/// The `apiVersion` a stored object leads with (the store writes it first), read without
/// parsing the object; `None` when it does not lead.
fn leading_api_version(json: &[u8]) -> Option<&[u8]> {
    let rest = json.strip_prefix(b"{\"apiVersion\":\"")?;
    let end = rest.iter().position(|b| *b == b'"' || *b == b'\\')?;
    (rest.get(end) == Some(&b'"')).then(|| &rest[..end])
}

impl ReadConversion {
    pub(super) fn new(conversion: Converter, flavor: Flavor, served: &Store) -> Self {
        Self {
            conversion,
            flavor,
            api_version: served.resource.api_version(),
            kind: served.resource.kind.clone(),
            cache: Arc::default(),
        }
    }

    /// Whether converting may call out, so reads must convert through [`Self::objects`].
    pub(crate) fn calls_out(&self) -> bool {
        matches!(&self.conversion, Converter::Versions(v) if v.calls_out())
    }

    /// Whether `stored` is already in the served version (only custom resources keep
    /// objects in other versions than the storage version).
    fn in_version(&self, stored: &StoredJson) -> Result<bool, ApiError> {
        if matches!(self.conversion, Converter::Builtin(_)) {
            return Ok(false);
        }
        if let Some(version) = leading_api_version(&stored.json) {
            return Ok(version == self.api_version.as_bytes());
        }
        let obj = stored
            .to_value()
            .map_err(|e| ApiError::Internal(e.to_string()))?;
        Ok(obj.get("apiVersion").and_then(Value::as_str) == Some(&self.api_version))
    }

    /// The stored version `stored` of `key` at `revision` in the served version, with its
    /// `resourceVersion`: converted and encoded once per replica. A conversion that calls
    /// out answers only what [`Self::objects`] converted before.
    pub(crate) fn object(
        &self,
        key: &str,
        stored: &StoredJson,
        revision: Revision,
    ) -> Result<Bytes, ApiError> {
        if self.in_version(stored)? {
            return Ok(stored.with_resource_version(revision).into());
        }
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
        if self.in_version(stored)? {
            return Ok(stored.with_resource_version(revision).into());
        }
        let obj = serde_json::from_slice(&stored.with_resource_version(revision))
            .map_err(|e| corrupt(key, e))?;
        let obj = self.served_in_place(obj)?;
        serde_json::to_vec(&obj)
            .map(Bytes::from)
            .map_err(|e| ApiError::Internal(e.to_string()))
    }

    /// The stored versions `items` (key, object, revision) in the served version, as
    /// [`Self::object`] answers them; those that need a call out are converted together,
    /// in one call.
    pub(crate) async fn objects(
        &self,
        items: &[(&str, &StoredJson, Revision)],
    ) -> Result<Vec<Bytes>, ApiError> {
        let converted = self.listed(items, true).await?;
        Ok((items.iter().zip(converted))
            .map(|((_, stored, revision), converted)| {
                converted.unwrap_or_else(|| stored.with_resource_version(*revision).into())
            })
            .collect())
    }

    /// One stored version in the served version, kept for later reads if `keep` (as
    /// [`Self::object`]; else as [`Self::convert`]).
    pub(crate) async fn converted(
        &self,
        key: &str,
        stored: &StoredJson,
        revision: Revision,
        keep: bool,
    ) -> Result<Bytes, ApiError> {
        let converted = self.listed(&[(key, stored, revision)], keep).await?;
        Ok((converted.into_iter().next().flatten())
            .unwrap_or_else(|| stored.with_resource_version(revision).into()))
    }

    /// The conversions of `items` (kept for later reads if `keep`); `None` for an object
    /// already in the served version, which is served as stored.
    pub(crate) async fn listed(
        &self,
        items: &[(&str, &StoredJson, Revision)],
        keep: bool,
    ) -> Result<Vec<Option<Bytes>>, ApiError> {
        let mut answers = Vec::with_capacity(items.len());
        let mut missing = Vec::new();
        let mut objects = Vec::new();
        for (i, (key, stored, revision)) in items.iter().enumerate() {
            if self.in_version(stored)? {
                answers.push(None);
            } else if !self.calls_out() {
                answers.push(Some(match keep {
                    true => self.object(key, stored, *revision)?,
                    false => self.convert(key, stored, *revision)?,
                }));
            } else if let Some(cached) = self.cache.get(key, *revision).filter(|_| keep) {
                answers.push(Some(cached));
            } else {
                answers.push(None);
                missing.push(i);
                objects.push(
                    serde_json::from_slice(&stored.with_resource_version(*revision))
                        .map_err(|e| corrupt(key, e))?,
                );
            }
        }
        let Converter::Versions(versions) = &self.conversion else {
            return Ok(answers);
        };
        if objects.is_empty() {
            return Ok(answers);
        }
        let converted = versions.convert(objects, &self.api_version).await?;
        if converted.len() != missing.len() {
            return Err(ApiError::Internal("not every object was converted".into()));
        }
        for (i, mut obj) in missing.into_iter().zip(converted) {
            set_type(&mut obj, &self.api_version, &self.kind);
            let bytes = Bytes::from(
                serde_json::to_vec(&obj).map_err(|e| ApiError::Internal(e.to_string()))?,
            );
            if let (Some((key, _, revision)), Some(answer)) = (items.get(i), answers.get_mut(i)) {
                if keep {
                    self.cache.insert(key, *revision, bytes.clone());
                }
                *answer = Some(bytes);
            }
        }
        Ok(answers)
    }

    /// A stored object in the served version, converted without calling out.
    fn served_in_place(&self, obj: Value) -> Result<Value, ApiError> {
        let mut obj = match &self.conversion {
            Converter::Builtin(conversion) => {
                conversion.to_served(obj, self.flavor).map_err(|e| {
                    ApiError::Internal(format!("stored object cannot be converted: {e}"))
                })?
            }
            Converter::Versions(v) if !v.calls_out() => obj,
            Converter::Versions(_) => {
                return Err(ApiError::Internal(format!(
                    "{} objects are converted by their webhook",
                    self.kind
                )));
            }
        };
        set_type(&mut obj, &self.api_version, &self.kind);
        Ok(obj)
    }

    /// A stored object (or a home store's answer) in the served version.
    pub(crate) async fn served(&self, obj: Value) -> Result<Value, ApiError> {
        match &self.conversion {
            Converter::Versions(versions) if versions.calls_out() => {
                let mut obj = (versions.convert(vec![obj], &self.api_version).await?)
                    .pop()
                    .ok_or_else(|| ApiError::Internal("no object was converted".into()))?;
                set_type(&mut obj, &self.api_version, &self.kind);
                Ok(obj)
            }
            _ => self.served_in_place(obj),
        }
    }

    /// `obj`, in the served version, in the version of `home`, the storage version (a
    /// built-in conversion's way back; a custom resource's conversion to it).
    pub(crate) async fn stored(
        &self,
        obj: Value,
        home: &crate::registry::ResourceType,
    ) -> Result<Value, ApiError> {
        let api_version = home.api_version();
        let mut obj = match &self.conversion {
            Converter::Builtin(conversion) => {
                let mut obj = obj;
                if let Value::Object(m) = &mut obj {
                    m.remove("apiVersion");
                    m.remove("kind");
                }
                conversion
                    .to_storage(obj, self.flavor)
                    .map_err(|e| ApiError::BadRequest(e.to_string()))?
            }
            Converter::Versions(versions) => (versions.convert(vec![obj], &api_version).await?)
                .pop()
                .ok_or_else(|| ApiError::Internal("no object was converted".into()))?,
        };
        set_type(&mut obj, &api_version, &home.kind);
        Ok(obj)
    }

    /// A stored object in the served version, as JSON.
    pub(super) async fn encode(&self, obj: Value) -> Result<Vec<u8>, ApiError> {
        let obj = self.served(obj).await?;
        serde_json::to_vec(&obj).map_err(|e| ApiError::Internal(e.to_string()))
    }

    /// An answer of the home store (a storage-version object) in the served version.
    pub(super) async fn answer(&self, body: &[u8]) -> Result<Vec<u8>, ApiError> {
        let obj = serde_json::from_slice(body)
            .map_err(|e| ApiError::Internal(format!("stored answer cannot be read: {e}")))?;
        self.encode(obj).await
    }

    /// `obj`, an object a write read from storage, in the served version (custom resources
    /// keep objects in the version they were written in); `None` when it already is.
    pub(super) async fn current(&self, obj: &Value) -> Result<Option<Value>, ApiError> {
        if obj.get("apiVersion").and_then(Value::as_str) == Some(&self.api_version) {
            return Ok(None);
        }
        self.served(obj.clone()).await.map(Some)
    }
}
