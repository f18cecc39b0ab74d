//! The per-kind behaviour injected into the generic [`Store`](super::Store): one trait with
//! default methods (as Kubernetes' `RESTCreateStrategy`/`RESTUpdateStrategy`, without the hook
//! fields). The store owns the order of the steps; a strategy only fills them in.

use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;

use super::deletion::DeleteAction;
use super::deletion::DeleteOptions;
use super::deletion::GcPolicy;
use super::deletion::plan_delete;
use super::deletion::requested_grace;
use crate::request::FieldLabels;
use crate::schema::structural::StructuralSchema;
use crate::validation::FieldError;
use crate::validation::NameRule;

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

    /// Whether `metadata.finalizers` follow core's naming rule (a name without a domain must
    /// be a standard one) on top of apimachinery's, as for the kinds kube-apiserver itself
    /// serves; the kinds other servers serve (apiextensions-apiserver's CRDs) only follow
    /// apimachinery's.
    fn core_finalizer_rule(&self) -> bool {
        true
    }

    /// Whether `metadata.generation` is maintained (1 on create, +1 when anything outside
    /// `metadata` and `status` changes). Kubernetes does it for custom resources and for
    /// kinds with a spec; the core kinds served now (ConfigMap, Secret, ...) have none.
    fn tracks_generation(&self) -> bool {
        true
    }

    /// The structural schema server-side apply types this kind's objects by (a custom kind's
    /// version); `None`: the store's body schema types them.
    fn apply_schema(&self) -> Option<&StructuralSchema> {
        None
    }

    /// Fills defaults in a decoded object (create and update), before preparation.
    fn default_fields(&self, _obj: &mut Value) {}

    /// Adjusts a new object before validation (clear status, set initial fields).
    fn prepare_for_create(&self, _obj: &mut Value) {}

    /// The problems of a new (or updated) object, beyond the generic metadata checks.
    fn validate(&self, _obj: &Value) -> Vec<FieldError> {
        Vec::new()
    }

    /// The problems only a create has, beyond [`Strategy::validate`] (the counterpart of
    /// [`Strategy::validate_update`] for rules that compare with the object before).
    fn validate_create(&self, _obj: &Value) -> Vec<FieldError> {
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
            take_status(new, old);
        }
    }

    /// The problems of the change from `old` to `new` (immutable fields).
    fn validate_update(&self, _new: &Value, _old: &Value) -> Vec<FieldError> {
        Vec::new()
    }

    /// The problems of a `status` subresource update from `old` to `new` (counters out of
    /// range, ...), beyond [`Strategy::validate`] and [`Strategy::validate_update`] unless
    /// [`Strategy::status_validated_alone`].
    fn validate_status_update(&self, _new: &Value, _old: &Value) -> Vec<FieldError> {
        Vec::new()
    }

    /// Whether a `status` write is validated by [`Strategy::validate_status_update`] (and
    /// the metadata rules) alone, as the status strategies of custom resources and CRDs do,
    /// so a spec that a later schema or validation finds wrong never blocks a status writer;
    /// the built-in kinds' status writes are validated whole, then by it.
    fn status_validated_alone(&self) -> bool {
        false
    }

    /// The warnings a valid create of `obj` answers with (Kubernetes' `WarningsOnCreate`):
    /// none by default.
    fn warnings_on_create(&self, _obj: &Value) -> Vec<String> {
        Vec::new()
    }

    /// The warnings a valid update from `old` to `new` answers with (Kubernetes'
    /// `WarningsOnUpdate`): none by default.
    fn warnings_on_update(&self, _new: &Value, _old: &Value) -> Vec<String> {
        Vec::new()
    }

    /// Normalizes a valid object just before it is stored.
    fn canonicalize(&self, _obj: &mut Value) {}

    /// What happens to the dependents of a deleted object when the delete sets no policy
    /// (Kubernetes' `DefaultGarbageCollectionPolicy`): by default they are deleted.
    fn gc_policy(&self) -> GcPolicy {
        GcPolicy::DeleteDependents
    }

    /// The grace period of a delete of `obj` that asks for `requested` seconds (`None`: the
    /// kind's default), for a kind with graceful deletion (Kubernetes'
    /// `CheckGracefulDelete`); `None`, the default, for kinds without it.
    fn graceful_period(&self, _obj: &Value, _requested: Option<i64>) -> Option<i64> {
        None
    }

    /// The warnings a delete (or deletecollection) with `options` answers with: none by
    /// default.
    fn warnings_on_delete(&self, _options: &DeleteOptions) -> Vec<String> {
        Vec::new()
    }

    /// What a delete at `now` with `options` does to `obj` (its current state; changed in
    /// place for the marking actions). The default is Kubernetes' generic store
    /// ([`plan_delete`]) with the kind's [`Strategy::gc_policy`] and
    /// [`Strategy::graceful_period`].
    fn before_delete(
        &self,
        obj: &mut Value,
        now: DateTime<Utc>,
        options: &DeleteOptions,
    ) -> DeleteAction {
        let graceful = self.graceful_period(obj, requested_grace(options));
        plan_delete(obj, now, options, self.gc_policy(), graceful)
    }

    /// Whether an object that an update left in this state must now be removed: it is being
    /// deleted with no grace period left and nothing holds it any more (R-RES-061), as
    /// Kubernetes' `ShouldDeleteDuringUpdate`.
    fn ready_for_removal(&self, obj: &Value) -> bool {
        obj.pointer("/metadata/deletionTimestamp").is_some()
            && !has_finalizers(obj)
            && obj
                .pointer("/metadata/deletionGracePeriodSeconds")
                .and_then(Value::as_i64)
                .is_none_or(|grace| grace == 0)
    }
}

/// Whether `metadata.finalizers` is a non-empty list.
pub fn has_finalizers(obj: &Value) -> bool {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| !f.is_empty())
}

/// A `status` update as Kubernetes' status strategies prepare it: `new` becomes `old` with
/// `new`'s status.
pub fn take_status(new: &mut Value, old: &Value) {
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
