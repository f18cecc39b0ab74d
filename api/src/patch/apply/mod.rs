//! Server-side apply, pure (spec 000 "Field management", R-RES-042..047, R-RES-203..226):
//! the merge of an applied configuration into the live object ([`merge`]), the
//! `metadata.managedFields` entries ([`managed_fields`]), and the field manager that records
//! who owns which field on every write and refuses an apply that would take fields from
//! another manager ([`FieldManager`], as Kubernetes' field manager and structured-merge-diff
//! do). The store reads the live object, calls the field manager, and stores the result.

mod field_manager;
mod last_applied;
pub mod managed_fields;
pub mod merge;
mod ownership;

#[cfg(test)]
mod field_manager_tests;
#[cfg(test)]
mod managed_fields_tests;
#[cfg(test)]
mod merge_tests;

use std::collections::BTreeMap;

use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::group::GroupKind;
use crate::patch::Shape;
use crate::patch::fieldpath::DisplayPath;
use crate::patch::fieldpath::PathElement;

/// The operation of a managedFields entry (R-RES-043).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operation {
    /// A server-side apply.
    Apply,
    /// Any other write: create, update, a patch of another type.
    Update,
}

impl Operation {
    /// The `operation` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Apply => "Apply",
            Self::Update => "Update",
        }
    }
}

/// The identity of a write's manager.
#[derive(Debug, Clone, Copy)]
pub struct Manager<'a> {
    /// The manager's name (`fieldManager`, or the user agent's for an Update).
    pub name: &'a str,
    /// The API version the write was sent in (`apps/v1`).
    pub api_version: &'a str,
    /// The subresource written through (empty: the main resource).
    pub subresource: &'a str,
}

/// One field manager's conflicting field, for the 409.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    /// The other manager's name.
    pub manager: String,
    /// Its operation.
    pub operation: Operation,
    /// Its API version.
    pub api_version: String,
    /// When it last wrote (RFC 3339), if recorded.
    pub time: Option<String>,
    /// The subresource it wrote through (empty: the main resource).
    pub subresource: String,
    /// The field's path.
    pub path: Vec<PathElement>,
}

/// Everything the field manager needs about the kind and the moment.
#[derive(Debug, Clone, Copy)]
pub struct FieldManager<'a> {
    /// The root of the kind's schema (untyped for kinds without one).
    pub shape: Shape<'a>,
    /// The names of the deployment (the last-applied annotation's domain).
    pub flavor: Flavor,
    /// RFC 3339 seconds, the `time` of new entries.
    pub now: &'a str,
}

/// How a conflict names its manager, as Kubernetes prints it: `"name"`, with the subresource
/// when there is one, and for an Update manager its API version and time.
fn manager_text(conflict: &Conflict) -> String {
    let mut text = format!("{:?}", conflict.manager);
    if !conflict.subresource.is_empty() {
        text.push_str(&format!(" with subresource {:?}", conflict.subresource));
    }
    if conflict.operation == Operation::Update {
        text.push_str(&format!(" using {}", conflict.api_version));
        if let Some(time) = &conflict.time {
            text.push_str(&format!(" at {time}"));
        }
    }
    text
}

/// The 409 of apply conflicts, as Kubernetes words it (R-RES-204, R-RES-237): one
/// `FieldManagerConflict` cause per field; the message `Apply failed with 1 conflict: conflict
/// with "<manager>" using <apiVersion>: <path>`, or for several the conflicts grouped by
/// manager. Like Kubernetes' apply conflict, the details name no object: `kind` and `name` go
/// to the log only.
pub fn conflict_error(kind: GroupKind, name: &str, conflicts: &[Conflict]) -> ApiError {
    tracing::debug!(%kind, name, conflicts = conflicts.len(), "apply conflicts");
    apply_conflict(conflicts)
}

/// The 409 of `conflicts` (see [`conflict_error`]).
fn apply_conflict(conflicts: &[Conflict]) -> ApiError {
    let causes: Vec<(String, String)> = conflicts
        .iter()
        .map(|c| {
            let field = DisplayPath(&c.path).to_string();
            (field, format!("conflict with {}", manager_text(c)))
        })
        .collect();
    let message = match conflicts {
        [one] => format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            manager_text(one),
            DisplayPath(&one.path)
        ),
        many => {
            let mut by_manager: BTreeMap<String, Vec<String>> = BTreeMap::new();
            for c in many {
                by_manager
                    .entry(manager_text(c))
                    .or_default()
                    .push(DisplayPath(&c.path).to_string());
            }
            let lines: Vec<String> = by_manager
                .into_iter()
                .flat_map(|(manager, paths)| {
                    std::iter::once(format!("conflicts with {manager}:"))
                        .chain(paths.into_iter().map(|p| format!("- {p}")))
                })
                .collect();
            format!(
                "Apply failed with {} conflicts: {}",
                many.len(),
                lines.join("\n")
            )
        }
    };
    ApiError::ApplyConflict { message, causes }
}
