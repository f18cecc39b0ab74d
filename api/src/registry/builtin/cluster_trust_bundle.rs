//! ClusterTrustBundle (`certificates/v1`, `v1beta1`): Kubernetes' `ValidateClusterTrustBundle`
//! and its update rule. A bundle linked to a signer is named after it (`example.com/signer`
//! bundles are `example.com:signer:<name>`), so the name rule is the strategy's own; the
//! signer name is a domain and a path; the trust bundle holds only PEM `CERTIFICATE` blocks
//! without headers, each an X.509 CA certificate, none twice. The signer cannot change.

use serde_json::Value;

use super::fields::immutable;
use crate::registry::Strategy;
use crate::validation::FieldError;
use crate::validation::NameRule;
use crate::validation::validate_dns_label;
use crate::validation::validate_dns_subdomain;

/// The largest trust bundle, in bytes (Kubernetes' `MaxTrustBundleSize`).
const MAX_TRUST_BUNDLE_BYTES: usize = 1024 * 1024;
/// The longest domain part of a signer name.
const MAX_SIGNER_DOMAIN: usize = 253;
/// The longest signer name: a domain, `/` and a path of a label, `.` and a subdomain.
const MAX_SIGNER_NAME: usize = 253 + 1 + (253 + 63 + 1);
/// The value errors about a bundle print instead of the bundle.
const OMITTED: &str = "<value omitted>";

/// The strategy of ClusterTrustBundle.
pub struct ClusterTrustBundleStrategy;

fn text<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// The problems of `name` (a `generateName` prefix when `prefix`) for a bundle of `signer`
/// (Kubernetes' `ValidateClusterTrustBundleName`).
fn name_problems(signer: &str, name: &str, prefix: bool) -> Vec<String> {
    if signer.is_empty() {
        if name.contains(':') {
            return vec![
                "ClusterTrustBundle without signer name must not have \":\" in its name".to_owned(),
            ];
        }
        return NameRule::DnsSubdomain.check(name, prefix);
    }
    let required = format!("{}:", signer.replace('/', ":"));
    match name.strip_prefix(&required) {
        Some(rest) => NameRule::DnsSubdomain.check(rest, prefix),
        None => vec![format!(
            "ClusterTrustBundle for signerName {signer} must be named with prefix {required}"
        )],
    }
}

/// Kubernetes' `ValidateSignerName` of `signer` at `path`.
pub(super) fn signer_name_problems(path: &str, signer: &str) -> Vec<FieldError> {
    if signer.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let Some((domain, signer_path)) = signer.split_once('/').filter(|(_, p)| !p.contains('/'))
    else {
        return vec![FieldError::invalid(
            path,
            signer,
            "must be a fully qualified domain and path of the form 'example.com/signer-name'",
        )];
    };
    let mut errs = Vec::new();
    if domain.len() > MAX_SIGNER_DOMAIN {
        errs.push(FieldError::too_long(path, MAX_SIGNER_DOMAIN));
    }
    let labelled = |part: &str, check: fn(&str) -> Vec<String>, errs: &mut Vec<FieldError>| {
        if let Some((label, problems)) = (part.split('.'))
            .map(|l| (l, check(l)))
            .find(|(_, problems)| !problems.is_empty())
        {
            for problem in problems {
                let detail = format!("validating label \"{label}\": {problem}");
                errs.push(FieldError::invalid(path, part, detail));
            }
        }
    };
    labelled(domain, validate_dns_label, &mut errs);
    if domain.split('.').count() < 2 {
        errs.push(FieldError::invalid(
            path,
            domain,
            "should be a domain with at least two segments separated by dots",
        ));
    }
    labelled(signer_path, validate_dns_subdomain, &mut errs);
    if signer.len() > MAX_SIGNER_NAME {
        errs.push(FieldError::too_long(path, MAX_SIGNER_NAME));
    }
    errs
}

/// The problems of a trust bundle (Kubernetes' `validateTrustBundle`), at `path`.
fn bundle_problems(path: &str, bundle: &str) -> Vec<FieldError> {
    if bundle.len() > MAX_TRUST_BUNDLE_BYTES {
        return vec![FieldError::too_long(path, MAX_TRUST_BUNDLE_BYTES)];
    }
    let invalid = |detail: String| FieldError::invalid(path, OMITTED, detail);
    let blocks = pem::parse_many(bundle).unwrap_or_default();
    let mut errs = Vec::new();
    let mut anchors: Vec<(&[u8], Vec<usize>)> = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        if block.tag() != "CERTIFICATE" {
            errs.push(invalid(format!(
                "entry {i} has bad block type: {}",
                block.tag()
            )));
            continue;
        }
        if block.headers().iter().next().is_some() {
            errs.push(invalid(format!("entry {i} has PEM block headers")));
            continue;
        }
        match x509_parser::parse_x509_certificate(block.contents()) {
            Err(_) => {
                errs.push(invalid(format!("entry {i} does not parse as X.509")));
                continue;
            }
            Ok((_, certificate)) if !certificate.is_ca() => {
                errs.push(invalid(format!("entry {i} does not have the CA bit set")));
                continue;
            }
            Ok(_) => {}
        }
        match anchors.iter_mut().find(|(der, _)| *der == block.contents()) {
            Some((_, indices)) => indices.push(i),
            None => anchors.push((block.contents(), vec![i])),
        }
    }
    if !bundle.is_empty() && blocks.is_empty() {
        errs.push(invalid(
            "at least one trust anchor must be provided".to_owned(),
        ));
    }
    for (_, indices) in anchors.iter().filter(|(_, indices)| indices.len() > 1) {
        let listed: Vec<String> = indices.iter().map(usize::to_string).collect();
        errs.push(invalid(format!(
            "duplicate trust anchor (indices [{}])",
            listed.join(" ")
        )));
    }
    errs
}

impl Strategy for ClusterTrustBundleStrategy {
    fn name_rule(&self) -> NameRule {
        NameRule::Strategy
    }

    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let signer = text(obj, "/spec/signerName");
        let mut errs = Vec::new();
        for (field, prefix) in [("generateName", true), ("name", false)] {
            let name = text(obj, &format!("/metadata/{field}"));
            if !name.is_empty() {
                for problem in name_problems(signer, name, prefix) {
                    errs.push(FieldError::invalid(
                        format!("metadata.{field}"),
                        name,
                        problem,
                    ));
                }
            }
        }
        if !signer.is_empty() {
            errs.extend(signer_name_problems("spec.signerName", signer));
        }
        errs.extend(bundle_problems(
            "spec.trustBundle",
            text(obj, "/spec/trustBundle"),
        ));
        errs
    }

    fn validate_update(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        immutable(new, old, "/spec/signerName", "spec.signerName")
            .into_iter()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ca_pem(name: &str) -> String {
        let mut params = rcgen::CertificateParams::new(vec![name.to_owned()]).expect("params");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let key = rcgen::KeyPair::generate().expect("key");
        params.self_signed(&key).expect("signed").pem()
    }

    fn leaf_pem() -> String {
        let params = rcgen::CertificateParams::new(vec!["leaf".to_owned()]).expect("params");
        let key = rcgen::KeyPair::generate().expect("key");
        params.self_signed(&key).expect("signed").pem()
    }

    fn bundle(name: &str, signer: &str, pem: &str) -> Value {
        json!({"metadata": {"name": name}, "spec": {"signerName": signer, "trustBundle": pem}})
    }

    fn messages(obj: &Value) -> Vec<String> {
        (ClusterTrustBundleStrategy.validate(obj).iter())
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_signer_linked_bundle_is_named_after_its_signer() {
        let ca = ca_pem("ca");
        assert!(messages(&bundle("example.com:signer:one", "example.com/signer", &ca)).is_empty());
        assert!(messages(&bundle("plain", "", &ca)).is_empty());
        assert_eq!(
            messages(&bundle("other", "example.com/signer", &ca)),
            [
                "metadata.name: Invalid value: \"other\": ClusterTrustBundle for signerName example.com/signer must be named with prefix example.com:signer:"
            ]
        );
        assert_eq!(
            messages(&bundle("a:b", "", &ca)),
            [
                "metadata.name: Invalid value: \"a:b\": ClusterTrustBundle without signer name must not have \":\" in its name"
            ]
        );
    }

    #[test]
    fn signer_names_are_a_domain_and_a_path() {
        let ca = ca_pem("ca");
        assert_eq!(
            messages(&bundle("x", "nodomain", &ca))[1],
            "spec.signerName: Invalid value: \"nodomain\": must be a fully qualified domain and path of the form 'example.com/signer-name'"
        );
        let single = messages(&bundle("example:s:x", "example/s", &ca));
        assert_eq!(
            single,
            [
                "spec.signerName: Invalid value: \"example\": should be a domain with at least two segments separated by dots"
            ]
        );
    }

    #[test]
    fn trust_bundles_hold_distinct_ca_certificates_only() {
        let ca = ca_pem("ca");
        let path = "spec.trustBundle: Invalid value: \"<value omitted>\"";
        assert_eq!(
            messages(&bundle("b", "", &leaf_pem())),
            [format!("{path}: entry 0 does not have the CA bit set")]
        );
        assert_eq!(
            messages(&bundle("b", "", &format!("{ca}{ca}"))),
            [format!("{path}: duplicate trust anchor (indices [0 1])")]
        );
        let key = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
        assert_eq!(
            messages(&bundle("b", "", &format!("{ca}{key}"))),
            [format!("{path}: entry 1 has bad block type: PRIVATE KEY")]
        );
        assert_eq!(
            messages(&bundle("b", "", "not pem")),
            [format!(
                "{path}: at least one trust anchor must be provided"
            )]
        );
    }

    #[test]
    fn the_signer_cannot_change() {
        let ca = ca_pem("ca");
        let old = bundle("example.com:a:x", "example.com/a", &ca);
        let new = bundle("example.com:a:x", "example.com/b", &ca);
        assert_eq!(
            (ClusterTrustBundleStrategy
                .validate_update(&new, &old)
                .iter())
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
            ["spec.signerName: Invalid value: \"example.com/b\": field is immutable"]
        );
    }
}
