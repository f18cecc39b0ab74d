//! The `managedFields` of the store's writes (R-RES-029, R-RES-042..047, R-RES-205): every
//! create, update and patch made for a request records its manager's Update entry through
//! the field manager (`patch::apply`), and an object too large to store with its
//! `managedFields` is stored without them, as kube-apiserver retries such a write.

use bytes::Bytes;
use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;

use super::Store;
use super::WriteOptions;
use super::encode;
use super::rfc3339;
use crate::error::ApiError;
use crate::patch::Shape;
use crate::patch::apply::FieldManager;
use crate::patch::apply::Manager;

impl Store {
    /// Runs `work` with the field manager of this kind at `now`.
    pub(super) fn with_field_manager<T>(
        &self,
        now: DateTime<Utc>,
        work: impl FnOnce(&FieldManager<'_>) -> Result<T, ApiError>,
    ) -> Result<T, ApiError> {
        let schema = self.compiled_schema()?;
        let now = rfc3339(now);
        let manager = FieldManager {
            shape: self.apply_shape(schema.as_deref()),
            flavor: self.builtin.unwrap_or_default(),
            now: &now,
        };
        work(&manager)
    }

    /// Where server-side apply merges into this kind's objects: the structural schema of a
    /// custom kind's version, else `schema`, the store's compiled body schema.
    pub(super) fn apply_shape<'s>(
        &'s self,
        schema: Option<&'s crate::schema::Schema>,
    ) -> Shape<'s> {
        match self.strategy.apply_schema() {
            Some(structural) => Shape::structural(structural),
            None => schema.map_or(Shape::untyped(), Shape::of),
        }
    }

    /// Records the Update entry of `write`'s manager on `new`, the object about to be stored
    /// over `live` (`None`: a create) through `subresource`. Writes the server makes outside
    /// any request record none.
    pub(super) fn record_update(
        &self,
        live: Option<&Value>,
        new: &mut Value,
        write: &WriteOptions,
        subresource: &str,
    ) -> Result<(), ApiError> {
        let Some(manager) = &write.manager else {
            return Ok(());
        };
        let api_version = self.resource.api_version();
        let identity = Manager {
            name: &manager.name,
            api_version: &api_version,
            subresource,
        };
        self.with_field_manager(manager.now, |fm| fm.update(live, new, identity))
    }

    /// `obj`, to be written at `key`, in its stored form; when that is larger than a stored
    /// object may be, `obj` loses its `managedFields` and is encoded again (kube-apiserver
    /// retries a write too large for storage without them). Still too large, the write's own
    /// 413 follows.
    pub(super) fn encode_fitting(&self, key: &str, obj: &mut Value) -> Result<Bytes, ApiError> {
        let value = encode(key, obj)?;
        if value.len() <= self.max_object_bytes {
            return Ok(value);
        }
        let stripped = obj
            .get_mut("metadata")
            .and_then(Value::as_object_mut)
            .and_then(|meta| meta.remove("managedFields"));
        match stripped {
            Some(_) => encode(key, obj),
            None => Ok(value),
        }
    }
}
