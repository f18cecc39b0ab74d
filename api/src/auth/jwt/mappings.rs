//! The rules of `claimMappings` (user name, groups, uid, extra keys and values, the
//! `email_verified` rule), worded as Kubernetes words them, and their compiled form.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::config::ClaimMappings;
use super::config::ClaimValidationRule;
use super::validate::CLAIMS;
use super::validate::Mapping;
use super::validate::compile;
use crate::cel::Program;
use crate::flavor::Flavor;
use crate::validation::FieldError;
use crate::validation::validate_dns_subdomain;

/// The compiled user name, groups, uid and extra mappings.
pub(super) type Mapped = (
    Mapping,
    Option<Mapping>,
    Option<Mapping>,
    Vec<(String, Arc<Program>)>,
);

/// Checks `mappings` (with the claim rules, for the `email_verified` rule) and compiles
/// them when they are valid.
pub(super) fn validate_mappings(
    mappings: &ClaimMappings,
    claim_rules: &[ClaimValidationRule],
    path: &str,
    flavor: Flavor,
    errors: &mut Vec<FieldError>,
) -> Option<Mapped> {
    let before = errors.len();
    let username_path = format!("{path}.username");
    let username = &mappings.username;
    let username_mapping = match (username.claim.is_empty(), username.expression.is_empty()) {
        (false, false) => {
            errors.push(FieldError::invalid(
                &username_path,
                "",
                "claim and expression can't both be set",
            ));
            None
        }
        (true, true) => {
            errors.push(FieldError::required(
                &username_path,
                "claim or expression is required",
            ));
            None
        }
        (true, false) => {
            if let Some(prefix) = &username.prefix {
                errors.push(FieldError::invalid(
                    format!("{username_path}.prefix"),
                    prefix.as_str(),
                    "prefix can't be set when expression is set",
                ));
            }
            let program = compile(
                &username.expression,
                CLAIMS,
                &format!("{username_path}.expression"),
                errors,
            );
            program.map(Mapping::Expression)
        }
        (false, true) => match &username.prefix {
            Some(prefix) => Some(Mapping::Claim {
                claim: username.claim.clone(),
                prefix: prefix.clone(),
            }),
            None => {
                errors.push(FieldError::required(
                    format!("{username_path}.prefix"),
                    "prefix is required when claim is set. It can be set to an empty string to disable prefixing",
                ));
                None
            }
        },
    };
    let groups_path = format!("{path}.groups");
    let groups = &mappings.groups;
    let groups_mapping = match (groups.claim.is_empty(), groups.expression.is_empty()) {
        (false, false) => {
            errors.push(FieldError::invalid(
                &groups_path,
                "",
                "claim and expression can't both be set",
            ));
            None
        }
        (true, true) => None,
        (true, false) => {
            if let Some(prefix) = &groups.prefix {
                errors.push(FieldError::invalid(
                    format!("{groups_path}.prefix"),
                    prefix.as_str(),
                    "prefix can't be set when expression is set",
                ));
            }
            compile(
                &groups.expression,
                CLAIMS,
                &format!("{groups_path}.expression"),
                errors,
            )
            .map(Mapping::Expression)
        }
        (false, true) => match &groups.prefix {
            Some(prefix) => Some(Mapping::Claim {
                claim: groups.claim.clone(),
                prefix: prefix.clone(),
            }),
            None => {
                errors.push(FieldError::required(
                    format!("{groups_path}.prefix"),
                    "prefix is required when claim is set. It can be set to an empty string to disable prefixing",
                ));
                None
            }
        },
    };
    let uid_path = format!("{path}.uid");
    let uid = &mappings.uid;
    let uid_mapping = match (uid.claim.is_empty(), uid.expression.is_empty()) {
        (false, false) => {
            errors.push(FieldError::invalid(
                &uid_path,
                "",
                "claim and expression can't both be set",
            ));
            None
        }
        (true, true) => None,
        (true, false) => compile(
            &uid.expression,
            CLAIMS,
            &format!("{uid_path}.expression"),
            errors,
        )
        .map(Mapping::Expression),
        (false, true) => Some(Mapping::Claim {
            claim: uid.claim.clone(),
            prefix: String::new(),
        }),
    };
    let extra = validate_extra(mappings, path, flavor, errors);
    if let Some(Mapping::Expression(program)) = &username_mapping
        && program.reads(CLAIMS, "email")
    {
        let verified_in = |expression: &str| {
            Program::compile(expression, &[CLAIMS]).is_ok_and(|p| p.reads(CLAIMS, "email_verified"))
        };
        let verified = program.reads(CLAIMS, "email_verified")
            || extra.iter().any(|(_, p)| p.reads(CLAIMS, "email_verified"))
            || claim_rules
                .iter()
                .any(|r| !r.expression.is_empty() && verified_in(&r.expression));
        if !verified {
            errors.push(FieldError::invalid(
                format!("{username_path}.expression"),
                username.expression.as_str(),
                "claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression",
            ));
        }
    }
    let username_mapping = username_mapping?;
    (errors.len() == before).then_some((username_mapping, groups_mapping, uid_mapping, extra))
}

fn validate_extra(
    mappings: &ClaimMappings,
    path: &str,
    flavor: Flavor,
    errors: &mut Vec<FieldError>,
) -> Vec<(String, Arc<Program>)> {
    let mut keys = BTreeSet::new();
    let mut compiled = Vec::new();
    for (i, mapping) in mappings.extra.iter().enumerate() {
        let path = format!("{path}.extra[{i}]");
        let key_path = format!("{path}.key");
        let key = mapping.key.as_str();
        check_domain_prefixed_path(key, &key_path, errors);
        if key != key.to_lowercase() {
            errors.push(FieldError::invalid(&key_path, key, "key must be lowercase"));
        }
        let reserved = [flavor.group_domain(), flavor.label_domain()];
        let domain = key.split('/').next().unwrap_or_default();
        if reserved
            .iter()
            .any(|r| domain == *r || domain.ends_with(&format!(".{r}")))
        {
            errors.push(FieldError::invalid(
                &key_path,
                key,
                format!(
                    "{}, {} and their subdomains are reserved for {} use",
                    reserved[0],
                    reserved[1],
                    flavor.header_product()
                ),
            ));
        }
        if !keys.insert(key) {
            errors.push(FieldError::duplicate(&key_path, key));
            continue;
        }
        let value_path = format!("{path}.valueExpression");
        if mapping.value_expression.is_empty() {
            errors.push(FieldError::required(
                &value_path,
                "valueExpression is required",
            ));
            continue;
        }
        if let Some(program) = compile(&mapping.value_expression, CLAIMS, &value_path, errors) {
            compiled.push((key.to_owned(), program));
        }
    }
    compiled
}

/// Kubernetes' `IsDomainPrefixedPath`: `<DNS subdomain>/<path>`.
fn check_domain_prefixed_path(key: &str, path: &str, errors: &mut Vec<FieldError>) {
    if key.is_empty() {
        errors.push(FieldError::required(path, ""));
        return;
    }
    let Some((host, rest)) = key
        .split_once('/')
        .filter(|(h, r)| !h.is_empty() && !r.is_empty())
    else {
        errors.push(FieldError::invalid(
            path,
            key,
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        ));
        return;
    };
    for problem in validate_dns_subdomain(host) {
        errors.push(FieldError::invalid(path, host, problem));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c);
    if !rest.chars().all(allowed) {
        errors.push(FieldError::invalid(
            path,
            rest,
            format!("Invalid path: {rest}"),
        ));
    }
}
