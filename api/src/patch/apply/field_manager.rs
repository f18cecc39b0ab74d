//! The field manager's two operations (Kubernetes' field manager over structured-merge-diff):
//! an Update records what a write changed for its manager and never fails on ownership; an
//! Apply merges a configuration, refuses (or with `force` takes) fields other managers own,
//! and removes what the applier no longer applies and nobody else owns.

use chrono::DateTime;
use chrono::Utc;
use serde_json::Map;
use serde_json::Value;

use super::Conflict;
use super::FieldManager;
use super::Manager;
use super::Operation;
use super::apply_conflict;
use super::last_applied;
use super::managed_fields;
use super::managed_fields::Identity;
use super::managed_fields::Managers;
use super::managed_fields::Owned;
use super::merge::merge;
use super::ownership;
use crate::error::ApiError;
use crate::patch::fieldpath;

/// The manager of the fields an object had when it was first applied to without managed
/// fields (Kubernetes' `before-first-apply`).
pub const BEFORE_FIRST_APPLY: &str = "before-first-apply";

/// `metadata.managedFields` of `object`, if any.
fn managed_fields_of(object: &Value) -> Option<&Value> {
    object.get("metadata")?.get("managedFields")
}

/// `object` without `metadata.managedFields`.
fn remove_managed_fields(object: &mut Value) {
    if let Some(Value::Object(metadata)) = object.get_mut("metadata") {
        metadata.remove("managedFields");
    }
}

/// Sets (or with no managers, removes) `object`'s `metadata.managedFields`.
fn set_managed_fields(object: &mut Value, managers: &Managers) {
    match managed_fields::encode(managers) {
        Some(encoded) => {
            if let Value::Object(fields) = object {
                let metadata = fields
                    .entry("metadata")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(metadata) = metadata {
                    metadata.insert("managedFields".to_owned(), encoded);
                }
            }
        }
        None => remove_managed_fields(object),
    }
}

/// `managers`, or none when they do not decode (Kubernetes drops managed fields it cannot read
/// rather than failing the write).
fn decoded_or_none(managed_fields: Option<&Value>) -> Managers {
    managed_fields::decode(managed_fields).unwrap_or_default()
}

impl FieldManager<'_> {
    fn now(&self) -> Result<DateTime<Utc>, ApiError> {
        DateTime::parse_from_rfc3339(self.now)
            .map(|t| t.with_timezone(&Utc))
            .map_err(|e| ApiError::Internal(format!("invalid field manager time: {e}")))
    }

    /// An Update operation (create, update, non-apply patch): `new` (the object about to be
    /// stored, its managedFields as the client sent them) gets its managedFields: an `[{}]`
    /// reset processed first, invalid or absent ones replaced by `live`'s, this manager's
    /// Update entry for what changed from `live` (None on create), at most 10 Update managers.
    /// Never fails on ownership.
    pub fn update(
        &self,
        live: Option<&Value>,
        new: &mut Value,
        manager: Manager<'_>,
    ) -> Result<(), ApiError> {
        let live_fields = live.and_then(managed_fields_of);
        let sent = managed_fields_of(new);
        let mut managers = if !manager.subresource.is_empty() {
            decoded_or_none(live_fields)
        } else if managed_fields::is_reset(sent) {
            Managers::new()
        } else {
            match managed_fields::decode(sent) {
                Ok(managers) if !managers.is_empty() => managers,
                _ => decoded_or_none(live_fields),
            }
        };
        remove_managed_fields(new);
        let mut old = live.cloned().unwrap_or_else(|| Value::Object(Map::new()));
        remove_managed_fields(&mut old);
        self.record_update(&old, new, &mut managers, manager)?;
        set_managed_fields(new, &managers);
        Ok(())
    }

    /// Records in `managers` the Update of `manager` from `old` to `new` (neither with
    /// managedFields): it takes the fields it changed from everyone, everyone loses the fields
    /// it removed, and its entry gets the time of the write when it changed anything.
    fn record_update(
        &self,
        old: &Value,
        new: &Value,
        managers: &mut Managers,
        manager: Manager<'_>,
    ) -> Result<(), ApiError> {
        self.reconcile(managers, old);
        let identity = Identity::new(
            manager.name,
            Operation::Update,
            manager.api_version,
            manager.subresource,
        );
        let (changed, removed) = ownership::changes(old, new, self.shape);
        ownership::take_from_others(managers, None, &changed, &removed);
        let gained = ownership::strip_meta(changed);
        if !gained.is_empty() {
            let set = match managers.remove(&identity) {
                Some(mut previous) => {
                    previous.set.absorb(gained);
                    previous.set
                }
                None => gained,
            };
            let owned = Owned {
                api_version: manager.api_version.to_owned(),
                time: Some(self.now()?),
                set,
            };
            managers.insert(identity, owned);
        }
        ownership::cap_update_managers(managers);
        Ok(())
    }

    /// Every manager's set read against `live`'s schema as it is now.
    fn reconcile(&self, managers: &mut Managers, live: &Value) {
        for owned in managers.values_mut() {
            owned.set = ownership::reconcile(&owned.set, live, self.shape);
        }
    }

    /// An Apply: `config` (the decoded apply body, no managedFields) merged into `live`
    /// (None: create from `config`), with managedFields; 409 ApiError built from the
    /// conflicts unless `force`. The result still needs defaults, validation, storing.
    pub fn apply(
        &self,
        live: Option<&Value>,
        config: &Value,
        manager: Manager<'_>,
        force: bool,
    ) -> Result<Value, ApiError> {
        if !config.is_object() {
            return Err(ApiError::BadRequest(
                "the apply configuration must be an object".to_owned(),
            ));
        }
        if managed_fields_of(config).is_some_and(|f| !f.is_null()) {
            return Err(ApiError::BadRequest(
                "metadata.managedFields must be nil".to_owned(),
            ));
        }
        let mut managers = managed_fields::decode(live.and_then(managed_fields_of))
            .map_err(|e| ApiError::Internal(format!("failed to decode managed fields: {e}")))?;
        let mut old = live.cloned().unwrap_or_else(|| Value::Object(Map::new()));
        remove_managed_fields(&mut old);
        if managers.is_empty() {
            let first = Manager {
                name: BEFORE_FIRST_APPLY,
                ..manager
            };
            self.record_update(&Value::Object(Map::new()), &old, &mut managers, first)?;
        }
        self.reconcile(&mut managers, &old);
        let attempt = |force| self.apply_owned(&old, config, managers.clone(), manager, force);
        let outcome = match attempt(force) {
            Err(Refused::Conflicts(conflicts)) if manager.name == last_applied::KUBECTL => {
                let allowed = last_applied::allowed_conflicts(self.shape, self.flavor, &old);
                let rest: Vec<Conflict> = conflicts
                    .into_iter()
                    .filter(|c| !allowed.has(&c.path))
                    .collect();
                if rest.is_empty() {
                    attempt(true)
                } else {
                    Err(Refused::Conflicts(rest))
                }
            }
            outcome => outcome,
        };
        let mut object = match outcome {
            Ok(object) => object,
            Err(Refused::Conflicts(conflicts)) => return Err(apply_conflict(&conflicts)),
            Err(Refused::Invalid(error)) => return Err(error),
        };
        if manager.name == last_applied::KUBECTL {
            last_applied::update(self.flavor, &mut object, config);
        }
        Ok(object)
    }

    /// The object the apply of `config` over `old` by `manager` makes, its managedFields from
    /// `managers` (read from `old` and reconciled with its schema), or the conflicts that
    /// refuse it.
    fn apply_owned(
        &self,
        old: &Value,
        config: &Value,
        mut managers: Managers,
        manager: Manager<'_>,
        force: bool,
    ) -> Result<Value, Refused> {
        let invalid = |e: String| {
            Refused::Invalid(ApiError::PatchNotApplicable(format!(
                "failed to create typed patch object: {e}"
            )))
        };
        let mut merged = merge(old, config, self.shape).map_err(invalid)?;
        let applied = fieldpath::of_value(config, self.shape).map_err(invalid)?;
        let identity = Identity::new(
            manager.name,
            Operation::Apply,
            manager.api_version,
            manager.subresource,
        );
        let previous = managers.remove(&identity);
        managers.insert(
            identity.clone(),
            Owned {
                api_version: manager.api_version.to_owned(),
                time: previous.as_ref().and_then(|p| p.time),
                set: applied,
            },
        );
        if let Some(previous) = previous.filter(|p| !p.set.is_empty()) {
            let unowned = ownership::unowned_since(&previous.set, &managers, &merged, self.shape);
            if !unowned.is_empty() {
                merged = fieldpath::remove(merged, &unowned, self.shape);
            }
        }
        let (changed, removed) = ownership::changes(old, &merged, self.shape);
        let conflicts = ownership::conflicts(&managers, &identity, &changed);
        if !force && !conflicts.is_empty() {
            return Err(Refused::Conflicts(conflicts));
        }
        ownership::take_from_others(&mut managers, Some(&identity), &changed, &removed);
        let changed_object = merged != *old;
        if let Some(owned) = managers.get_mut(&identity) {
            owned.set = ownership::strip_meta(std::mem::take(&mut owned.set));
            if changed_object || owned.time.is_none() {
                owned.time = Some(self.now().map_err(Refused::Invalid)?);
            }
        }
        managers.retain(|_, owned| !owned.set.is_empty());
        let mut object = if changed_object { merged } else { old.clone() };
        set_managed_fields(&mut object, &managers);
        Ok(object)
    }
}

/// Why an apply was not done.
enum Refused {
    /// Other managers own fields it changes.
    Conflicts(Vec<Conflict>),
    /// The configuration cannot be applied.
    Invalid(ApiError),
}
