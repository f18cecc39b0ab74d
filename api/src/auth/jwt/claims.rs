//! From a verified token's claims to the user, as Kubernetes' JWT authenticator does it: the
//! user name, groups, uid and extra attributes mapped from claims or CEL expressions, the
//! `email_verified` rule, the claim validation rules, then the user validation rules. Every
//! failure is an `oidc: ...` reason that names no part of the token.

use std::collections::BTreeMap;

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::validate::CLAIMS;
use super::validate::ClaimRule;
use super::validate::JwtSettings;
use super::validate::Mapping;
use super::validate::USER;
use crate::auth::UserInfo;
use crate::cel::Program;
use crate::cel::evaluate;
use crate::flavor::Flavor;

/// The user `claims` map to under `settings`, or why the token is refused.
pub fn map_claims(
    settings: &JwtSettings,
    claims: &Map<String, Value>,
    flavor: Flavor,
) -> Result<UserInfo, String> {
    let document = Value::Object(claims.clone());
    let mut user = UserInfo {
        name: username(settings, claims, &document)?,
        ..UserInfo::default()
    };
    if let Some(groups) = &settings.groups {
        user.groups = groups_of(groups, claims, &document)?;
    }
    if let Some(uid) = &settings.uid {
        user.uid = uid_of(uid, claims, &document)?;
    }
    if let Some(Value::String(jti)) = claims.get("jti") {
        user.extra.insert(
            format!("authentication.{}/credential-id", flavor.label_domain()),
            vec![format!("JTI={jti}")],
        );
    }
    for (key, program) in &settings.extra {
        let values = run(program, CLAIMS, &document)
            .and_then(string_list)
            .map_err(|e| {
                format!(
                    "oidc: error evaluating extra claim expression: {}: {e}",
                    program.source()
                )
            })?;
        if !values.is_empty() {
            user.extra.insert(key.clone(), values);
        }
    }
    check_claim_rules(settings, claims, &document)?;
    check_user_rules(settings, &user)?;
    Ok(user)
}

fn run(program: &Program, variable: &str, value: &Value) -> Result<Value, String> {
    evaluate(program, &[(variable, value)]).map_err(|e| e.to_string())
}

fn username(
    settings: &JwtSettings,
    claims: &Map<String, Value>,
    document: &Value,
) -> Result<String, String> {
    match &settings.username {
        Mapping::Expression(program) => {
            let failed =
                |e: String| format!("oidc: error evaluating username claim expression: {e}");
            match run(program, CLAIMS, document).map_err(failed)? {
                Value::String(name) if name.is_empty() => {
                    Err("oidc: empty username via CEL expression is not allowed".to_owned())
                }
                Value::String(name) => Ok(name),
                _ => Err(failed(
                    "username claim expression must return a string".to_owned(),
                )),
            }
        }
        Mapping::Claim { claim, prefix } => {
            let name = match claims.get(claim) {
                Some(Value::String(name)) => name.clone(),
                Some(_) => {
                    return Err(format!(
                        "oidc: parse username claims {claim:?}: claim is not a string"
                    ));
                }
                None => {
                    return Err(format!(
                        "oidc: parse username claims {claim:?}: claim not present"
                    ));
                }
            };
            if claim == "email" {
                match claims.get("email_verified") {
                    None | Some(Value::Bool(true)) => {}
                    Some(Value::Bool(false)) => {
                        return Err("oidc: email not verified".to_owned());
                    }
                    Some(_) => {
                        return Err(
                            "oidc: parse 'email_verified' claim: claim is not a boolean".to_owned()
                        );
                    }
                }
            }
            Ok(format!("{prefix}{name}"))
        }
    }
}

fn groups_of(
    mapping: &Mapping,
    claims: &Map<String, Value>,
    document: &Value,
) -> Result<Vec<String>, String> {
    match mapping {
        Mapping::Claim { claim, prefix } => {
            let groups = match claims.get(claim) {
                None => return Ok(Vec::new()),
                Some(Value::String(group)) => vec![group.clone()],
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|g| g.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| {
                        format!(
                            "oidc: parse groups claim {claim:?}: not a string or a list of strings"
                        )
                    })?,
                Some(_) => {
                    return Err(format!(
                        "oidc: parse groups claim {claim:?}: not a string or a list of strings"
                    ));
                }
            };
            Ok(groups.into_iter().map(|g| format!("{prefix}{g}")).collect())
        }
        Mapping::Expression(program) => run(program, CLAIMS, document)
            .and_then(string_list)
            .map_err(|e| format!("oidc: error evaluating group claim expression: {e}")),
    }
}

fn uid_of(
    mapping: &Mapping,
    claims: &Map<String, Value>,
    document: &Value,
) -> Result<String, String> {
    match mapping {
        Mapping::Claim { claim, .. } => match claims.get(claim) {
            Some(Value::String(uid)) => Ok(uid.clone()),
            Some(_) => Err(format!(
                "oidc: parse uid claim {claim:?}: claim is not a string"
            )),
            None => Err(format!(
                "oidc: parse uid claim {claim:?}: claim not present"
            )),
        },
        Mapping::Expression(program) => {
            let failed = |e: String| format!("oidc: error evaluating uid claim expression: {e}");
            match run(program, CLAIMS, document).map_err(failed)? {
                Value::String(uid) => Ok(uid),
                _ => Err(failed(
                    "uid claim expression must return a string".to_owned(),
                )),
            }
        }
    }
}

/// A string or a list of strings as a list; empty strings and null count as absent.
fn string_list(value: Value) -> Result<Vec<String>, String> {
    let wrong = || "expression must return a string or a list of strings".to_owned();
    match value {
        Value::Null => Ok(Vec::new()),
        Value::String(s) => Ok((!s.is_empty()).then_some(s).into_iter().collect()),
        Value::Array(items) => items
            .into_iter()
            .filter(|v| v.as_str() != Some(""))
            .map(|v| match v {
                Value::String(s) => Ok(s),
                _ => Err(wrong()),
            })
            .collect(),
        _ => Err(wrong()),
    }
}

/// A boolean rule's verdict: `Ok` when true; the Kubernetes wording when false.
fn verdict(program: &Program, variable: &str, value: &Value, message: &str) -> Result<(), String> {
    match run(program, variable, value)? {
        Value::Bool(true) => Ok(()),
        Value::Bool(false) => Err(format!(
            "validation expression '{}' failed: {message}",
            program.source()
        )),
        _ => Err("validation expression must return a boolean".to_owned()),
    }
}

fn check_claim_rules(
    settings: &JwtSettings,
    claims: &Map<String, Value>,
    document: &Value,
) -> Result<(), String> {
    for rule in &settings.claim_rules {
        match rule {
            ClaimRule::Required { claim, value } => match claims.get(claim) {
                None => {
                    return Err(format!(
                        "oidc: required claim {claim} not present in ID token"
                    ));
                }
                Some(Value::String(found)) if found == value => {}
                Some(Value::String(found)) => {
                    return Err(format!(
                        "oidc: required claim {claim} value does not match. Got = {found}, want = {value}"
                    ));
                }
                Some(_) => return Err(format!("oidc: parse claim {claim}: claim is not a string")),
            },
            ClaimRule::Expression(program, message) => verdict(program, CLAIMS, document, message)
                .map_err(|e| format!("oidc: error evaluating claim validation expression: {e}"))?,
        }
    }
    Ok(())
}

fn check_user_rules(settings: &JwtSettings, user: &UserInfo) -> Result<(), String> {
    if settings.user_rules.is_empty() {
        return Ok(());
    }
    let extra: BTreeMap<&String, &Vec<String>> = user.extra.iter().collect();
    let document = json!({
        "username": user.name,
        "uid": user.uid,
        "groups": user.groups,
        "extra": extra,
    });
    for (program, message) in &settings.user_rules {
        verdict(program, USER, &document, message)
            .map_err(|e| format!("oidc: error evaluating user info validation rule: {e}"))?;
    }
    Ok(())
}
