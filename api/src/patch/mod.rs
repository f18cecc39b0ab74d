//! Patch documents applied to an object's JSON (spec 000 "Patch", R-RES-114..117): which
//! `Content-Type` names which kind of patch, and the three kinds Kubernetes serves for
//! built-in types. Pure: the store reads the current object, patches it here, and runs the
//! result through its normal update path.
//!
//! Server-side apply (`application/apply-patch+yaml`) is not served yet: it is refused with
//! the unsupported patch types (R-RES-111 is a later issue).

mod json_patch;
mod merge_patch;
mod shape;
mod strategic;
mod strategic_list;

#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod strategic_tests;

use serde_json::Value;

pub use shape::Shape;

/// The patch media types served, in Kubernetes' order: the text of a 415's list.
pub const PATCH_MEDIA_TYPES: [&str; 3] = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
];

/// The kind of a patch document, named by the request's `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// RFC 6902 JSON Patch: a list of operations (R-RES-114, R-RES-115).
    Json,
    /// RFC 7386 JSON Merge Patch (R-RES-116).
    Merge,
    /// Kubernetes' strategic merge patch, which merges lists by the markers of the built-in
    /// types (R-RES-117).
    Strategic,
}

impl PatchType {
    /// The patch type of `content_type` (parameters such as `charset` are ignored, as
    /// Kubernetes does); `None` for any other media type, a missing one included.
    pub fn from_content_type(content_type: Option<&str>) -> Option<Self> {
        let essence = content_type?.split(';').next().unwrap_or_default().trim();
        match essence {
            "application/json-patch+json" => Some(Self::Json),
            "application/merge-patch+json" => Some(Self::Merge),
            "application/strategic-merge-patch+json" => Some(Self::Strategic),
            _ => None,
        }
    }
}

/// Why a patch could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// The patch document cannot be read, or has the wrong shape (400, upstream's wording).
    #[error("{0}")]
    Malformed(String),
    /// The patch is well formed but does not apply to the object, e.g. a failed JSON Patch
    /// `test` (422; Kubernetes answers these with a generic message).
    #[error("{0}")]
    NotApplicable(String),
}

/// `current` with the patch `body` of kind `kind` applied; `shape` is the object's schema,
/// which only strategic merge patches read.
pub fn apply(
    kind: PatchType,
    current: Value,
    body: &[u8],
    shape: Shape<'_>,
) -> Result<Value, PatchError> {
    match kind {
        PatchType::Json => json_patch::apply(current, body),
        PatchType::Merge => merge_patch::apply(current, body),
        PatchType::Strategic => strategic::apply(current, body, shape),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // R-RES-114, R-RES-116, R-RES-117, R-RES-111 (refused until server-side apply)
    #[test]
    fn content_types_name_patch_types() {
        for (ct, want) in [
            (Some("application/json-patch+json"), Some(PatchType::Json)),
            (
                Some("application/merge-patch+json; charset=utf-8"),
                Some(PatchType::Merge),
            ),
            (
                Some("application/strategic-merge-patch+json"),
                Some(PatchType::Strategic),
            ),
            (Some("application/apply-patch+yaml"), None),
            (Some("application/json"), None),
            (None, None),
        ] {
            assert_eq!(PatchType::from_content_type(ct), want, "{ct:?}");
        }
    }
}
