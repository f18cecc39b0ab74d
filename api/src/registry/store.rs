//! The one generic store: get, list, create, update and delete for any resource type, with
//! the fixed order of steps (decode -> defaults -> prepare -> validate -> canonicalize ->
//! persist) and Kubernetes' metadata rules (spec 000 "Resources and their fields").
//!
//! Reads never parse stored objects: they splice `resourceVersion` into the stored bytes
//! ([`StoredJson`]). Writes parse the current object, because they must compare against it.
//! Time is passed in by the caller (`now`); uids and generated names are drawn from the
//! store's [`RandomSource`].
//!
//! A dry run ([`WriteOptions::dry_run`]) takes every step and hands the final writes to
//! [`Persistence`], which checks them against storage and drops them.

mod allocate;
mod convert;
mod converted;
mod guaranteed_update;
mod patch;
mod persistence;

use std::sync::Arc;

use bytes::Bytes;
use chrono::DateTime;
use chrono::SecondsFormat;
use chrono::Utc;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;

pub(crate) use self::convert::ReadConversion;
use self::convert::Shared;
use self::persistence::Persistence;
use super::ResourceType;
use super::StoredJson;
use super::Strategy;
use super::allocator::ServiceAllocator;
use super::builtin::namespace_type;
use super::strategy::DeleteAction;
use crate::config::DEFAULT_MAX_OBJECT_BYTES;
use crate::error::ApiError;
use crate::error::GroupResource;
use crate::error::OPTIMISTIC_LOCK_MESSAGE;
use crate::error::excerpt;
use crate::flavor::Flavor;
use crate::random::RandomSource;
use crate::request::ContinueToken;
use crate::request::ListOptions;
use crate::request::ListRead;
use crate::request::Selectors;
use crate::schema;
use crate::schema::FieldValidation;
use crate::schema::Format;
use crate::schema::SchemaFn;
use crate::storage::ReadConsistency;
use crate::storage::Revision;
use crate::storage::Storage;
use crate::storage::StorageError;
use crate::storage::StoredObject;
use crate::validation::FieldError;

/// Characters of generated name suffixes (Kubernetes' `utilrand.String`: no vowels, no
/// look-alikes, so generated names never spell words).
const SUFFIX_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
/// Length of a generated name suffix.
const SUFFIX_LEN: usize = 5;
/// Longest `generateName` prefix kept, so prefix + suffix fits a DNS label.
const MAX_PREFIX_LEN: usize = 63 - SUFFIX_LEN;
/// Attempts of a create whose generated name is taken (Kubernetes retries generated names).
const GENERATE_NAME_ATTEMPTS: usize = 8;
/// Attempts of an unconditional update or delete that races another writer.
const RETRY_ATTEMPTS: usize = 5;
/// The most objects a selective list reads from storage at once (Kubernetes' etcd store
/// doubles its reads up to this many).
const MAX_CHUNK: usize = 10_000;

/// A listed object: key, stored form, revision of its last change.
type Listed = (String, StoredJson, Revision);

/// One page of a list, ready to be written.
struct Page {
    /// The selected objects, in key order.
    items: Vec<Listed>,
    /// The revision the list was served at.
    revision: Revision,
    /// The token of the next page, when keys remain.
    next: Option<String>,
    /// How many objects remain after this page, when known (no selectors).
    remaining: Option<u64>,
}

/// A delete's preconditions (`DeleteOptions.preconditions`): each set value must equal the
/// stored object's, or the delete is a 409 Conflict (R-RES-055).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preconditions {
    /// The uid the object must have.
    pub uid: Option<String>,
    /// The resourceVersion the object must be at.
    pub resource_version: Option<String>,
}

/// What a write request asks of the store beyond its body (the store's part of
/// `CreateOptions`, `UpdateOptions` and `DeleteOptions`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// `dryRun=All` (R-RES-192..194): run every step but persist nothing, and answer what the
    /// write would have answered: no revision is consumed and watchers see nothing.
    pub dry_run: bool,
    /// `fieldValidation` (R-RES-185..187): how unknown and duplicate fields in the body are
    /// answered. Deletes carry the default; they have no object body.
    pub field_validation: FieldValidation,
    /// The body's media type (JSON or YAML).
    pub format: Format,
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
    schema: Option<SchemaFn>,
    /// The flavor of a built-in kind, whose finalizers follow core's naming rule; custom
    /// kinds (none) follow only the generic one.
    builtin: Option<Flavor>,
    /// For a served version that is not its storage version: the storage version's store
    /// and the conversion ([`Store::stored_in`]).
    shared: Option<Shared>,
    /// Services' cluster IP and node port allocation (store/allocate.rs); `None` elsewhere.
    allocator: Option<ServiceAllocator>,
    /// The most bytes an object's stored form may have (`--max-object-bytes`); a write of a
    /// larger one is a 413 and stores nothing.
    max_object_bytes: usize,
    /// Draws uids and `generateName` suffixes.
    random: RandomSource,
}

fn rfc3339(now: DateTime<Utc>) -> String {
    now.to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn meta_str<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn meta_mut(obj: &mut Value) -> Result<&mut Map<String, Value>, ApiError> {
    obj.get_mut("metadata")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| ApiError::Internal("object has no metadata".into()))
}

fn generated_name(prefix: &str, random: &RandomSource) -> String {
    let cut = prefix
        .char_indices()
        .nth(MAX_PREFIX_LEN)
        .map_or(prefix.len(), |(i, _)| i);
    let mut name = prefix[..cut].to_owned();
    for _ in 0..SUFFIX_LEN {
        let i = random.index(SUFFIX_ALPHABET.len());
        name.push(char::from(SUFFIX_ALPHABET[i]));
    }
    name
}

/// The object without `metadata` and `status`: what a generation counts changes of.
fn spec_part(obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Value::Object(m) = &mut v {
        m.remove("metadata");
        m.remove("status");
    }
    v
}

/// Sets `obj`'s `metadata.generation` to one more than `old`'s when its spec part changed
/// (an update of a kind that tracks generations; an unchanged spec keeps the generation).
fn bump_generation(obj: &mut Value, old: &Value) -> Result<(), ApiError> {
    if spec_part(obj) == spec_part(old) {
        return Ok(());
    }
    let next = old
        .pointer("/metadata/generation")
        .and_then(Value::as_i64)
        .unwrap_or(0)
        + 1;
    meta_mut(obj)?.insert("generation".to_owned(), next.into());
    Ok(())
}

/// Sets `fields` of `obj` to their values in `old` (absent in `old`: removed).
pub(crate) fn keep_fields(obj: &mut Value, old: &Value, fields: &[&str]) {
    let Value::Object(map) = obj else { return };
    for field in fields {
        match old.get(*field) {
            Some(v) => {
                map.insert((*field).to_owned(), v.clone());
            }
            None => {
                map.remove(*field);
            }
        }
    }
}

fn corrupt(key: &str, e: impl std::fmt::Display) -> ApiError {
    ApiError::Internal(format!("stored object {key} cannot be read: {e}"))
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
            allocator: None,
            max_object_bytes: DEFAULT_MAX_OBJECT_BYTES,
            random: RandomSource::from_os_entropy(),
        }
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
        self.schema = Some(schema);
        self
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
        self.answer(&key, &stored, found.mod_revision)
    }

    /// `selectors` for this kind: 400 for a field its field selectors cannot name.
    pub fn selectors(&self, selectors: Selectors) -> Result<Selectors, ApiError> {
        selectors.for_kind(self.strategy.field_labels())
    }

    /// A failed list read: a compacted revision is Kubernetes' 410 for lists, or for a
    /// continued list (`token_key`: where its token continued) the 410 that offers a token
    /// continuing after the same key at the newest revision.
    fn list_error(&self, e: StorageError, prefix: &str, token_key: Option<&str>) -> ApiError {
        match (e, token_key) {
            (StorageError::Compacted { .. }, Some(key)) => ApiError::ContinueExpired {
                fresh_continue: ContinueToken::encode(key, prefix, None),
            },
            (StorageError::Compacted { .. }, None) => ApiError::ListExpired,
            (e, _) => self.storage_error(e, ""),
        }
    }

    /// `item` if `selectors` select it; without selectors nothing is parsed.
    fn selected(
        &self,
        item: StoredObject,
        selectors: &Selectors,
    ) -> Result<Option<Listed>, ApiError> {
        let stored = StoredJson::from_stored(item.value).map_err(|e| corrupt(&item.key, e))?;
        if !selectors.is_empty() {
            let obj = stored.to_value().map_err(|e| corrupt(&item.key, e))?;
            if !selectors.matches(&obj) {
                return Ok(None);
            }
        }
        Ok(Some((item.key, stored, item.mod_revision)))
    }

    /// One page of the objects under `prefix` that `selectors` select, read as `read` says,
    /// at most `limit` of them (R-RES-182). Storage is read in chunks until the page is full
    /// or the collection ends; every chunk after the first is read Exact at the revision the
    /// first was served at, so the page is one snapshot. When keys remain after the last one
    /// examined, the page carries the token continuing after it at that revision (R-RES-167).
    async fn select(
        &self,
        storage: &dyn Storage,
        prefix: &str,
        selectors: &Selectors,
        read: ListRead,
        limit: Option<usize>,
    ) -> Result<Page, ApiError> {
        let token_key = read.after_key.clone();
        let mut consistency = read.consistency;
        let mut after = read.after_key;
        let mut chunk = limit.unwrap_or(0);
        let mut items = Vec::new();
        loop {
            let page = storage
                .list(prefix, after.as_deref(), chunk, consistency)
                .await
                .map_err(|e| self.list_error(e, prefix, token_key.as_deref()))?;
            consistency = ReadConsistency::Exact(page.revision);
            let mut unexamined = 0;
            let mut chunk_items = page.items.into_iter();
            while let Some(item) = chunk_items.next() {
                if limit.is_some_and(|n| items.len() >= n) {
                    unexamined = 1 + chunk_items.len() as u64;
                    break;
                }
                after = Some(item.key.clone());
                items.extend(self.selected(item, selectors)?);
            }
            let remaining = page.remaining + unexamined;
            if remaining == 0 || limit.is_some_and(|n| items.len() >= n) {
                let next = after
                    .filter(|_| remaining > 0)
                    .map(|key| ContinueToken::encode(&key, prefix, Some(page.revision)));
                // Kubernetes counts what remains only when nothing is filtered out.
                let remaining = (next.is_some() && selectors.is_empty()).then_some(remaining);
                return Ok(Page {
                    items,
                    revision: page.revision,
                    next,
                    remaining,
                });
            }
            // Selectors dropped items: read on, in growing chunks as Kubernetes' etcd store.
            chunk = chunk.saturating_mul(2).min(MAX_CHUNK).max(chunk);
        }
    }

    /// A `<Kind>List` of `page`, assembled from the stored bytes: `metadata.resourceVersion`
    /// is the revision served (R-RES-033); `continue` and `remainingItemCount` are present
    /// only when more items remain (R-RES-034..036).
    fn list_body(&self, page: &Page) -> Result<Vec<u8>, ApiError> {
        let size: usize = page.items.iter().map(|(_, s, _)| s.json.len() + 32).sum();
        let mut out = Vec::with_capacity(size + 128);
        let mut metadata = Map::new();
        metadata.insert(
            "resourceVersion".to_owned(),
            page.revision.to_string().into(),
        );
        if let Some(next) = &page.next {
            metadata.insert("continue".to_owned(), next.clone().into());
        }
        if let Some(remaining) = page.remaining {
            metadata.insert("remainingItemCount".to_owned(), remaining.into());
        }
        let head = json!({
            "kind": self.resource.list_kind,
            "apiVersion": self.resource.api_version(),
            "metadata": metadata,
        })
        .to_string();
        // `head` is `{...}`: reopen it to append the items.
        out.extend_from_slice(&head.as_bytes()[..head.len() - 1]);
        out.extend_from_slice(b",\"items\":[");
        for (i, (key, stored, item_revision)) in page.items.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            self.write_item(key, stored, *item_revision, &mut out)?;
        }
        out.extend_from_slice(b"]}");
        Ok(out)
    }

    /// The `<Kind>List` of the objects in `namespace` (`None`: all namespaces) that the
    /// options' selectors select, read with the consistency, page size and continue token
    /// they ask for (spec 000 "Resource version semantics" and "Pagination"). 400 for a
    /// field the kind's selectors cannot name or a bad token; 410 when the revision asked for
    /// (or the token's) has been compacted; 504 when it is not reached in time.
    pub async fn list(
        &self,
        storage: &dyn Storage,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<u8>, ApiError> {
        let selectors = self.selectors(options.selectors.clone())?;
        let prefix = self.resource.collection_key(namespace);
        let read = ListRead::resolve(options, &prefix)?;
        let page = self
            .select(storage, &prefix, &selectors, read, options.limit)
            .await?;
        self.list_body(&page)
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
                .delete(storage, ns, name, &Preconditions::default(), now, write)
                .await
            {
                Ok(_) | Err(ApiError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        self.list_body(&page)
    }

    /// Decodes a request body in the order Kubernetes judges it, each step a 400 that ends
    /// the request (R-RES-190): syntax (naming line and column; types, unknown and duplicate
    /// fields are judged in the same pass), `apiVersion` and `kind`, the first field of the
    /// wrong type (R-RES-031), and last the unknown and duplicate fields as
    /// `field_validation` asks (R-RES-185..187): the object and the warnings to answer.
    fn decode_body(
        &self,
        body: &[u8],
        write: WriteOptions,
    ) -> Result<(Value, Vec<String>), ApiError> {
        let parse_error = |e: &dyn std::fmt::Display| {
            ApiError::BadRequest(format!("couldn't get version/kind; json parse error: {e}"))
        };
        let any = schema::Schema::any();
        let compiled = self.compiled_schema()?;
        let schema = compiled.as_deref().unwrap_or(&any);
        let decoded = schema::decode(schema, body, write.format).map_err(|e| parse_error(&e))?;
        let Value::Object(mut raw) = decoded.value else {
            return Err(parse_error(&"the body is not a JSON object"));
        };
        let expected_version = self.resource.api_version();
        if let Some(v) = raw.get("apiVersion").and_then(Value::as_str)
            && v != expected_version
        {
            return Err(ApiError::BadRequest(format!(
                "the API version in the data ({}) does not match the expected API version ({expected_version})",
                excerpt(v)
            )));
        }
        if let Some(k) = raw.get("kind").and_then(Value::as_str)
            && k != self.resource.kind
        {
            return Err(ApiError::BadRequest(format!(
                "the kind in the data ({}) does not match the expected kind ({})",
                excerpt(k),
                self.resource.kind
            )));
        }
        let cannot_handle = |e: &dyn std::fmt::Display| {
            let kind = &self.resource.kind;
            ApiError::BadRequest(format!(
                "{kind} in version \"{}\" cannot be handled as a {kind}: {e}",
                self.resource.version
            ))
        };
        if let Some(e) = decoded.type_error {
            return Err(cannot_handle(&e));
        }
        let warnings = write
            .field_validation
            .judge(decoded.findings)
            .map_err(|e| cannot_handle(&e))?;
        // The served apiVersion and kind lead the object, as the typed round trip wrote them.
        raw.shift_remove("apiVersion");
        raw.shift_remove("kind");
        let mut obj = Map::new();
        obj.insert("apiVersion".to_owned(), expected_version.into());
        obj.insert("kind".to_owned(), self.resource.kind.clone().into());
        obj.extend(raw);
        if !obj.get("metadata").is_some_and(Value::is_object) {
            obj.insert("metadata".to_owned(), Value::Object(Map::new()));
        }
        Ok((Value::Object(obj), warnings))
    }

    /// The kind's compiled schema, if it has one (test kinds do not).
    fn compiled_schema(&self) -> Result<Option<Arc<schema::Schema>>, ApiError> {
        self.schema
            .map(|schema| {
                schema().map_err(|e| {
                    ApiError::Internal(format!(
                        "the schema of {} is broken: {e}",
                        self.resource.kind
                    ))
                })
            })
            .transpose()
    }

    /// The required fields of `obj` its schema finds unset, added to `errs` unless a kind
    /// rule already reported them (R-RES-030); checked after defaulting, next to
    /// `validate_new`.
    fn check_required(&self, obj: &Value, errs: &mut Vec<FieldError>) -> Result<(), ApiError> {
        if let Some(schema) = self.compiled_schema()? {
            schema::missing_required(&schema, obj, errs);
        }
        Ok(())
    }

    /// Puts the path's namespace into the object (namespaced types) or removes it
    /// (cluster-scoped types); a different namespace in the body is a 400.
    fn apply_namespace(&self, obj: &mut Value, namespace: &str) -> Result<(), ApiError> {
        let meta = meta_mut(obj)?;
        if !self.resource.is_namespaced() {
            meta.remove("namespace");
            return Ok(());
        }
        let body_ns = meta
            .get("namespace")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !body_ns.is_empty() && body_ns != namespace {
            return Err(ApiError::BadRequest(
                "the namespace of the provided object does not match the namespace sent on the request".into(),
            ));
        }
        meta.insert("namespace".to_owned(), namespace.into());
        Ok(())
    }

    /// A namespaced create needs its namespace to exist (404 naming the namespace) and not
    /// be terminating (403), as Kubernetes' NamespaceLifecycle admission.
    async fn check_namespace_open(
        &self,
        storage: &dyn Storage,
        namespace: &str,
        name: &str,
    ) -> Result<(), ApiError> {
        let ns_type = namespace_type();
        let key = ns_type.object_key("", namespace);
        let found = storage
            .get(&key, ReadConsistency::Linearizable)
            .await
            .map_err(|e| ApiError::from_storage(e, &ns_type.group_resource(), namespace))?;
        let Some(found) = found else {
            return Err(ApiError::NotFound {
                resource: ns_type.group_resource(),
                name: namespace.to_owned(),
            });
        };
        let ns = StoredJson::from_stored(found.value)
            .and_then(|s| s.to_value())
            .map_err(|e| corrupt(&key, e))?;
        if ns.pointer("/status/phase").and_then(Value::as_str) == Some("Terminating") {
            return Err(ApiError::Forbidden {
                resource: Some(self.group_resource()),
                name: name.to_owned(),
                reason: format!(
                    "unable to create new content in namespace {namespace} because it is being terminated"
                ),
            });
        }
        Ok(())
    }

    /// Kubernetes' `ValidateObjectMeta` plus the strategy's own validation.
    fn validate_new(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = crate::validation::validate_object_meta(
            obj,
            self.strategy.name_rule(),
            self.resource.is_namespaced(),
            self.builtin,
        );
        errs.extend(self.strategy.validate(obj));
        errs
    }

    fn invalid(&self, obj: &Value, causes: Vec<FieldError>) -> ApiError {
        ApiError::Invalid {
            kind: self.resource.group_kind(),
            name: meta_str(obj, "name").to_owned(),
            causes,
        }
    }

    /// The current version of the object `name` at `key`, read linearizably because a write
    /// compares against it: the stored object, its envelope and its parsed JSON. 404 when
    /// absent.
    async fn read_current(
        &self,
        storage: &dyn Storage,
        key: &str,
        name: &str,
    ) -> Result<(StoredObject, StoredJson, Value), ApiError> {
        let current = storage
            .get(key, ReadConsistency::Linearizable)
            .await
            .map_err(|e| self.storage_error(e, name))?
            .ok_or_else(|| self.not_found(name))?;
        let stored = StoredJson::from_stored(current.value.clone()).map_err(|e| corrupt(key, e))?;
        let obj = stored.to_value().map_err(|e| corrupt(key, e))?;
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
        let (obj, warnings) = self.decode_body(body, write)?;
        let writes = Persistence::new(storage, write.dry_run);
        let body = match &self.shared {
            Some(shared) => {
                self.create_shared(shared, storage, &writes, namespace, obj, now)
                    .await?
            }
            None => {
                self.create_decoded(storage, &writes, namespace, obj, now)
                    .await?
            }
        };
        Ok(Written { body, warnings })
    }

    /// The create of a decoded body.
    async fn create_decoded(
        &self,
        storage: &dyn Storage,
        writes: &Persistence<'_>,
        namespace: &str,
        mut obj: Value,
        now: DateTime<Utc>,
    ) -> Result<Vec<u8>, ApiError> {
        if !meta_str(&obj, "resourceVersion").is_empty() {
            // Kubernetes' storage refuses this (an object copied from a read), worded so.
            return Err(ApiError::Internal(
                "resourceVersion should not be set on objects to be created".into(),
            ));
        }
        self.apply_namespace(&mut obj, namespace)?;
        if self.resource.is_namespaced() {
            self.check_namespace_open(storage, namespace, meta_str(&obj, "name"))
                .await?;
        }
        self.strategy.default_fields(&mut obj);
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
            self.check_required(&candidate, &mut errs)?;
            if !errs.is_empty() {
                return Err(self.invalid(&candidate, errs));
            }
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
            let written = match encode(&key, &candidate) {
                Ok(value) => writes.create(&key, value, self.max_object_bytes).await,
                Err(e) => {
                    self.release(storage, &reserved).await;
                    return Err(e);
                }
            };
            if written.is_err() {
                self.release(storage, &reserved).await;
            }
            match written {
                Ok(stored) if writes.is_dry_run() => return self.respond_unstored(&key, stored),
                Ok(stored) => return self.respond(&key, stored),
                Err(StorageError::AlreadyExists { .. })
                    if generate_prefix.is_some() && attempt < GENERATE_NAME_ATTEMPTS =>
                {
                    continue;
                }
                Err(e) => return Err(self.storage_error(e, &name)),
            }
        }
    }

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
        let (decoded, warnings) = self.decode_body(body, write)?;
        let writes = Persistence::new(storage, write.dry_run);
        let target = (namespace, name, subresource);
        let body = match &self.shared {
            Some(shared) => {
                self.update_shared(shared, storage, &writes, target, decoded)
                    .await?
            }
            None => {
                self.update_decoded(storage, &writes, target, decoded)
                    .await?
            }
        };
        Ok(Written { body, warnings })
    }

    /// The update of a decoded body; `target` is (namespace, name, subresource).
    async fn update_decoded(
        &self,
        storage: &dyn Storage,
        writes: &Persistence<'_>,
        target: (&str, &str, &str),
        decoded: Value,
    ) -> Result<Vec<u8>, ApiError> {
        let (namespace, name, subresource) = target;
        let body_name = meta_str(&decoded, "name");
        if body_name != name {
            return Err(ApiError::BadRequest(format!(
                "the name of the object ({}) does not match the name on the URL ({})",
                excerpt(body_name),
                excerpt(name)
            )));
        }
        let requested: Option<Revision> = match meta_str(&decoded, "resourceVersion") {
            "" => None,
            rv => Some(rv.parse().map_err(|_| {
                ApiError::BadRequest(format!("invalid resourceVersion {:?}", excerpt(rv)))
            })?),
        };
        let key = self.resource.object_key(namespace, name);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (current, stored, old) = self.read_current(storage, &key, name).await?;
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
                self.strategy
                    .prepare_for_subresource_update(subresource, &mut obj, &old);
            }
            if self.strategy.tracks_generation() {
                bump_generation(&mut obj, &old)?;
            }
            errs.extend(self.validate_new(&obj));
            errs.extend(crate::validation::validate_object_meta_update(&obj, &old));
            self.check_required(&obj, &mut errs)?;
            errs.extend(self.strategy.validate_update(&obj, &old));
            if subresource == "status" {
                errs.extend(self.strategy.validate_status_update(&obj, &old));
            }
            if !errs.is_empty() {
                return Err(self.invalid(&obj, errs));
            }
            let (reserved, frees) = self
                .allocate(storage, &mut obj, Some(&old), None, writes.is_dry_run())
                .await?;
            self.strategy.canonicalize(&mut obj);
            let value = encode(&key, &obj)?;
            let unchanged =
                StoredJson::from_stored(value.clone()).is_ok_and(|new| new.json == stored.json);
            if unchanged {
                return Ok(stored.with_resource_version(current.mod_revision));
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
                    return self.remove_after_update(writes, &key, name, updated).await;
                }
                Ok(updated) => return self.respond(&key, updated),
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
    async fn remove_after_update(
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

    /// Carries the server-owned metadata of `old` into an update (Kubernetes'
    /// `BeforeUpdate`): uid (a different one is invalid), creation and deletion timestamps,
    /// generation; drops `resourceVersion` (the store assigns it).
    fn prepare_update_meta(
        &self,
        obj: &mut Value,
        old: &Value,
    ) -> Result<Vec<FieldError>, ApiError> {
        let mut errs = Vec::new();
        let old_meta = old.get("metadata").cloned().unwrap_or(Value::Null);
        let meta = meta_mut(obj)?;
        meta.remove("resourceVersion");
        let old_uid = old_meta.get("uid").cloned().unwrap_or(Value::Null);
        match meta.get("uid").and_then(Value::as_str) {
            None | Some("") => {
                meta.insert("uid".to_owned(), old_uid);
            }
            Some(uid) if Some(uid) != old_uid.as_str() => {
                errs.push(FieldError::invalid(
                    "metadata.uid",
                    uid,
                    "field is immutable",
                ));
            }
            Some(_) => {}
        }
        for field in ["creationTimestamp", "deletionTimestamp", "generation"] {
            match old_meta.get(field) {
                Some(v) => {
                    meta.insert(field.to_owned(), v.clone());
                }
                None => {
                    meta.remove(field);
                }
            }
        }
        if !meta.contains_key("deletionGracePeriodSeconds")
            && let Some(v) = old_meta.get("deletionGracePeriodSeconds")
        {
            meta.insert("deletionGracePeriodSeconds".to_owned(), v.clone());
        }
        Ok(errs)
    }

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
        preconditions: &Preconditions,
        now: DateTime<Utc>,
        write: WriteOptions,
    ) -> Result<Vec<u8>, ApiError> {
        if let Some(shared) = &self.shared {
            let target = (namespace, name);
            return self
                .delete_shared(shared, storage, target, preconditions, now, write)
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
            if let Some(want) = &preconditions.uid
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

    fn deleted_status(&self, name: &str, uid: &str) -> Vec<u8> {
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
}
