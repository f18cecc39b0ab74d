//! CertificateSigningRequests (Kubernetes' certificates strategies and condition validation):
//! a request is created with an empty status, the `approval` subresource changes only
//! `status.conditions`, `status` changes the status
//! but may not add or change an `Approved` or `Denied` condition, no update removes an
//! `Approved`, `Denied` or `Failed` condition, and an issued certificate never changes.

use serde_json::Value;
use serde_json::json;

use crate::registry::Strategy;
use crate::registry::strategy::take_status;
use crate::validation::FieldError;

/// Condition types no update may remove.
const FINAL: [&str; 3] = ["Approved", "Denied", "Failed"];

/// Condition types only `approval` may add or change.
const APPROVAL: [&str; 2] = ["Approved", "Denied"];

/// The path of the conditions.
const CONDITIONS: &str = "status.conditions";

/// The strategy of certificates/v1 CertificateSigningRequest.
pub struct CertificateSigningRequestStrategy;

/// The request's conditions.
fn conditions(csr: &Value) -> &[Value] {
    csr.pointer("/status/conditions")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The conditions of type `kind`.
fn of_type<'a>(csr: &'a Value, kind: &str) -> Vec<&'a Value> {
    (conditions(csr).iter())
        .filter(|c| c["type"].as_str() == Some(kind))
        .collect()
}

/// Whether `csr` already holds what the rules now refuse (kept for compatibility with
/// existing data, as Kubernetes does): both `Approved` and `Denied`, a repeated type, an
/// empty type.
fn tolerated(csr: &Value) -> (bool, bool, bool) {
    let types: Vec<&str> = (conditions(csr).iter())
        .map(|c| c["type"].as_str().unwrap_or_default())
        .collect();
    let both = types.contains(&"Approved") && types.contains(&"Denied");
    let repeated = (types.iter().enumerate()).any(|(i, t)| types[..i].contains(t));
    (both, repeated, types.contains(&""))
}

/// Kubernetes' `validateConditions` of `csr`, with what `old` tolerates.
fn validate_conditions(csr: &Value, old: &Value) -> Vec<FieldError> {
    let (both, repeated, empty) = tolerated(old);
    let mut errs = Vec::new();
    let (mut approved, mut denied) = (false, false);
    let mut seen: Vec<&str> = Vec::new();
    for (i, condition) in conditions(csr).iter().enumerate() {
        let path = format!("{CONDITIONS}[{i}]");
        let kind = condition["type"].as_str().unwrap_or_default();
        if kind.is_empty() && !empty {
            errs.push(FieldError::required(format!("{path}.type"), ""));
        }
        let allowed: &[&str] = match FINAL.contains(&kind) {
            true => &["True"],
            false => &["False", "True", "Unknown"],
        };
        match condition["status"].as_str().unwrap_or_default() {
            "" => errs.push(FieldError::required(format!("{path}.status"), "")),
            status if !allowed.contains(&status) => errs.push(FieldError::not_supported(
                format!("{path}.status"),
                status,
                allowed,
            )),
            _ => {}
        }
        approved |= kind == "Approved";
        denied |= kind == "Denied";
        if !both && APPROVAL.contains(&kind) && approved && denied {
            errs.push(FieldError::invalid(
                format!("{path}.type"),
                kind,
                "Approved and Denied conditions are mutually exclusive",
            ));
        }
        if !repeated && seen.contains(&kind) {
            errs.push(FieldError::duplicate(format!("{path}.type"), kind));
        }
        seen.push(kind);
    }
    errs
}

impl Strategy for CertificateSigningRequestStrategy {
    fn tracks_generation(&self) -> bool {
        true
    }

    /// A request is created undecided: whatever status it was sent with is dropped, so only
    /// `approval` can approve it.
    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(csr) = obj.as_object_mut() {
            csr.insert("status".to_owned(), json!({}));
        }
    }

    /// `approval` takes only the conditions; `status` the status.
    fn prepare_for_subresource_update(&self, subresource: &str, new: &mut Value, old: &Value) {
        match subresource {
            "approval" => {
                let conditions = new.pointer("/status/conditions").cloned();
                *new = old.clone();
                let status = (new.as_object_mut())
                    .map(|csr| csr.entry("status").or_insert_with(|| json!({})))
                    .and_then(Value::as_object_mut);
                match (status, conditions) {
                    (Some(status), Some(conditions)) => {
                        status.insert("conditions".to_owned(), conditions);
                    }
                    (Some(status), None) => {
                        status.remove("conditions");
                    }
                    (None, _) => {}
                }
            }
            "status" => take_status(new, old),
            _ => {}
        }
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = validate_conditions(new, old);
        for kind in FINAL {
            if of_type(new, kind).len() < of_type(old, kind).len() {
                errs.push(FieldError::forbidden(
                    CONDITIONS,
                    format!("updates may not remove a condition of type {kind:?}"),
                ));
            }
        }
        errs
    }

    /// A status writer (a signer) may not decide the approval, and may set the certificate
    /// only once.
    fn validate_status_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        for kind in APPROVAL {
            let (now, before) = (of_type(new, kind), of_type(old, kind));
            if now.len() > before.len() {
                errs.push(FieldError::forbidden(
                    CONDITIONS,
                    format!("updates may not add a condition of type {kind:?}"),
                ));
            } else if now.len() == before.len() && now != before {
                errs.push(FieldError::forbidden(
                    CONDITIONS,
                    format!("updates may not modify a condition of type {kind:?}"),
                ));
            }
        }
        let certificate = |csr: &Value| csr.pointer("/status/certificate").cloned();
        let before = certificate(old).filter(|c| c.as_str().is_some_and(|c| !c.is_empty()));
        if before.is_some() && certificate(new) != before {
            errs.push(FieldError::forbidden(
                "status.certificate",
                "updates may not modify existing certificate content",
            ));
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csr(conditions: Value) -> Value {
        json!({"spec": {"signerName": "example.com/signer", "request": "cmVx"},
               "status": {"conditions": conditions}})
    }

    fn approved() -> Value {
        json!({"type": "Approved", "status": "True", "reason": "Ok"})
    }

    fn rendered(errs: &[FieldError]) -> Vec<String> {
        errs.iter().map(FieldError::to_string).collect()
    }

    #[test]
    fn a_request_is_created_undecided() {
        let mut sent = csr(json!([approved()]));
        CertificateSigningRequestStrategy.prepare_for_create(&mut sent);
        assert_eq!(sent["status"], json!({}));
        assert_eq!(sent["spec"]["signerName"], "example.com/signer");
    }

    #[test]
    fn approval_takes_only_the_conditions() {
        let old = json!({"spec": {"signerName": "example.com/signer"}, "status": {}});
        let mut new = csr(json!([approved()]));
        new["spec"]["signerName"] = json!("example.com/other");
        new["status"]["certificate"] = json!("Y2VydA==");
        CertificateSigningRequestStrategy
            .prepare_for_subresource_update("approval", &mut new, &old);
        assert_eq!(new["spec"]["signerName"], "example.com/signer");
        assert_eq!(new["status"], json!({"conditions": [approved()]}));
    }

    #[test]
    fn conditions_follow_kubernetes_rules() {
        let denied = json!({"type": "Denied", "status": "True"});
        let errs = validate_conditions(&csr(json!([approved(), denied])), &json!({}));
        assert_eq!(
            rendered(&errs),
            [
                "status.conditions[1].type: Invalid value: \"Denied\": Approved and Denied conditions are mutually exclusive"
            ]
        );
        let errs = validate_conditions(
            &csr(json!([{"type": "Approved", "status": "False"}])),
            &json!({}),
        );
        assert_eq!(
            rendered(&errs),
            [
                "status.conditions[0].status: Unsupported value: \"False\": supported values: \"True\""
            ]
        );
        let twice =
            csr(json!([{"type": "Ready", "status": "True"}, {"type": "Ready", "status": "False"}]));
        assert_eq!(
            rendered(&validate_conditions(&twice, &json!({}))),
            ["status.conditions[1].type: Duplicate value: \"Ready\""]
        );
        assert!(
            validate_conditions(&twice, &twice).is_empty(),
            "tolerated when stored"
        );
    }

    #[test]
    fn updates_keep_final_conditions_and_signers_do_not_approve() {
        let strategy = CertificateSigningRequestStrategy;
        let old = csr(json!([approved()]));
        assert_eq!(
            rendered(&strategy.validate_update(&csr(json!([])), &old)),
            [
                "status.conditions: Forbidden: updates may not remove a condition of type \"Approved\""
            ]
        );
        let fresh = csr(json!([]));
        assert_eq!(
            rendered(&strategy.validate_status_update(&old, &fresh)),
            ["status.conditions: Forbidden: updates may not add a condition of type \"Approved\""]
        );
        let mut issued = old.clone();
        issued["status"]["certificate"] = json!("Y2VydA==");
        assert!(strategy.validate_status_update(&issued, &old).is_empty());
        let mut reissued = issued.clone();
        reissued["status"]["certificate"] = json!("b3RoZXI=");
        assert_eq!(
            rendered(&strategy.validate_status_update(&reissued, &issued)),
            ["status.certificate: Forbidden: updates may not modify existing certificate content"]
        );
    }
}
