//! The rules of an `AuthenticationConfiguration` (Kubernetes'
//! `ValidateAuthenticationConfiguration`), worded and placed on field paths as Kubernetes
//! does, and the compiled [`JwtSettings`] a valid `jwt[]` entry becomes: every CEL
//! expression compiled here, once, never per request.

use std::collections::BTreeSet;
use std::sync::Arc;

use x509_parser::pem::Pem;

use super::config::AuthenticationConfiguration;
use super::config::ClaimValidationRule;
use super::config::Issuer;
use super::config::JwtAuthenticator;
use super::config::UserValidationRule;
use super::mappings;
use crate::cel::Program;
use crate::flavor::Flavor;
use crate::validation::FieldError;

/// The most JWT authenticators a configuration may have.
pub const MAX_JWT_AUTHENTICATORS: usize = 64;

/// The variable claim expressions read.
pub const CLAIMS: &str = "claims";
/// The variable user validation rules read.
pub const USER: &str = "user";

/// How one attribute of the user is found: a claim (with a prefix) or an expression.
#[derive(Debug, Clone)]
pub enum Mapping {
    /// The claim's value(s), each prefixed with `prefix`.
    Claim {
        /// The claim.
        claim: String,
        /// The prefix (may be empty).
        prefix: String,
    },
    /// The value of a compiled expression over `claims`.
    Expression(Arc<Program>),
}

/// A rule on the token's claims.
#[derive(Debug, Clone)]
pub enum ClaimRule {
    /// `claim` must be the string `value`.
    Required {
        /// The claim.
        claim: String,
        /// Its required value.
        value: String,
    },
    /// A compiled boolean expression over `claims`, with the message of its failure.
    Expression(Arc<Program>, String),
}

/// Where an issuer's tokens come from and whom they are for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuerSettings {
    /// The issuer URL (`iss`).
    pub url: String,
    /// The discovery document's URL when it is not under `url`.
    pub discovery_url: Option<String>,
    /// PEM CA bundle of the discovery and key endpoints (`None`: the host roots).
    pub certificate_authority: Option<String>,
    /// The audiences a token must have one of.
    pub audiences: Vec<String>,
}

impl IssuerSettings {
    /// Where the discovery document is read from.
    pub fn discovery_document_url(&self) -> String {
        match &self.discovery_url {
            Some(url) => url.clone(),
            None => format!(
                "{}/.well-known/openid-configuration",
                self.url.trim_end_matches('/')
            ),
        }
    }
}

/// One valid JWT authenticator, compiled.
#[derive(Debug, Clone)]
pub struct JwtSettings {
    /// The issuer.
    pub issuer: IssuerSettings,
    /// Rules on the claims, in order.
    pub claim_rules: Vec<ClaimRule>,
    /// The user name.
    pub username: Mapping,
    /// The groups, if mapped.
    pub groups: Option<Mapping>,
    /// The uid, if mapped.
    pub uid: Option<Mapping>,
    /// Extra attributes: key and compiled expression.
    pub extra: Vec<(String, Arc<Program>)>,
    /// Rules on the mapped user: compiled expression and message.
    pub user_rules: Vec<(Arc<Program>, String)>,
}

/// The anonymous settings of a configuration file: whether anonymous requests are allowed,
/// and the paths they are limited to (empty: all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnonymousSettings {
    /// Whether requests without credentials are let in.
    pub enabled: bool,
    /// The paths they may reach (none listed: every path).
    pub paths: Vec<String>,
}

impl AuthenticationConfiguration {
    /// Checks the whole configuration; `disallowed_issuers` are the service account issuers
    /// (no JWT authenticator may claim them). All errors are returned, or the compiled
    /// authenticators in order.
    pub fn validate(
        &self,
        disallowed_issuers: &[String],
        flavor: Flavor,
    ) -> Result<Vec<JwtSettings>, Vec<FieldError>> {
        let mut errors = Vec::new();
        if self.jwt.len() > MAX_JWT_AUTHENTICATORS {
            errors.push(FieldError::invalid(
                "jwt",
                self.jwt.len(),
                format!("must have at most {MAX_JWT_AUTHENTICATORS} items"),
            ));
        }
        let mut issuers = BTreeSet::new();
        let mut discovery_urls = BTreeSet::new();
        let mut compiled = Vec::new();
        for (i, jwt) in self.jwt.iter().enumerate() {
            let path = format!("jwt[{i}]");
            if let Some(settings) =
                validate_jwt(jwt, &path, disallowed_issuers, flavor, &mut errors)
            {
                compiled.push(settings);
            }
            if !issuers.insert(jwt.issuer.url.as_str()) {
                errors.push(FieldError::duplicate(
                    format!("{path}.issuer.url"),
                    jwt.issuer.url.as_str(),
                ));
            }
            let discovery = jwt.issuer.discovery_url.as_str();
            if !discovery.is_empty() && !discovery_urls.insert(discovery) {
                errors.push(FieldError::duplicate(
                    format!("{path}.issuer.discoveryURL"),
                    discovery,
                ));
            }
        }
        if let Some(anonymous) = &self.anonymous
            && !anonymous.enabled
            && !anonymous.conditions.is_empty()
        {
            let paths: Vec<&str> = anonymous
                .conditions
                .iter()
                .map(|c| c.path.as_str())
                .collect();
            errors.push(FieldError::invalid(
                "anonymous.conditions",
                format!("{paths:?}"),
                "enabled should be set to true when conditions are defined",
            ));
        }
        if errors.is_empty() {
            Ok(compiled)
        } else {
            Err(errors)
        }
    }

    /// The `anonymous` block, if the file has one.
    pub fn anonymous_settings(&self) -> Option<AnonymousSettings> {
        self.anonymous.as_ref().map(|a| AnonymousSettings {
            enabled: a.enabled,
            paths: a.conditions.iter().map(|c| c.path.clone()).collect(),
        })
    }
}

/// Checks one authenticator and compiles it when it is valid.
fn validate_jwt(
    jwt: &JwtAuthenticator,
    path: &str,
    disallowed_issuers: &[String],
    flavor: Flavor,
    errors: &mut Vec<FieldError>,
) -> Option<JwtSettings> {
    let before = errors.len();
    let issuer = validate_issuer(
        &jwt.issuer,
        &format!("{path}.issuer"),
        disallowed_issuers,
        errors,
    );
    let claim_rules = validate_claim_rules(
        &jwt.claim_validation_rules,
        &format!("{path}.claimValidationRules"),
        errors,
    );
    let mappings = mappings::validate_mappings(
        &jwt.claim_mappings,
        &jwt.claim_validation_rules,
        &format!("{path}.claimMappings"),
        flavor,
        errors,
    );
    let user_rules = validate_user_rules(
        &jwt.user_validation_rules,
        &format!("{path}.userValidationRules"),
        errors,
    );
    let (username, groups, uid, extra) = mappings?;
    (errors.len() == before).then_some(JwtSettings {
        issuer,
        claim_rules,
        username,
        groups,
        uid,
        extra,
        user_rules,
    })
}

fn validate_issuer(
    issuer: &Issuer,
    path: &str,
    disallowed_issuers: &[String],
    errors: &mut Vec<FieldError>,
) -> IssuerSettings {
    let url_path = format!("{path}.url");
    if issuer.url.is_empty() {
        errors.push(FieldError::required(&url_path, "reason"));
    } else {
        if disallowed_issuers.contains(&issuer.url) {
            let mut sorted = disallowed_issuers.to_vec();
            sorted.sort();
            errors.push(FieldError::invalid(
                &url_path,
                issuer.url.as_str(),
                format!(
                    "URL must not overlap with disallowed issuers: [{}]",
                    sorted.join(" ")
                ),
            ));
        }
        check_url(&issuer.url, &url_path, errors);
    }
    let discovery_path = format!("{path}.discoveryURL");
    let discovery = issuer.discovery_url.as_str();
    if !discovery.is_empty() {
        if !issuer.url.is_empty()
            && issuer.url.trim_end_matches('/') == discovery.trim_end_matches('/')
        {
            errors.push(FieldError::invalid(
                &discovery_path,
                discovery,
                "discoveryURL must be different from URL",
            ));
        }
        check_url(discovery, &discovery_path, errors);
    }
    let audiences_path = format!("{path}.audiences");
    let policy_path = format!("{path}.audienceMatchPolicy");
    let policy = issuer.audience_match_policy.as_str();
    if issuer.audiences.is_empty() {
        errors.push(FieldError::required(
            &audiences_path,
            format!("at least one {audiences_path} is required"),
        ));
    } else {
        let mut seen = BTreeSet::new();
        for (i, audience) in issuer.audiences.iter().enumerate() {
            if audience.is_empty() {
                errors.push(FieldError::required(format!("{audiences_path}[{i}]"), ""));
            }
            if !seen.insert(audience.as_str()) {
                errors.push(FieldError::duplicate(
                    format!("{audiences_path}[{i}]"),
                    audience.as_str(),
                ));
            }
        }
        if issuer.audiences.len() > 1 && policy != "MatchAny" {
            errors.push(FieldError::invalid(
                &policy_path,
                policy,
                "audienceMatchPolicy must be MatchAny for multiple audiences",
            ));
        }
        if issuer.audiences.len() == 1 && !policy.is_empty() && policy != "MatchAny" {
            errors.push(FieldError::invalid(
                &policy_path,
                policy,
                "audienceMatchPolicy must be empty or MatchAny for single audience",
            ));
        }
    }
    let ca = issuer.certificate_authority.as_str();
    if !ca.is_empty() && !has_certificates(ca) {
        errors.push(FieldError::invalid(
            format!("{path}.certificateAuthority"),
            "<omitted>",
            "data does not contain any valid RSA or ECDSA certificates",
        ));
    }
    IssuerSettings {
        url: issuer.url.clone(),
        discovery_url: (!discovery.is_empty()).then(|| discovery.to_owned()),
        certificate_authority: (!ca.is_empty()).then(|| ca.to_owned()),
        audiences: issuer.audiences.clone(),
    }
}

/// Whether `pem` holds at least one parseable certificate.
fn has_certificates(pem: &str) -> bool {
    Pem::iter_from_buffer(pem.as_bytes())
        .filter_map(Result::ok)
        .any(|p| p.label == "CERTIFICATE" && p.parse_x509().is_ok())
}

/// An issuer or discovery URL: https, without user, query or fragment.
fn check_url(url: &str, path: &str, errors: &mut Vec<FieldError>) {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let problems = [
        (scheme != "https", "URL scheme must be https"),
        (
            authority.contains('@'),
            "URL must not contain a username or password",
        ),
        (
            url.split('#').next().unwrap_or_default().contains('?'),
            "URL must not contain a query",
        ),
        (url.contains('#'), "URL must not contain a fragment"),
    ];
    for (found, detail) in problems {
        if found {
            errors.push(FieldError::invalid(path, url, detail));
        }
    }
}

/// Compiles `expression` over `variable`; a failure is an error on `path`.
pub(super) fn compile(
    expression: &str,
    variable: &str,
    path: &str,
    errors: &mut Vec<FieldError>,
) -> Option<Arc<Program>> {
    match Program::compile(expression, &[variable]) {
        Ok(program) => Some(Arc::new(program)),
        Err(error) => {
            errors.push(FieldError::invalid(path, expression, error.to_string()));
            None
        }
    }
}

fn validate_claim_rules(
    rules: &[ClaimValidationRule],
    path: &str,
    errors: &mut Vec<FieldError>,
) -> Vec<ClaimRule> {
    let mut claims = BTreeSet::new();
    let mut expressions = BTreeSet::new();
    let mut compiled = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        let path = format!("{path}[{i}]");
        match (rule.claim.is_empty(), rule.expression.is_empty()) {
            (false, false) => errors.push(FieldError::invalid(
                &path,
                rule.claim.as_str(),
                "claim and expression can't both be set",
            )),
            (true, true) => errors.push(FieldError::required(
                &path,
                "claim or expression is required",
            )),
            (false, true) => {
                if !rule.message.is_empty() {
                    errors.push(FieldError::invalid(
                        format!("{path}.message"),
                        rule.message.as_str(),
                        "message can't be set when claim is set",
                    ));
                }
                if !claims.insert(rule.claim.as_str()) {
                    errors.push(FieldError::duplicate(
                        format!("{path}.claim"),
                        rule.claim.as_str(),
                    ));
                }
                compiled.push(ClaimRule::Required {
                    claim: rule.claim.clone(),
                    value: rule.required_value.clone(),
                });
            }
            (true, false) => {
                if !rule.required_value.is_empty() {
                    errors.push(FieldError::invalid(
                        format!("{path}.requiredValue"),
                        rule.required_value.as_str(),
                        "requiredValue can't be set when expression is set",
                    ));
                }
                let expression_path = format!("{path}.expression");
                if !expressions.insert(rule.expression.as_str()) {
                    errors.push(FieldError::duplicate(
                        &expression_path,
                        rule.expression.as_str(),
                    ));
                    continue;
                }
                if let Some(program) = compile(&rule.expression, CLAIMS, &expression_path, errors) {
                    compiled.push(ClaimRule::Expression(program, rule.message.clone()));
                }
            }
        }
    }
    compiled
}

fn validate_user_rules(
    rules: &[UserValidationRule],
    path: &str,
    errors: &mut Vec<FieldError>,
) -> Vec<(Arc<Program>, String)> {
    let mut seen = BTreeSet::new();
    let mut compiled = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        let expression_path = format!("{path}[{i}].expression");
        if rule.expression.is_empty() {
            errors.push(FieldError::required(
                &expression_path,
                "expression is not specified",
            ));
            continue;
        }
        if !seen.insert(rule.expression.as_str()) {
            errors.push(FieldError::duplicate(
                &expression_path,
                rule.expression.as_str(),
            ));
            continue;
        }
        if let Some(program) = compile(&rule.expression, USER, &expression_path, errors) {
            compiled.push((program, rule.message.clone()));
        }
    }
    compiled
}
