//! The AdmissionReview a webhook is sent and the answer read back, checked as
//! kube-apiserver's `VerifyAdmissionResponse` checks it.

use std::collections::BTreeMap;

use base64::Engine;
use serde_json::Value;
use serde_json::json;

/// The most warnings one answer contributes (Kubernetes caps the whole response's warnings by
/// size; this bounds the work before that).
const MAX_WARNINGS: usize = 100;
/// The most audit annotations one answer contributes.
const MAX_AUDIT_ANNOTATIONS: usize = 100;

/// The body posted: `{"apiVersion": "admission.k8s.io/<version>", "kind": "AdmissionReview",
/// "request": request}`.
pub fn review_body(version: &str, request: &Value) -> Vec<u8> {
    let review = json!({
        "apiVersion": format!("admission.k8s.io/{version}"),
        "kind": "AdmissionReview",
        "request": request,
    });
    serde_json::to_vec(&review).unwrap_or_default()
}

/// What a webhook answered, checked.
#[derive(Debug, Default, PartialEq)]
pub struct Answer {
    /// `response.allowed`.
    pub allowed: bool,
    /// `response.status` when it refused.
    pub status: Option<Value>,
    /// The JSON Patch of `response.patch`, decoded from base64.
    pub patch: Option<Vec<u8>>,
    /// `response.warnings`.
    pub warnings: Vec<String>,
    /// `response.auditAnnotations`.
    pub audit_annotations: BTreeMap<String, String>,
}

/// The answer in `body` to the review `uid` sent in `version`, or why it is not a valid
/// answer (the message after `received invalid webhook response: `). `mutating`: a patch
/// is allowed.
pub fn read_answer(
    body: &[u8],
    version: &str,
    uid: &str,
    mutating: bool,
) -> Result<Answer, String> {
    let review: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    let api_version = review
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("");
    let kind = review.get("kind").and_then(Value::as_str).unwrap_or("");
    if version == "v1" && (api_version != "admission.k8s.io/v1" || kind != "AdmissionReview") {
        return Err(format!(
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {api_version}, Kind={kind}"
        ));
    }
    let Some(response) = review.get("response").filter(|r| r.is_object()) else {
        return Err("webhook response was absent".to_owned());
    };
    let text = |key: &str| response.get(key).and_then(Value::as_str).unwrap_or("");
    if version == "v1" && text("uid") != uid {
        return Err(format!(
            "expected response.uid={uid:?}, got {:?}",
            text("uid")
        ));
    }
    let patch = match text("patch") {
        "" => None,
        encoded => Some(
            base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map_err(|e| format!("response.patch is not base64: {e}"))?,
        ),
    };
    if patch.is_some() {
        match text("patchType") {
            "" if version == "v1" => {
                return Err("webhook returned response.patch but not response.patchType".to_owned());
            }
            "" | "JSONPatch" => {}
            other => {
                return Err(format!(
                    "webhook returned invalid response.patchType of {other:?}"
                ));
            }
        }
        if !mutating {
            return Err("validating webhook may not return a patch".to_owned());
        }
    }
    let warnings = (response
        .get("warnings")
        .and_then(Value::as_array)
        .into_iter()
        .flatten())
    .filter_map(Value::as_str)
    .take(MAX_WARNINGS)
    .map(str::to_owned)
    .collect();
    let audit_annotations = (response.get("auditAnnotations").and_then(Value::as_object))
        .into_iter()
        .flatten()
        .take(MAX_AUDIT_ANNOTATIONS)
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
        .collect();
    Ok(Answer {
        allowed: response
            .get("allowed")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        status: response.get("status").filter(|s| s.is_object()).cloned(),
        patch,
        warnings,
        audit_annotations,
    })
}

#[cfg(test)]
#[path = "review_tests.rs"]
mod tests;
