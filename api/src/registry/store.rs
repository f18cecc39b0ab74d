//! The one generic store: get, list, create, update and delete for any resource type, with
//! the fixed order of steps (decode -> defaults -> prepare -> validate -> authorize the
//! object -> canonicalize -> persist) and Kubernetes' metadata rules (spec 000 "Resources
//! and their fields").
//!
//! [`Store`] owns the order of the steps; each step lives in its own file under `store/`, as
//! in Kubernetes' generic registry: `list` (paging), `decode` (request bodies), `metadata`
//! (metadata rules), `namespace` (namespace lifecycle), `create`, `update`, `patch`,
//! `guaranteed_update`, `delete`, `authorize_write` (what the object grants, weighed against
//! its writer), `owner_references` (the permissions owner references need), `allocate`
//! (Service IPs and ports), `convert` (versions sharing storage) and `read_conversion` (how
//! they read), `persistence` (the final
//! writes), `apply` (server-side apply), `managed` (the `managedFields` every request's write
//! records), `admit` (the admission chain) and `unsafe_delete` (the forced removal of an
//! object that cannot be read).
//!
//! Reads never parse stored objects: they splice `resourceVersion` into the stored bytes
//! ([`StoredJson`]). Writes parse the current object, because they must compare against it.
//! Time is passed in by the caller (`now`); uids and generated names are drawn from the
//! store's [`RandomSource`].
//!
//! A dry run ([`WriteOptions::dry_run`]) takes every step and hands the final writes to
//! `Persistence`, which checks them against storage and drops them.

mod admit;
mod allocate;
mod apply;
mod authorize_write;
mod convert;
mod converted;
mod create;
mod decode;
mod delete;
mod guaranteed_update;
mod list;
mod list_body;
mod list_protobuf;
mod managed;
mod metadata;
mod namespace;
mod patch;
mod persistence;
mod read_conversion;
mod unsafe_delete;
mod update;

use bytes::Bytes;
use chrono::DateTime;
use chrono::SecondsFormat;
use chrono::Utc;
use serde_json::Value;

pub use self::admit::SubresourceWrite;
pub use self::apply::Applied;
pub use self::authorize_write::WriteAuthorization;
use self::convert::Shared;
pub use self::list_body::ListBody;
pub use self::list_protobuf::ProtobufListBody;
pub(crate) use self::metadata::generated_name;
pub(crate) use self::metadata::keep_fields;
use self::persistence::Persistence;
pub(crate) use self::read_conversion::ReadConversion;
use super::CorruptObjects;
use super::DeleteOptions;
use super::ResourceType;
use super::StoredJson;
use super::Strategy;
use super::allocator::ServiceAllocator;
use crate::config::DEFAULT_MAX_OBJECT_BYTES;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::group::GroupResource;
use crate::random::RandomSource;
use crate::schema::FieldValidation;
use crate::schema::Format;
use crate::schema::SchemaFn;
use crate::storage::ReadConsistency;
use crate::storage::Storage;
use crate::storage::StorageError;
use crate::storage::StoredObject;

/// Attempts of an unconditional write (update, patch, apply, delete) that races other
/// writers. Each lost race re-reads and tries again at once, and every round lets one of the
/// racing writers through, so N writers of one object need up to N attempts; Kubernetes
/// retries such writes without a limit. This budget bounds the work of one request and lets
/// 128 writers of one object through at once (the 129th answers 409).
pub(crate) const RETRY_ATTEMPTS: usize = 128;

/// Who writes, for the write's `managedFields` entry (R-RES-029, R-RES-042, R-RES-045).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteManager {
    /// The field manager: `fieldManager`, else the User-Agent's leading token (R-RES-212).
    pub name: String,
    /// The time of the write, the entry's `time`.
    pub now: DateTime<Utc>,
}

/// What a write request asks of the store beyond its body (the store's part of
/// `CreateOptions`, `UpdateOptions`, `PatchOptions` and `DeleteOptions`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// `dryRun=All` (R-RES-192..194): run every step but persist nothing, and answer what the
    /// write would have answered: no revision is consumed and watchers see nothing.
    pub dry_run: bool,
    /// `fieldValidation` (R-RES-185..187): how unknown and duplicate fields in the body are
    /// answered. Deletes carry the default; they have no object body.
    pub field_validation: FieldValidation,
    /// The body's media type (JSON or YAML).
    pub format: Format,
    /// The manager of a request's write, whose Update or Apply entry the write records;
    /// `None` for the writes the server makes outside any request, which record none.
    pub manager: Option<WriteManager>,
    /// An apply's `force=true` (R-RES-204, R-RES-206): take the conflicting fields over.
    pub force: bool,
    /// The request's admission already ran on a subresource's own object (a Scale, an
    /// Eviction): this write of the parent is not admitted again, as in Kubernetes.
    pub admitted: bool,
}

/// What a create or update answers: the object, and the warnings for the response's
/// `Warning` headers (unknown and duplicate fields under `fieldValidation=Warn`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The JSON body.
    pub body: Vec<u8>,
    /// One text per warning, in body order.
    pub warnings: Vec<String>,
}

/// The generic store of one resource type.
pub struct Store {
    resource: ResourceType,
    strategy: Box<dyn Strategy>,
    /// The kind's schema, which type-checks bodies and finds unknown, duplicate and unset
    /// required fields; without one (test kinds) bodies are only parsed.
    schema: Option<BodySchema>,
    /// The flavor of a built-in kind, whose finalizers follow core's naming rule; custom
    /// kinds (none) follow only the generic one.
    builtin: Option<Flavor>,
    /// For a served version that is not its storage version: the storage version's store
    /// and the conversion ([`Store::stored_in`]).
    shared: Option<Shared>,
    /// For the storage version of a custom resource: how objects stored in its other
    /// versions are read ([`Store::reading_versions`]).
    versions: Option<ReadConversion>,
    /// Services' cluster IP and node port allocation (store/allocate.rs); `None` elsewhere.
    allocator: Option<ServiceAllocator>,
    /// The most bytes an object's stored form may have (`--max-object-bytes`); a write of a
    /// larger one is a 413 and stores nothing.
    max_object_bytes: usize,
    /// Draws uids and `generateName` suffixes.
    random: RandomSource,
    /// Checks the stored object against the requester's permissions (store/authorize_write.rs).
    write_authorization: Option<std::sync::Arc<dyn WriteAuthorization>>,
    /// For a custom kind: whether its definition is being deleted (creates are refused).
    custom: Option<CustomKind>,
    /// The server's admission chain (store/admit.rs); `None` when no plugin runs.
    admission: Option<std::sync::Arc<crate::admission::Admission>>,
    /// Whether creates check their namespace is open (store/namespace.rs): on unless the
    /// chain set lacks `NamespaceLifecycle`.
    namespace_lifecycle: bool,
}

/// Where a store's body schema comes from.
#[derive(Clone)]
enum BodySchema {
    /// A built-in kind's, compiled when first asked for.
    Builtin(SchemaFn),
    /// A custom kind's, compiled with its definition.
    Compiled(std::sync::Arc<crate::schema::Schema>),
}

/// What a store of a custom kind knows of its definition.
#[derive(Debug, Clone)]
pub struct CustomKind {
    /// The definition is being deleted: its objects are going, no new one may come.
    pub terminating: bool,
    /// Where its Scale reads and writes, when the version serves `scale`.
    pub scale: Option<super::ScalePaths>,
    /// The version's `openAPIV3Schema`, as its definition gives it.
    pub schema: std::sync::Arc<Value>,
    /// The warning every request to a deprecated version answers with.
    pub deprecation: Option<String>,
    /// The version's printer columns, for its Tables.
    pub columns: std::sync::Arc<crate::codec::CustomColumns>,
}

fn rfc3339(now: DateTime<Utc>) -> String {
    now.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// The typed error of the stored object at `key` that does not decode (see
/// [`CorruptObjects`]; the forced delete recognises it).
fn corrupt(key: &str, e: impl std::fmt::Display) -> ApiError {
    ApiError::Corrupt(CorruptObjects::one(key, e))
}

/// `obj`, to be written at `key`, in its stored form.
fn encode(key: &str, obj: &Value) -> Result<Bytes, ApiError> {
    StoredJson::to_stored(obj)
        .map_err(|e| ApiError::Internal(format!("object {key} cannot be stored: {e}")))
}

impl Store {
    /// A store for `resource` with `strategy`.
    pub fn new(resource: ResourceType, strategy: Box<dyn Strategy>) -> Self {
        Self {
            resource,
            strategy,
            schema: None,
            builtin: None,
            shared: None,
            versions: None,
            allocator: None,
            max_object_bytes: DEFAULT_MAX_OBJECT_BYTES,
            random: RandomSource::from_os_entropy(),
            write_authorization: None,
            custom: None,
            admission: None,
            namespace_lifecycle: true,
        }
    }

    /// The store of a custom kind (its definition says whether it is terminating).
    pub fn custom_kind(mut self, kind: CustomKind) -> Self {
        self.custom = Some(kind);
        self
    }

    /// Whether the store serves a custom kind, and what its definition says.
    pub fn custom(&self) -> Option<&CustomKind> {
        self.custom.as_ref()
    }

    /// The store, drawing uids and generated names (also those of the objects its writes
    /// create alongside, such as IPAddress records) from `random`.
    pub fn with_random(mut self, random: &RandomSource) -> Self {
        self.set_random(random);
        self
    }

    fn set_random(&mut self, random: &RandomSource) {
        self.random = random.clone();
        if let Some(shared) = &mut self.shared {
            shared.home.set_random(random);
        }
        if let Some(allocator) = &mut self.allocator {
            allocator.set_random(random);
        }
    }

    /// The store, refusing writes of objects whose stored form has more than `limit` bytes
    /// (and so does the store of the version it shares storage with).
    pub fn with_max_object_bytes(mut self, limit: usize) -> Self {
        self.max_object_bytes = limit;
        if let Some(shared) = &mut self.shared {
            shared.set_max_object_bytes(limit);
        }
        self
    }

    /// The store of a built-in kind served in `flavor` (core's finalizer rule applies).
    pub fn builtin_in(mut self, flavor: Flavor) -> Self {
        self.builtin = Some(flavor);
        self
    }

    /// The store, checking bodies against the schema `schema` produces.
    pub fn with_schema(mut self, schema: SchemaFn) -> Self {
        self.schema = Some(BodySchema::Builtin(schema));
        self
    }

    /// The store, checking bodies against `schema` (a custom kind's, compiled already).
    pub fn with_compiled_schema(mut self, schema: std::sync::Arc<crate::schema::Schema>) -> Self {
        self.schema = Some(BodySchema::Compiled(schema));
        self
    }

    /// The warnings a delete with `options` answers with (the kind's).
    pub fn delete_warnings(&self, options: &DeleteOptions) -> Vec<String> {
        self.strategy.warnings_on_delete(options)
    }

    /// The resource type served.
    pub fn resource(&self) -> &ResourceType {
        &self.resource
    }

    fn group_resource(&self) -> GroupResource {
        self.resource.group_resource()
    }

    fn not_found(&self, name: &str) -> ApiError {
        ApiError::NotFound {
            resource: self.group_resource(),
            name: name.to_owned(),
        }
    }

    fn conflict(&self, name: &str, reason: impl Into<String>) -> ApiError {
        ApiError::Conflict {
            resource: self.group_resource(),
            name: name.to_owned(),
            reason: reason.into(),
        }
    }

    fn storage_error(&self, e: StorageError, name: &str) -> ApiError {
        ApiError::from_storage(e, &self.group_resource(), name)
    }

    /// The object `name` (in `namespace`), served at `consistency`, as JSON bytes with its
    /// `resourceVersion`. 404 when absent.
    pub async fn get(
        &self,
        storage: &dyn Storage,
        namespace: &str,
        name: &str,
        consistency: ReadConsistency,
    ) -> Result<Vec<u8>, ApiError> {
        let key = self.resource.object_key(namespace, name);
        let found = storage
            .get(&key, consistency)
            .await
            .map_err(|e| self.storage_error(e, name))?
            .ok_or_else(|| self.not_found(name))?;
        let stored = StoredJson::from_stored(found.value).map_err(|e| corrupt(&key, e))?;
        self.answer(&key, &stored, found.mod_revision).await
    }

    /// The current version of the object `name` at `key`, as the write that compares against
    /// it reads it ([`Persistence::read`]): the stored object, its envelope and its parsed
    /// JSON. 404 when absent.
    async fn read_current(
        &self,
        writes: &Persistence<'_>,
        key: &str,
        name: &str,
    ) -> Result<(StoredObject, StoredJson, Value), ApiError> {
        let current = writes
            .read(key)
            .await
            .map_err(|e| self.storage_error(e, name))?
            .ok_or_else(|| self.not_found(name))?;
        let stored = StoredJson::from_stored(current.value.clone()).map_err(|e| corrupt(key, e))?;
        let obj = stored.to_value().map_err(|e| corrupt(key, e))?;
        let (stored, obj) = self.current_in_version(key, stored, obj).await?;
        Ok((current, stored, obj))
    }

    fn respond(&self, key: &str, stored: StoredObject) -> Result<Vec<u8>, ApiError> {
        let json = StoredJson::from_stored(stored.value).map_err(|e| corrupt(key, e))?;
        Ok(json.with_resource_version(stored.mod_revision))
    }

    /// The object a dry-run create would have stored: no write, so no `resourceVersion`.
    fn respond_unstored(&self, key: &str, stored: StoredObject) -> Result<Vec<u8>, ApiError> {
        let json = StoredJson::from_stored(stored.value).map_err(|e| corrupt(key, e))?;
        Ok(json.json.to_vec())
    }
}
