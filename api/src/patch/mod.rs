//! Patch documents applied to an object's JSON (spec 000 "Patch", R-RES-114..117): which
//! `Content-Type` names which kind of patch, and the three kinds Kubernetes serves for
//! built-in types. Pure: the store reads the current object, patches it here, and runs the
//! result through its normal update path.
//!
//! Server-side apply (`application/apply-patch+yaml`) is not one of these engines: its merge
//! and the field ownership it records are [`apply`]'s, which the store calls.
//!
//! Every engine keeps [`MAX_NESTING_DEPTH`]: the current object is measured once, a JSON
//! Patch checks each operation before it inserts anything, and the merge patches build no
//! value deeper than their inputs (see [`merge_patch`] and [`strategic`]), which parse with
//! the same limit. Their recursion follows the patch document, so it is as deep as the
//! parser allowed and no deeper.

pub mod apply;
pub mod fieldpath;
mod json_patch;
mod json_pointer;
mod merge_patch;
mod shape;
mod strategic;
mod strategic_list;
mod value_hash;

#[cfg(test)]
mod fuzz_tests;
#[cfg(test)]
mod json_patch_tests;
#[cfg(test)]
mod strategic_tests;
#[cfg(test)]
mod structural_tests;

use serde_json::Value;

use crate::limits::MAX_NESTING_DEPTH;
use crate::limits::nesting_depth;

pub use json_patch::JSON_PATCH_MAX_COPY_BYTES;
pub use json_patch::JSON_PATCH_MAX_SHIFTS;
pub use json_patch::MAX_JSON_PATCH_OPERATIONS;
pub use shape::ListKind;
pub use shape::MapKeys;
pub use shape::Shape;
pub use shape::Structure;

/// The patch media types served, in Kubernetes' order: the text of a 415's list.
pub const PATCH_MEDIA_TYPES: [&str; 4] = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    APPLY_YAML,
];

/// Server-side apply's media type (R-RES-111); its body is YAML, and so JSON too.
pub const APPLY_YAML: &str = "application/apply-patch+yaml";

/// Server-side apply in CBOR, served when `CBORServingAndStorage` is on: the router
/// transcodes its body to JSON and serves it as the [`APPLY_YAML`] apply it equals.
pub const APPLY_CBOR: &str = "application/apply-patch+cbor";

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
    /// Server-side apply: the body is a partial object in YAML (or JSON), merged by the
    /// field manager, not by [`apply`] (R-RES-111, R-RES-200).
    Apply,
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
            APPLY_YAML => Some(Self::Apply),
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
    /// The patch is well formed but does not apply to the object, or applying it would break
    /// a budget: a failed JSON Patch `test`, a missing path, too many bytes copied, a result
    /// nested too deep (422, the message says which).
    #[error("{0}")]
    NotApplicable(String),
    /// A JSON Patch with more operations than [`MAX_JSON_PATCH_OPERATIONS`] (413, Kubernetes'
    /// wording); nothing of it was applied.
    #[error(
        "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {0}"
    )]
    TooManyOperations(usize),
}

/// The patch document `body`. One nested deeper than [`MAX_NESTING_DEPTH`], which the parser
/// refuses, would build a value too deep: that is the 422 of [`too_deep`]; any other failure
/// is `malformed`'s answer.
fn parse(
    body: &[u8],
    malformed: impl FnOnce(serde_json::Error) -> PatchError,
) -> Result<Value, PatchError> {
    let mut patch = serde_json::from_slice(body).map_err(|e| {
        if nests_past_limit(body) {
            too_deep("the patch")
        } else {
            malformed(e)
        }
    })?;
    negative_zeros_to_integers(&mut patch);
    Ok(patch)
}

/// Turns every `-0` number of `patch` into the integer 0. Go's patch libraries keep a patch's
/// number literals as written, so `"replicas": -0` reaches the decoder as the integer literal
/// `-0`, which is 0; serde_json reads `-0` as the float -0.0, which an integer field refuses.
/// (A literal `-0.0`, which Go then refuses, is read the same way and so accepted here.)
fn negative_zeros_to_integers(patch: &mut Value) {
    let mut pending = vec![patch];
    while let Some(value) = pending.pop() {
        match value {
            Value::Object(map) => pending.extend(map.values_mut()),
            Value::Array(items) => pending.extend(items.iter_mut()),
            Value::Number(n) if n.as_f64().is_some_and(|f| f == 0.0 && f.is_sign_negative()) => {
                *value = Value::from(0);
            }
            _ => {}
        }
    }
}

/// Whether the JSON text `body` has more than [`MAX_NESTING_DEPTH`] objects and lists open at
/// once (brackets inside strings do not count).
fn nests_past_limit(body: &[u8]) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in body {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING_DEPTH {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// The 422 of a patch that would build a value nested deeper than [`MAX_NESTING_DEPTH`];
/// `what` says where.
fn too_deep(what: &str) -> PatchError {
    PatchError::NotApplicable(format!(
        "{what} would exceed the maximum nesting depth of {MAX_NESTING_DEPTH}"
    ))
}

/// `current` with the patch `body` of kind `kind` applied; `shape` is the object's schema,
/// which only strategic merge patches read. The result nests no deeper than
/// [`MAX_NESTING_DEPTH`]: an object already deeper is refused before the patch is read. An
/// apply is no patch document: the store's apply step merges it, and it is refused here.
pub fn apply(
    kind: PatchType,
    current: Value,
    body: &[u8],
    shape: Shape<'_>,
) -> Result<Value, PatchError> {
    if nesting_depth(&current) > MAX_NESTING_DEPTH {
        return Err(PatchError::NotApplicable(format!(
            "the object to patch nests deeper than the maximum nesting depth of {MAX_NESTING_DEPTH}"
        )));
    }
    match kind {
        PatchType::Json => json_patch::apply(current, body),
        PatchType::Merge => merge_patch::apply(current, body),
        PatchType::Strategic => strategic::apply(current, body, shape),
        PatchType::Apply => Err(PatchError::NotApplicable(
            "an apply is merged by the field manager, not applied as a patch".to_owned(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// `{"a": {"a": ... 1}}`, `depth` maps deep.
    fn nested(depth: usize) -> Value {
        (0..depth).fold(json!(1), |inner, _| json!({ "a": inner }))
    }

    fn body(kind: PatchType, value: Value) -> String {
        match kind {
            PatchType::Json => json!([{"op": "add", "path": "/b", "value": value}]).to_string(),
            PatchType::Merge | PatchType::Strategic | PatchType::Apply => {
                json!({ "b": value }).to_string()
            }
        }
    }

    // Every engine keeps the nesting limit: a current object and a patch at the limit build
    // a value at the limit; an object past it, or a patch past it, is refused as too deep.
    #[test]
    fn negative_zero_reaches_the_object_as_the_integer_zero() {
        let current = json!({"spec": {"replicas": 3, "ratio": 0.5}});
        let merged = apply(
            PatchType::Merge,
            current,
            br#"{"spec":{"replicas":-0,"ratio":0.0}}"#,
            Shape::untyped(),
        )
        .expect("applies");
        assert!(merged["spec"]["replicas"].is_u64(), "{merged}");
        assert!(merged["spec"]["ratio"].is_f64(), "{merged}");
        assert_eq!(merged, json!({"spec": {"replicas": 0, "ratio": 0.0}}));
    }

    #[test]
    fn every_engine_keeps_the_nesting_limit() {
        let schema = crate::schema::of::<k8s_openapi::api::core::v1::ConfigMap>().expect("schema");
        let kinds = [PatchType::Json, PatchType::Merge, PatchType::Strategic];
        for kind in kinds {
            for shape in [Shape::untyped(), Shape::of(&schema)] {
                let at_limit = json!({"a": nested(MAX_NESTING_DEPTH - 1)});
                // The patch's own wrapping takes levels: its value nests as deep as fits.
                let room = match kind {
                    PatchType::Json => MAX_NESTING_DEPTH - 2,
                    PatchType::Merge | PatchType::Strategic | PatchType::Apply => {
                        MAX_NESTING_DEPTH - 1
                    }
                };
                let patch = body(kind, nested(room));
                let got = apply(kind, at_limit.clone(), patch.as_bytes(), shape)
                    .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
                assert_eq!(nesting_depth(&got), MAX_NESTING_DEPTH, "{kind:?}");
                assert_eq!(got["a"], at_limit["a"], "{kind:?}");

                let past = json!({"a": nested(MAX_NESTING_DEPTH)});
                let got = apply(kind, past, b"{}", shape);
                assert!(
                    matches!(&got, Err(PatchError::NotApplicable(m)) if m.contains("nesting depth")),
                    "{kind:?}: {got:?}"
                );
                let patch = body(kind, nested(room + 1));
                let got = apply(kind, json!({}), patch.as_bytes(), shape);
                assert_eq!(
                    got,
                    Err(too_deep("the patch")),
                    "{kind:?}: a patch past the limit"
                );
            }
        }
    }

    #[test]
    fn nesting_is_counted_outside_strings() {
        let deep = "[".repeat(MAX_NESTING_DEPTH + 1);
        assert!(nests_past_limit(deep.as_bytes()));
        let quoted = format!("[\"{deep}\"]");
        assert!(!nests_past_limit(quoted.as_bytes()));
        let escaped = format!("[\"\\\"{deep}\"]");
        assert!(!nests_past_limit(escaped.as_bytes()));
        let shallow = "[]".repeat(1000);
        assert!(!nests_past_limit(shallow.as_bytes()));
    }

    // R-RES-114, R-RES-116, R-RES-117, R-RES-111
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
            (Some("application/apply-patch+yaml"), Some(PatchType::Apply)),
            (Some("application/apply-patch+cbor"), None),
            (Some("application/json"), None),
            (None, None),
        ] {
            assert_eq!(PatchType::from_content_type(ct), want, "{ct:?}");
        }
    }
}
