//! A CRD's `spec.conversion` (Kubernetes' `validateCustomResourceConversion`): the strategy,
//! and for `Webhook` a client config (exactly one of a URL and a service) and the
//! ConversionReview versions, one of which this server must speak. Read from v1's
//! `conversion.webhook`, reported at the internal paths Kubernetes names.

use serde_json::Value;

use super::view::Spec;
use super::view::str_of;
use super::view::strings_of;
use crate::validation::FieldError;
use crate::validation::validate_dns1035_label;
use crate::validation::validate_webhook_service;
use crate::validation::validate_webhook_url;

/// The ConversionReview versions this server speaks.
const REVIEW_VERSIONS: &[&str] = &["v1", "v1beta1"];
/// Where the review versions of a conversion webhook are reported (the internal field).
const REVIEW_VERSIONS_PATH: &str = "spec.conversion.conversionReviewVersions";

/// `spec.conversion` (Kubernetes' `validateCustomResourceConversion`), read from v1's
/// `conversion.webhook` but reported at the internal paths.
pub fn validate_conversion(spec: &Spec<'_>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let Some(conversion) = spec.raw.get("conversion").filter(|c| !c.is_null()) else {
        return errs;
    };
    let strategy = str_of(conversion, "strategy");
    let webhook = conversion.get("webhook").filter(|w| !w.is_null());
    let client_config = webhook
        .and_then(|w| w.get("clientConfig"))
        .filter(|c| !c.is_null());
    let review_versions = webhook
        .map(|w| strings_of(w, "conversionReviewVersions"))
        .unwrap_or_default();
    match strategy {
        "" => errs.push(FieldError::required("spec.conversion.strategy", "")),
        "None" | "Webhook" => {}
        other => errs.push(FieldError::not_supported(
            "spec.conversion.strategy",
            other,
            &["None", "Webhook"],
        )),
    }
    if strategy == "Webhook" {
        match client_config {
            None => errs.push(FieldError::required(
                "spec.conversion.webhookClientConfig",
                "required when strategy is set to Webhook",
            )),
            Some(cc) => errs.extend(validate_client_config(cc)),
        }
        errs.extend(validate_review_versions(&review_versions));
    } else {
        if client_config.is_some() {
            errs.push(FieldError::forbidden(
                "spec.conversion.webhookClientConfig",
                "should not be set when strategy is not set to Webhook",
            ));
        }
        if !review_versions.is_empty() {
            errs.push(FieldError::forbidden(
                "spec.conversion.conversionReviewVersions",
                "should not be set when strategy is not set to Webhook",
            ));
        }
    }
    errs
}

/// A conversion webhook's client config: exactly one of `url` and `service`, each valid.
fn validate_client_config(cc: &Value) -> Vec<FieldError> {
    const PATH: &str = "spec.conversion.webhookClientConfig";
    let url = cc.get("url").and_then(Value::as_str);
    let service = cc.get("service").filter(|s| !s.is_null());
    match (url, service) {
        (Some(url), None) => validate_webhook_url(&format!("{PATH}.url"), url),
        (None, Some(service)) => validate_webhook_service(&format!("{PATH}.service"), service),
        _ => vec![FieldError::required(
            PATH,
            "exactly one of url or service is required",
        )],
    }
}

/// `conversionReviewVersions`: present, unique RFC 1035 labels.
fn validate_review_versions(versions: &[&str]) -> Vec<FieldError> {
    if versions.is_empty() {
        return vec![FieldError::required(REVIEW_VERSIONS_PATH, "")];
    }
    let mut errs = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, v) in versions.iter().enumerate() {
        let at = format!("{REVIEW_VERSIONS_PATH}[{i}]");
        if !seen.insert(*v) {
            errs.push(FieldError::invalid(at, *v, "duplicate version"));
            continue;
        }
        for msg in validate_dns1035_label(v) {
            errs.push(FieldError::invalid(&at, *v, msg));
        }
    }
    errs
}

/// A conversion webhook's review versions, if its strategy is `Webhook`.
fn review_versions(crd: &Value) -> Option<Vec<&str>> {
    let conversion = crd.pointer("/spec/conversion")?;
    if conversion.get("strategy").and_then(Value::as_str) != Some("Webhook") {
        return None;
    }
    Some(
        conversion
            .get("webhook")
            .map(|w| strings_of(w, "conversionReviewVersions"))
            .unwrap_or_default(),
    )
}

/// Whether `crd` names no review version or one this server speaks.
fn recognized_or_empty(crd: &Value) -> bool {
    review_versions(crd)
        .is_none_or(|v| v.is_empty() || v.iter().any(|v| REVIEW_VERSIONS.contains(v)))
}

/// A conversion webhook must accept a ConversionReview version this server speaks: always
/// on create, and on update unless the old object already named only unknown ones.
pub fn validate_recognized_review_version(crd: &Value, old: Option<&Value>) -> Vec<FieldError> {
    if old.is_some_and(|old| !recognized_or_empty(old)) || recognized_or_empty(crd) {
        return Vec::new();
    }
    let versions = review_versions(crd).unwrap_or_default();
    vec![FieldError::invalid(
        REVIEW_VERSIONS_PATH,
        Value::from(versions),
        format!(
            "must include at least one of {}",
            REVIEW_VERSIONS.join(", ")
        ),
    )]
}
