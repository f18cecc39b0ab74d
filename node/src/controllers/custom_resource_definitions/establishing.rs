//! The `Established` condition (apiextensions-apiserver's establishing controller): a CRD
//! whose names are accepted and that is not established yet becomes established, `True` with
//! the reason `InitialNamesAccepted`, unless its conversion webhook's `caBundle` holds no
//! certificate (`False`, `InvalidCABundle`). Once true it stays, whatever its names do later.

use apiary_api::registry::builtin::custom_resource_definition_lifecycle as lifecycle;
use base64::Engine;
use lifecycle::Condition;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use serde_json::Value;

/// The condition of an established CRD.
pub const ESTABLISHED: Condition<'static> = Condition {
    kind: lifecycle::ESTABLISHED,
    status: "True",
    reason: "InitialNamesAccepted",
    message: "the initial names have been accepted",
};

/// The condition of a CRD whose conversion webhook cannot be trusted.
const INVALID_CA_BUNDLE: Condition<'static> = Condition {
    kind: lifecycle::ESTABLISHED,
    status: "False",
    reason: "InvalidCABundle",
    message: "The conversion webhook CABundle is invalid",
};

/// The most certificates of a `caBundle` looked at.
const MAX_CERTIFICATES: usize = 1024;

/// Whether the conversion webhook's `caBundle` of `crd` (base64 of PEM) is usable, as
/// Kubernetes' `ValidateCABundle` judges it: absent or empty, or holding at least one
/// certificate that parses.
fn ca_bundle_valid(crd: &Value) -> bool {
    let Some(bundle) = crd
        .pointer("/spec/conversion/webhook/clientConfig/caBundle")
        .and_then(Value::as_str)
        .filter(|b| !b.is_empty())
    else {
        return true;
    };
    let Ok(pem) = base64::engine::general_purpose::STANDARD.decode(bundle) else {
        return false;
    };
    CertificateDer::pem_slice_iter(&pem)
        .take(MAX_CERTIFICATES)
        .map_while(Result::ok)
        .any(|der| x509_parser::parse_x509_certificate(&der).is_ok())
}

/// `crd` established at `now` (or refused for an invalid `caBundle`), or `None` when its
/// names are not accepted or it already is.
pub fn establish(crd: &Value, now: &str) -> Option<Value> {
    if !lifecycle::is_true(crd, lifecycle::NAMES_ACCEPTED)
        || lifecycle::is_true(crd, lifecycle::ESTABLISHED)
    {
        return None;
    }
    let condition = match ca_bundle_valid(crd) {
        true => ESTABLISHED,
        false => INVALID_CA_BUNDLE,
    };
    let mut established = crd.clone();
    lifecycle::set(&mut established, &condition, now);
    (established != *crd).then_some(established)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    // A CRD is established once its names are accepted, and only then; once.
    #[test]
    fn established_once_names_are_accepted() {
        let mut crd = json!({"metadata": {"name": "a.b"}, "status": {"conditions": [
            {"type": "NamesAccepted", "status": "False", "reason": "PluralConflict",
                "message": "\"a\" is already in use", "lastTransitionTime": "t0"},
            {"type": "Established", "status": "False", "reason": "NotAccepted",
                "message": "not all names are accepted", "lastTransitionTime": "t0"},
        ]}});
        assert_eq!(establish(&crd, "t1"), None);
        crd["status"]["conditions"][0]["status"] = json!("True");
        let established = establish(&crd, "t1").expect("established");
        assert_eq!(
            lifecycle::find(&established, "Established"),
            Some(&json!({"type": "Established", "status": "True",
                "reason": "InitialNamesAccepted",
                "message": "the initial names have been accepted", "lastTransitionTime": "t1"}))
        );
        assert_eq!(establish(&established, "t2"), None);
    }

    // A conversion webhook whose caBundle holds no certificate keeps the CRD unestablished,
    // with Kubernetes' reason; a bundle with a certificate, or none, establishes it.
    #[test]
    fn an_invalid_ca_bundle_is_not_established() {
        let key = rcgen::KeyPair::generate().expect("key");
        let params = rcgen::CertificateParams::new(vec!["webhook".to_owned()]).expect("params");
        let pem = params.self_signed(&key).expect("certificate").pem();
        let encode = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
        let crd = |bundle: Value| {
            json!({"metadata": {"name": "a.b"},
                "spec": {"conversion": {"strategy": "Webhook",
                    "webhook": {"clientConfig": {"url": "https://w", "caBundle": bundle}}}},
                "status": {"conditions": [{"type": "NamesAccepted", "status": "True"}]}})
        };
        let refused = establish(&crd(json!(encode("not a certificate"))), "t").expect("set");
        assert_eq!(
            lifecycle::find(&refused, "Established"),
            Some(&json!({"type": "Established", "status": "False",
                "reason": "InvalidCABundle",
                "message": "The conversion webhook CABundle is invalid", "lastTransitionTime": "t"}))
        );
        assert_eq!(establish(&refused, "t2"), None, "reported once");
        assert_eq!(
            establish(&crd(json!("%%%")), "t")
                .map(|c| c["status"]["conditions"][1]["reason"].clone()),
            Some(json!("InvalidCABundle"))
        );
        for bundle in [json!(encode(&pem)), json!(""), Value::Null] {
            let established = establish(&crd(bundle), "t").expect("established");
            assert!(lifecycle::is_true(&established, "Established"));
        }
    }
}
