//! What a delete asks of the store beyond its target: Kubernetes' `DeleteOptions` as the
//! handlers decode them (preconditions, dry run, grace period, propagation of dependents and
//! the forced removal of unreadable objects), and the garbage collector's finalizers that a
//! propagation policy leaves on an object.

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
