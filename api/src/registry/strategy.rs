//! The per-kind behaviour injected into the generic [`Store`](super::Store): one trait with
//! default methods (as Kubernetes' `RESTCreateStrategy`/`RESTUpdateStrategy`, without the hook
//! fields). The store owns the order of the steps; a strategy only fills them in.

use serde_json::Value;

use crate::request::FieldLabels;
use crate::validation::FieldError;
use crate::validation::NameRule;

/// What a delete request does to an object, as the strategy decides from its current state.
#[derive(Debug, Clone, PartialEq)]
pub enum DeleteAction {
    /// Remove the object from the store now.
    Remove,
    /// Persist the object as the strategy changed it (e.g. `deletionTimestamp` set) and answer
    /// it; removal happens once its finalizers are gone.
    Mark,
    /// Answer the object as it is (already marked; nothing to change).
    Unchanged,
    /// Refuse with 409 Conflict, for this reason.
    Refuse(String),
}

/// Per-kind steps of the write pipeline.
///
/// ### Correctness requirements
/// - Every method is pure: no IO, no clock, no randomness (the store passes the time in), so
///   the same request gives the same object on every replica and in tests.
/// - The store decodes bodies against the kind's schema first (types checked, unknown fields
///   pruned); every method may assume that shape.
/// - `prepare_*` and `canonicalize` only mutate; `validate*` only inspect and return every
///   problem found (not just the first), each with its field path.
pub trait Strategy: Send + Sync + 'static {
    /// The rule `metadata.name` follows.
    fn name_rule(&self) -> NameRule {
        NameRule::DnsSubdomain
    }

    /// The fields a `fieldSelector` may name for this kind (Kubernetes' field label
    /// conversion): by default `metadata.name` and `metadata.namespace`.
    fn field_labels(&self) -> FieldLabels {
        FieldLabels::Metadata
    }

    /// Whether `metadata.generation` is maintained (1 on create, +1 when anything outside
    /// `metadata` and `status` changes). Kubernetes does it for custom resources and for
    /// kinds with a spec; the core kinds served now (ConfigMap, Secret, ...) have none.
    fn tracks_generation(&self) -> bool {
        true
    }

    /// Fills defaults in a decoded object (create and update), before preparation.
    fn default_fields(&self, _obj: &mut Value) {}

    /// Adjusts a new object before validation (clear status, set initial fields).
    fn prepare_for_create(&self, _obj: &mut Value) {}

    /// The problems of a new (or updated) object, beyond the generic metadata checks.
    fn validate(&self, _obj: &Value) -> Vec<FieldError> {
        Vec::new()
    }

    /// Adjusts an update before validation, given the current object (keep status, ...).
    fn prepare_for_update(&self, _new: &mut Value, _old: &Value) {}

    /// Adjusts an update through `subresource` before validation: only the subresource's part
    /// of `new` may differ from `old`. The default serves `status` as Kubernetes' status
    /// strategies do: everything but `status` comes from `old`, and so do the labels,
    /// annotations, finalizers and owner references.
    fn prepare_for_subresource_update(&self, subresource: &str, new: &mut Value, old: &Value) {
        if subresource == "status" {
            let status = new.get("status").cloned();
            let mut merged = old.clone();
            if let Value::Object(m) = &mut merged {
                match status {
                    Some(s) => m.insert("status".to_owned(), s),
                    None => m.remove("status"),
                };
            }
            *new = merged;
        }
    }

    /// The problems of the change from `old` to `new` (immutable fields).
    fn validate_update(&self, _new: &Value, _old: &Value) -> Vec<FieldError> {
        Vec::new()
    }

    /// The problems of a `status` subresource update from `old` to `new` (counters out of
    /// range, ...), beyond [`Strategy::validate`] and [`Strategy::validate_update`].
    fn validate_status_update(&self, _new: &Value, _old: &Value) -> Vec<FieldError> {
        Vec::new()
    }

    /// Normalizes a valid object just before it is stored.
    fn canonicalize(&self, _obj: &mut Value) {}

    /// What a delete does to `obj` (its current state; may be changed for [`DeleteAction::Mark`]).
    /// `now` is the RFC 3339 time of the request. The default follows Kubernetes' generic
    /// store: with `metadata.finalizers`, mark the object (R-RES-060); otherwise remove it.
    fn before_delete(&self, obj: &mut Value, now: &str) -> DeleteAction {
        mark_for_finalizers(obj, now)
    }

    /// Whether an object that an update left in this state must now be removed: it is being
    /// deleted and nothing holds it any more (R-RES-061).
    fn ready_for_removal(&self, obj: &Value) -> bool {
        obj.pointer("/metadata/deletionTimestamp").is_some() && !has_finalizers(obj)
    }
}

/// The default delete decision: mark an object that has finalizers, remove one without.
pub fn mark_for_finalizers(obj: &mut Value, now: &str) -> DeleteAction {
    if !has_finalizers(obj) {
        return DeleteAction::Remove;
    }
    if obj.pointer("/metadata/deletionTimestamp").is_some() {
        return DeleteAction::Unchanged;
    }
    if let Some(Value::Object(meta)) = obj.get_mut("metadata") {
        meta.insert("deletionTimestamp".to_owned(), now.into());
        meta.insert("deletionGracePeriodSeconds".to_owned(), 0.into());
    }
    DeleteAction::Mark
}

/// Whether `metadata.finalizers` is a non-empty list.
pub fn has_finalizers(obj: &Value) -> bool {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| !f.is_empty())
}
