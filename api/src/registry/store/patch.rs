//! The patch step of the generic store (R-RES-090, R-RES-114..117, R-RES-198, R-RES-199), in
//! the order of Kubernetes' patcher: read the current object, apply the patch
//! to its JSON (in the served version's form), then the normal update path (decode and type check, defaults, prepare,
//! validate, compare-and-swap). The patched object carries the resourceVersion it was built
//! from, so a write that lost a race is a conflict; a patch that did not set a
//! resourceVersion itself is then applied again to the new current object, as upstream's
//! guaranteed update retries.

use serde_json::Value;

use super::RETRY_ATTEMPTS;
use super::Store;
use super::WriteOptions;
use super::Written;
use super::metadata::meta_mut;
use super::metadata::meta_str;
use super::persistence::Persistence;
use crate::error::ApiError;
use crate::group::GroupKind;
use crate::patch;
use crate::patch::PatchType;
use crate::patch::Shape;
use crate::schema::FieldValidation;
use crate::storage::Storage;
use crate::validation::FieldError;

impl Store {
    /// Patches the object `name` (or its `subresource`, which takes only its part of the
    /// patched object, as an update does) with `body`, a patch of kind `kind`. 404 when
    /// absent; 409 when the patch sets a `metadata.resourceVersion` other than the current
    /// one. Unknown fields of the patched object are answered as `write.field_validation`
    /// asks (under `Strict`, Kubernetes' 422 on the `patch` field); a dry run answers the
    /// object it would store (R-RES-192, R-RES-193).
    pub async fn patch(
        &self,
        storage: &dyn Storage,
        target: (&str, &str, &str),
        kind: PatchType,
        body: &[u8],
        write: WriteOptions,
    ) -> Result<Written, ApiError> {
        let schema = self.compiled_schema()?;
        let shape = schema.as_deref().map_or(Shape::untyped(), Shape::of);
        let patch = (kind, body, shape);
        let mut writes = Persistence::optimistic(storage, write.dry_run);
        loop {
            let answer = self
                .patch_once(storage, &writes, target, patch, &write)
                .await;
            match writes.again() {
                Some(quorum) => writes = quorum,
                None => return answer,
            }
        }
    }

    /// One patch, its object read through `writes`; `patch` is the patch's kind, body, and
    /// the shape of the served version's objects.
    async fn patch_once(
        &self,
        storage: &dyn Storage,
        writes: &Persistence<'_>,
        target: (&str, &str, &str),
        patch: (PatchType, &[u8], Shape<'_>),
        write: &WriteOptions,
    ) -> Result<Written, ApiError> {
        let (namespace, name, _) = target;
        let (kind, body, shape) = patch;
        let key = self.resource.object_key(namespace, name);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (current, _, stored) = self.read_current(writes, &key, name).await?;
            // A version that shares another's storage patches its own form of the object.
            let mut obj = match &self.shared {
                Some(shared) => shared.read.served(stored).await?,
                None => stored,
            };
            let revision = current.mod_revision.to_string();
            meta_mut(&mut obj)?.insert("resourceVersion".to_owned(), revision.clone().into());
            let patched = patch::apply(kind, obj, body, shape)?;
            let own_revision = meta_str(&patched, "resourceVersion") == revision;
            let (decoded, warnings) = self.decode_patched(&patched, write.field_validation)?;
            let updated = match &self.shared {
                Some(shared) => {
                    self.update_shared(shared, storage, writes, target, &decoded, write)
                        .await
                }
                None => {
                    self.update_decoded(storage, writes, target, &decoded, write)
                        .await
                }
            };
            match updated {
                Ok(written) => {
                    let mut warnings = warnings;
                    warnings.extend(written.warnings);
                    let body = written.body;
                    return Ok(Written { body, warnings });
                }
                Err(ApiError::Conflict { .. }) if own_revision && attempt < RETRY_ATTEMPTS => {
                    continue;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Decodes a patched object as a request body is decoded. Kubernetes answers a patched
    /// object that does not decode, or has unknown fields under `Strict`, with a 422 on the
    /// field `patch` holding the patched JSON.
    pub(super) fn decode_patched(
        &self,
        patched: &Value,
        level: FieldValidation,
    ) -> Result<(Value, Vec<String>), ApiError> {
        let json = patched.to_string();
        let invalid = |detail: String| ApiError::Invalid {
            kind: GroupKind::default(),
            name: String::new(),
            causes: vec![FieldError::invalid("patch", json.clone(), detail)],
        };
        let warn = WriteOptions {
            field_validation: FieldValidation::Warn,
            ..WriteOptions::default()
        };
        let (obj, found) = match self.decode_body(json.as_bytes(), &warn) {
            Ok(decoded) => decoded,
            Err(ApiError::BadRequest(detail)) => return Err(invalid(detail)),
            Err(e) => return Err(e),
        };
        match level {
            FieldValidation::Ignore => Ok((obj, Vec::new())),
            FieldValidation::Warn => Ok((obj, found)),
            FieldValidation::Strict if found.is_empty() => Ok((obj, found)),
            FieldValidation::Strict => Err(invalid(format!(
                "strict decoding error: {}",
                found.join(", ")
            ))),
        }
    }
}
