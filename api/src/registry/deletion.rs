//! What a delete asks of the store beyond its target: Kubernetes' `DeleteOptions` as the
//! handlers decode them (preconditions, dry run, grace period, propagation of dependents and
//! the forced removal of unreadable objects), the garbage collector's finalizers that a
//! propagation policy leaves on an object, and the decision a delete makes from them
//! ([`plan_delete`]).

use std::collections::BTreeSet;

use chrono::DateTime;
use chrono::SecondsFormat;
use chrono::TimeDelta;
use chrono::Utc;
use serde_json::Value;

/// A delete's preconditions (`DeleteOptions.preconditions`): each set value must equal the
/// stored object's, or the delete is a 409 Conflict (R-RES-055).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preconditions {
    /// The uid the object must have.
    pub uid: Option<String>,
    /// The resourceVersion the object must be at.
    pub resource_version: Option<String>,
}

/// The finalizer that makes the garbage collector orphan an object's dependents (remove
/// their references to it) before the object is removed.
pub const ORPHAN_FINALIZER: &str = "orphan";

/// The finalizer that makes the garbage collector delete an object's dependents (those that
/// block their owner's deletion first) before the object is removed.
pub const FOREGROUND_FINALIZER: &str = "foregroundDeletion";

/// `DeleteOptions.propagationPolicy`: what happens to an object's dependents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PropagationPolicy {
    /// Dependents lose their reference to the object and stay.
    Orphan,
    /// The object goes at once; the garbage collector deletes the dependents afterwards.
    Background,
    /// The object stays, marked, until the garbage collector has deleted the dependents that
    /// block it.
    Foreground,
}

impl PropagationPolicy {
    /// Every policy by its wire name.
    pub const ALL: [(&'static str, Self); 3] = [
        ("Foreground", Self::Foreground),
        ("Background", Self::Background),
        ("Orphan", Self::Orphan),
    ];

    /// The policy named `name` on the wire.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .find(|(wire, _)| *wire == name)
            .map(|(_, policy)| *policy)
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Foreground => "Foreground",
            Self::Background => "Background",
            Self::Orphan => "Orphan",
        }
    }
}

/// The options of one delete request (R-RES-048..055).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeleteOptions {
    /// Conditions the object must meet.
    pub preconditions: Preconditions,
    /// Whether the delete is a dry run (`dryRun=All`).
    pub dry_run: bool,
    /// `gracePeriodSeconds`: seconds before a kind with graceful deletion removes the object;
    /// `None` is the kind's default.
    pub grace_period_seconds: Option<i64>,
    /// `propagationPolicy`.
    pub propagation_policy: Option<PropagationPolicy>,
    /// The deprecated `orphanDependents`.
    pub orphan_dependents: Option<bool>,
    /// `ignoreStoreReadErrorWithClusterBreakingPotential`: remove an object that cannot be
    /// read (R-RES-063).
    pub ignore_store_read_errors: bool,
}

/// What happens to an object's dependents when a delete sets no policy (Kubernetes'
/// `DefaultGarbageCollectionPolicy` of the kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GcPolicy {
    /// Dependents are deleted (in the background).
    DeleteDependents,
    /// Dependents are orphaned: the `orphan` finalizer is left on the object.
    OrphanDependents,
}

/// What a delete does to an object, in the order Kubernetes' generic store decides it.
#[derive(Debug, Clone, PartialEq)]
pub enum DeleteAction {
    /// Remove the object from the store now.
    Remove,
    /// Persist the object as changed (`deletionTimestamp` set, finalizers or grace period
    /// changed) and answer it: finalizers or a grace period keep it.
    Mark,
    /// Persist the object as changed, then remove it: a kind with graceful deletion deleted
    /// with no grace period left (watchers see it marked, then deleted).
    MarkThenRemove,
    /// Answer the object as it is: its deletion is already under way and this request
    /// changes nothing.
    Unchanged,
    /// Refuse with 409 Conflict, for this reason.
    Refuse(String),
}

/// What a delete answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deleted {
    /// The JSON body: the object as it now is, or once removed, the removed object or a
    /// `Status` naming it (as the kind answers).
    pub body: Vec<u8>,
    /// Whether the object is gone (or, on a dry run, would be).
    pub removed: bool,
    /// Admission's warnings, for the response's `Warning` headers.
    pub warnings: Vec<String>,
}

/// `gracePeriodSeconds` as the delete path reads it: negative values count as 1 second.
pub fn requested_grace(options: &DeleteOptions) -> Option<i64> {
    options
        .grace_period_seconds
        .map(|g| if g < 0 { 1 } else { g })
}

/// Decides a delete of `obj` (its current state, changed in place for the marking actions)
/// as Kubernetes' generic store does (`rest.BeforeDelete`, then the update for graceful
/// deletion and finalizers): `graceful` is the grace period of a kind with graceful
/// deletion (its `CheckGracefulDelete`; `None` for kinds without), `policy` the kind's
/// default for dependents.
///
/// - An object already being deleted gracefully keeps its `deletionTimestamp` unless a
///   shorter grace period moves it earlier; it never moves later (R-RES-026).
/// - Finalizers (its own, or the garbage collector's that `propagationPolicy`,
///   `orphanDependents` or the kind's default policy ask for) keep the object, marked with
///   `deletionTimestamp` and `deletionGracePeriodSeconds: 0` (R-RES-060); the garbage
///   collector's finalizers are only changed before deletion has begun.
/// - Otherwise it is removed (R-RES-062), after a marking write when its grace period ran out.
pub fn plan_delete(
    obj: &mut Value,
    now: DateTime<Utc>,
    options: &DeleteOptions,
    policy: GcPolicy,
    graceful: Option<i64>,
) -> DeleteAction {
    let original = obj.clone();
    let requested = requested_grace(options);
    let mut marked_graceful = false;
    let mut grace_left = 0;
    if let Some(period) = graceful {
        match deletion_timestamp(obj) {
            Some(at) => {
                // A stored negative grace period counts as 1 second; none or 0 means the
                // removal failed after the marking write, and is retried at once.
                let existing = meta_i64(obj, "deletionGracePeriodSeconds")
                    .filter(|g| *g != 0)
                    .map(|g| g.max(1));
                if let Some(existing) = existing {
                    match requested {
                        Some(shorter) if shorter < existing => {
                            let requested_at = at - TimeDelta::seconds(existing);
                            set_meta(
                                obj,
                                "deletionTimestamp",
                                timestamp(requested_at + TimeDelta::seconds(shorter)).into(),
                            );
                            set_meta(obj, "deletionGracePeriodSeconds", shorter.into());
                            marked_graceful = true;
                            grace_left = shorter;
                        }
                        _ => return DeleteAction::Unchanged,
                    }
                }
            }
            None => {
                set_meta(
                    obj,
                    "deletionTimestamp",
                    timestamp(now + TimeDelta::seconds(period)).into(),
                );
                set_meta(obj, "deletionGracePeriodSeconds", period.into());
                bump_generation(obj);
                marked_graceful = true;
                grace_left = period;
            }
        }
    }
    let had_finalizers = !finalizers(obj).is_empty();
    let (changed, wanted) = gc_finalizers(obj, options, policy);
    if !marked_graceful && !had_finalizers && !changed {
        return DeleteAction::Remove;
    }
    if changed {
        set_meta(obj, "finalizers", wanted.clone().into());
    }
    let pending_finalizers = !wanted.is_empty();
    if !marked_graceful {
        if !pending_finalizers {
            return DeleteAction::Remove;
        }
        mark_as_deleting(obj, now);
        return if *obj == original {
            DeleteAction::Unchanged
        } else {
            DeleteAction::Mark
        };
    }
    if pending_finalizers || grace_left > 0 {
        return DeleteAction::Mark;
    }
    DeleteAction::MarkThenRemove
}

/// Marks `obj` for its finalizers: `deletionTimestamp` now (kept if already earlier),
/// `deletionGracePeriodSeconds` 0, and a new generation on the first mark.
fn mark_as_deleting(obj: &mut Value, now: DateTime<Utc>) {
    let existing = deletion_timestamp(obj);
    if existing.is_none() {
        bump_generation(obj);
    }
    if existing.is_none_or(|at| at > now) {
        set_meta(obj, "deletionTimestamp", timestamp(now).into());
    }
    set_meta(obj, "deletionGracePeriodSeconds", 0.into());
}

/// The finalizers `obj` should carry for the garbage collector, and whether they differ
/// from its current ones (as sets): in order of precedence, `orphanDependents`, then
/// `propagationPolicy`, then a garbage collector finalizer the object already has, then the
/// kind's default policy (which can only orphan).
fn gc_finalizers(obj: &Value, options: &DeleteOptions, policy: GcPolicy) -> (bool, Vec<String>) {
    let current = finalizers(obj);
    let first_gc = current
        .iter()
        .find(|f| *f == ORPHAN_FINALIZER || *f == FOREGROUND_FINALIZER);
    let explicit = match (options.orphan_dependents, options.propagation_policy) {
        (Some(true), _) => Some(PropagationPolicy::Orphan),
        (Some(false), _) => Some(PropagationPolicy::Background),
        (None, policy) => policy,
    };
    let chosen = explicit.or_else(|| match first_gc.map(String::as_str) {
        Some(ORPHAN_FINALIZER) => Some(PropagationPolicy::Orphan),
        Some(_) => Some(PropagationPolicy::Foreground),
        None => None,
    });
    let chosen = chosen.unwrap_or(match policy {
        GcPolicy::OrphanDependents => PropagationPolicy::Orphan,
        GcPolicy::DeleteDependents => PropagationPolicy::Background,
    });
    let mut wanted: Vec<String> = current
        .iter()
        .filter(|f| *f != ORPHAN_FINALIZER && *f != FOREGROUND_FINALIZER)
        .cloned()
        .collect();
    match chosen {
        PropagationPolicy::Orphan => wanted.push(ORPHAN_FINALIZER.to_owned()),
        PropagationPolicy::Foreground => wanted.push(FOREGROUND_FINALIZER.to_owned()),
        PropagationPolicy::Background => {}
    }
    let as_set = |list: &[String]| list.iter().cloned().collect::<BTreeSet<_>>();
    let changed = as_set(&current) != as_set(&wanted);
    (changed, if changed { wanted } else { current })
}

/// `metadata.finalizers` as strings.
fn finalizers(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// `metadata.deletionTimestamp`, if set and readable.
fn deletion_timestamp(obj: &Value) -> Option<DateTime<Utc>> {
    let text = obj.pointer("/metadata/deletionTimestamp")?.as_str()?;
    DateTime::parse_from_rfc3339(text)
        .ok()
        .map(|at| at.with_timezone(&Utc))
}

fn meta_i64(obj: &Value, field: &str) -> Option<i64> {
    obj.get("metadata")?.get(field)?.as_i64()
}

fn set_meta(obj: &mut Value, field: &str, value: Value) {
    if let Some(Value::Object(meta)) = obj.get_mut("metadata") {
        meta.insert(field.to_owned(), value);
    }
}

/// A new `metadata.generation` for an object whose deletion begins, where it has one.
fn bump_generation(obj: &mut Value) {
    if let Some(generation) = meta_i64(obj, "generation").filter(|g| *g > 0) {
        set_meta(obj, "generation", generation.saturating_add(1).into());
    }
}

/// `at` as metadata writes times: RFC 3339 in seconds, UTC.
fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .expect("a time")
            .with_timezone(&Utc)
    }

    fn grace(seconds: i64) -> DeleteOptions {
        DeleteOptions {
            grace_period_seconds: Some(seconds),
            ..DeleteOptions::default()
        }
    }

    // R-RES-052: a negative grace period counts as one second.
    #[test]
    fn negative_grace_periods_count_as_one_second() {
        let mut pod = json!({"metadata": {"name": "p"}});
        let now = at("2026-01-01T00:00:00Z");
        let graceful = requested_grace(&grace(-5));
        assert_eq!(graceful, Some(1));
        let action = plan_delete(
            &mut pod,
            now,
            &grace(-5),
            GcPolicy::DeleteDependents,
            graceful,
        );
        assert_eq!(action, DeleteAction::Mark);
        assert_eq!(pod["metadata"]["deletionTimestamp"], "2026-01-01T00:00:01Z");
        assert_eq!(pod["metadata"]["deletionGracePeriodSeconds"], 1);
    }

    // A graceful object whose marking write set grace 0 but whose removal failed is removed
    // by the next delete, whatever it asks.
    #[test]
    fn a_marked_object_with_no_grace_left_is_removed() {
        let mut pod = json!({"metadata": {"name": "p",
            "deletionTimestamp": "2026-01-01T00:00:00Z", "deletionGracePeriodSeconds": 0}});
        let now = at("2026-01-01T00:00:05Z");
        let action = plan_delete(
            &mut pod,
            now,
            &grace(30),
            GcPolicy::DeleteDependents,
            Some(30),
        );
        assert_eq!(action, DeleteAction::Remove);
    }

    // Grace 0 on a graceful kind marks the object first (watchers see the mark), then removes it.
    #[test]
    fn no_grace_on_a_graceful_kind_marks_then_removes() {
        let mut pod = json!({"metadata": {"name": "p", "generation": 3}});
        let now = at("2026-01-01T00:00:00Z");
        let action = plan_delete(
            &mut pod,
            now,
            &grace(0),
            GcPolicy::DeleteDependents,
            Some(0),
        );
        assert_eq!(action, DeleteAction::MarkThenRemove);
        assert_eq!(pod["metadata"]["deletionTimestamp"], "2026-01-01T00:00:00Z");
        assert_eq!(pod["metadata"]["generation"], 4);
    }

    // R-RES-026: later deletes never move deletionTimestamp later, and one that changes
    // nothing writes nothing.
    #[test]
    fn later_deletes_keep_the_deletion_timestamp() {
        let mut obj = json!({"metadata": {"name": "c", "finalizers": ["example.com/x"]}});
        let first = at("2026-01-01T00:00:00Z");
        let options = DeleteOptions::default();
        let policy = GcPolicy::DeleteDependents;
        assert_eq!(
            plan_delete(&mut obj, first, &options, policy, None),
            DeleteAction::Mark
        );
        let later = at("2026-01-02T00:00:00Z");
        assert_eq!(
            plan_delete(&mut obj, later, &options, policy, None),
            DeleteAction::Unchanged
        );
        assert_eq!(obj["metadata"]["deletionTimestamp"], "2026-01-01T00:00:00Z");
    }
}
