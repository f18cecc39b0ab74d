//! Tests of the configuration rules (table-driven, with Kubernetes' messages), of the mapping
//! of claims to users and of token verification with an in-memory issuer key.

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::Utc;
use jsonwebtoken::Algorithm;
use jsonwebtoken::EncodingKey;
use jsonwebtoken::Header;
use jsonwebtoken::jwk::JwkSet;
use serde_json::Value;
use serde_json::json;

use super::claims::map_claims;
use super::*;
use crate::flavor::Flavor;

const ISSUER: &str = "https://issuer.example";

fn parse(yaml: &str) -> AuthenticationConfiguration {
    AuthenticationConfiguration::parse(yaml, Flavor::Kubernetes).expect("parses")
}

fn messages(yaml: &str) -> Vec<String> {
    match parse(yaml).validate(&["https://sa.example".to_owned()], Flavor::Kubernetes) {
        Ok(_) => Vec::new(),
        Err(errors) => errors.iter().map(ToString::to_string).collect(),
    }
}

fn config(jwt: &str) -> String {
    format!(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\njwt:\n{jwt}"
    )
}

const MINIMAL: &str = "- issuer:
    url: https://issuer.example
    audiences: [a]
  claimMappings:
    username: {claim: sub, prefix: ''}
";

// R-ACC-032, R-ACC-034, R-ACC-038, R-ACC-039, R-ACC-040, R-ACC-042, R-ACC-045, R-ACC-046: the
// configuration file's rules, with Kubernetes' field paths and messages.
#[test]
fn configuration_rules_name_the_field_and_the_problem() {
    let cases: &[(&str, &str)] = &[
        (MINIMAL, ""),
        (
            "- issuer: {url: 'http://issuer.example', audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
            "jwt[0].issuer.url: Invalid value: \"http://issuer.example\": URL scheme must be https",
        ),
        (
            "- issuer: {url: 'https://u:p@issuer.example?x=1#f', audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
            "jwt[0].issuer.url: Invalid value: \"https://u:p@issuer.example?x=1#f\": URL must not contain a username or password",
        ),
        (
            "- issuer: {url: 'https://sa.example', audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
            "jwt[0].issuer.url: Invalid value: \"https://sa.example\": URL must not overlap with disallowed issuers: [https://sa.example]",
        ),
        (
            "- issuer: {url: 'https://issuer.example', discoveryURL: 'https://issuer.example/', audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
            "jwt[0].issuer.discoveryURL: Invalid value: \"https://issuer.example/\": discoveryURL must be different from URL",
        ),
        (
            "- issuer: {url: 'https://issuer.example'}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
            "jwt[0].issuer.audiences: Required value: at least one jwt[0].issuer.audiences is required",
        ),
        (
            "- issuer: {url: 'https://issuer.example', audiences: [a, b]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
            "jwt[0].issuer.audienceMatchPolicy: Invalid value: \"\": audienceMatchPolicy must be MatchAny for multiple audiences",
        ),
        (
            "- issuer: {url: 'https://issuer.example', audiences: [a], certificateAuthority: nope}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n",
            "jwt[0].issuer.certificateAuthority: Invalid value: \"<omitted>\": data does not contain any valid RSA or ECDSA certificates",
        ),
        (
            "- issuer: {url: 'https://issuer.example', audiences: [a]}\n  claimMappings: {username: {claim: sub}}\n",
            "jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing",
        ),
        (
            "- issuer: {url: 'https://issuer.example', audiences: [a]}\n  claimMappings: {username: {claim: sub, expression: claims.sub}}\n",
            "jwt[0].claimMappings.username: Invalid value: \"\": claim and expression can't both be set",
        ),
        (
            "- issuer: {url: 'https://issuer.example', audiences: [a]}\n  claimMappings: {}\n",
            "jwt[0].claimMappings.username: Required value: claim or expression is required",
        ),
        (
            "- issuer: {url: 'https://issuer.example', audiences: [a]}\n  claimMappings: {username: {expression: 'claims.email'}}\n",
            "jwt[0].claimMappings.username.expression: Invalid value: \"claims.email\": claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression",
        ),
        (
            "- issuer: {url: 'https://issuer.example', audiences: [a]}\n  claimMappings: {username: {expression: 'user.name'}}\n",
            "jwt[0].claimMappings.username.expression: Invalid value: \"user.name\": compilation failed: undeclared reference to 'user'",
        ),
        (
            "- issuer: {url: 'https://issuer.example', audiences: [a]}\n  claimMappings:\n    username: {claim: sub, prefix: ''}\n    extra: [{key: 'example.org/Foo', valueExpression: claims.sub}]\n",
            "jwt[0].claimMappings.extra[0].key: Invalid value: \"example.org/Foo\": key must be lowercase",
        ),
        (
            "- issuer: {url: 'https://issuer.example', audiences: [a]}\n  claimMappings:\n    username: {claim: sub, prefix: ''}\n    extra: [{key: 'x.kubernetes.io/foo', valueExpression: claims.sub}]\n",
            "jwt[0].claimMappings.extra[0].key: Invalid value: \"x.kubernetes.io/foo\": k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use",
        ),
        (
            "- issuer: {url: 'https://issuer.example', audiences: [a]}\n  claimMappings:\n    username: {claim: sub, prefix: ''}\n    extra: [{key: 'foo', valueExpression: claims.sub}]\n",
            "jwt[0].claimMappings.extra[0].key: Invalid value: \"foo\": must be a domain-prefixed path (such as \"acme.io/foo\")",
        ),
        (
            "- issuer: {url: 'https://issuer.example', audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{claim: hd, requiredValue: x, message: m}]\n",
            "jwt[0].claimValidationRules[0].message: Invalid value: \"m\": message can't be set when claim is set",
        ),
        (
            "- issuer: {url: 'https://issuer.example', audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  claimValidationRules: [{expression: 'claims.a', requiredValue: x}]\n",
            "jwt[0].claimValidationRules[0].requiredValue: Invalid value: \"x\": requiredValue can't be set when expression is set",
        ),
        (
            "- issuer: {url: 'https://issuer.example', audiences: [a]}\n  claimMappings: {username: {claim: sub, prefix: ''}}\n  userValidationRules: [{message: m}]\n",
            "jwt[0].userValidationRules[0].expression: Required value: expression is not specified",
        ),
    ];
    for (jwt, want) in cases {
        let got = messages(&config(jwt));
        if want.is_empty() {
            assert!(got.is_empty(), "{jwt}: {got:?}");
        } else {
            assert_eq!(
                got.first().map(String::as_str),
                Some(*want),
                "{jwt}: {got:?}"
            );
        }
    }
}

// R-ACC-031, R-ACC-032: issuer URLs are unique, at most 64 authenticators.
#[test]
fn issuers_are_unique_and_bounded() {
    let got = messages(&config(&format!("{MINIMAL}{MINIMAL}")));
    assert_eq!(
        got,
        vec!["jwt[1].issuer.url: Duplicate value: \"https://issuer.example\"".to_owned()]
    );
    let many: String = (0..65)
        .map(|i| MINIMAL.replace("issuer.example", &format!("issuer{i}.example")))
        .collect();
    assert_eq!(
        messages(&config(&many)),
        vec!["jwt: Invalid value: 65: must have at most 64 items".to_owned()]
    );
}

#[test]
fn anonymous_block_is_read_and_checked() {
    let text = "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\nanonymous:\n  enabled: true\n  conditions: [{path: /livez}, {path: /readyz}]\n";
    let settings = parse(text).anonymous_settings();
    assert_eq!(
        settings,
        Some(AnonymousSettings {
            enabled: true,
            paths: vec!["/livez".to_owned(), "/readyz".to_owned()],
        })
    );
    let disabled = text.replace("enabled: true", "enabled: false");
    assert_eq!(
        messages(&disabled),
        vec!["anonymous.conditions: Invalid value: \"[\\\"/livez\\\", \\\"/readyz\\\"]\": enabled should be set to true when conditions are defined".to_owned()]
    );
}

// R-ACC-030: the file's kind and versions, in YAML or JSON.
#[test]
fn other_kinds_versions_and_unknown_fields_are_refused() {
    let wrong = "apiVersion: apiserver.config.k8s.io/v2\nkind: AuthenticationConfiguration\n";
    assert!(AuthenticationConfiguration::parse(wrong, Flavor::Kubernetes).is_err());
    let unknown =
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nbogus: 1\n";
    assert!(AuthenticationConfiguration::parse(unknown, Flavor::Kubernetes).is_err());
    let json = r#"{"apiVersion":"apiserver.config.k8s.io/v1","kind":"AuthenticationConfiguration","jwt":[]}"#;
    assert!(AuthenticationConfiguration::parse(json, Flavor::Kubernetes).is_ok());
}

fn settings(jwt: &str) -> JwtSettings {
    parse(&config(jwt))
        .validate(&[], Flavor::Kubernetes)
        .expect("valid")
        .remove(0)
}

const MAPPED: &str = "- issuer: {url: 'https://issuer.example', audiences: [a]}
  claimMappings:
    username: {expression: \"'user:' + claims.sub\"}
    groups: {expression: 'claims.roles.map(r, \"g:\" + r)'}
    uid: {claim: oid}
    extra: [{key: 'example.org/tenant', valueExpression: 'claims.tenant'}]
  claimValidationRules:
  - {claim: hd, requiredValue: example.org}
  - {expression: 'claims.roles.size() > 0', message: 'needs a role'}
  userValidationRules:
  - {expression: \"!user.username.startsWith('user:system')\", message: 'no system users'}
";

// R-ACC-039, R-ACC-043, R-ACC-044, R-ACC-045, R-ACC-046: claims map to username, groups, uid
// and extra; claim and user validation rules are enforced with their messages.
#[test]
fn claims_map_to_the_user_and_rules_are_enforced() {
    let settings = settings(MAPPED);
    let claims = json!({"sub": "alice", "roles": ["dev", "ops"], "oid": "u-1", "tenant": "t1", "hd": "example.org", "jti": "j1"});
    let user = map_claims(
        &settings,
        claims.as_object().expect("object"),
        Flavor::Kubernetes,
    )
    .expect("maps");
    assert_eq!(user.name, "user:alice");
    assert_eq!(user.groups, vec!["g:dev", "g:ops"]);
    assert_eq!(user.uid, "u-1");
    assert_eq!(user.extra["example.org/tenant"], vec!["t1"]);
    assert_eq!(
        user.extra["authentication.kubernetes.io/credential-id"],
        vec!["JTI=j1"]
    );
    let refuse = |claims: Value| {
        map_claims(
            &settings,
            claims.as_object().expect("object"),
            Flavor::Kubernetes,
        )
        .expect_err("refused")
    };
    assert_eq!(
        refuse(json!({"sub": "a", "roles": ["x"], "oid": "u", "tenant": "t", "hd": "other"})),
        "oidc: required claim hd value does not match. Got = other, want = example.org"
    );
    assert_eq!(
        refuse(json!({"sub": "a", "roles": [], "oid": "u", "tenant": "t", "hd": "example.org"})),
        "oidc: error evaluating claim validation expression: validation expression 'claims.roles.size() > 0' failed: needs a role"
    );
    assert_eq!(
        refuse(
            json!({"sub": "system:x", "roles": ["x"], "oid": "u", "tenant": "t", "hd": "example.org"})
        ),
        "oidc: error evaluating user info validation rule: validation expression '!user.username.startsWith('user:system')' failed: no system users"
    );
}

// R-ACC-040, R-ACC-043: a claim user name and groups get their prefix (a single string is one
// group); an `email` user name requires a true `email_verified` when present.
#[test]
fn email_usernames_need_verified_email() {
    let settings = settings(
        "- issuer: {url: 'https://issuer.example', audiences: [a]}\n  claimMappings: {username: {claim: email, prefix: 'oidc:'}, groups: {claim: groups, prefix: 'o:'}}\n",
    );
    let map = |claims: Value| {
        map_claims(
            &settings,
            claims.as_object().expect("object"),
            Flavor::Kubernetes,
        )
    };
    let user = map(json!({"email": "a@x", "groups": "admins"})).expect("maps");
    assert_eq!(user.name, "oidc:a@x");
    assert_eq!(user.groups, vec!["o:admins"]);
    assert_eq!(
        map(json!({"email": "a@x", "email_verified": false})),
        Err("oidc: email not verified".to_owned())
    );
}

// R-ACC-041: an expression that yields an empty user name fails authentication.
#[test]
fn empty_usernames_fail() {
    let settings = settings(
        "- issuer: {url: 'https://issuer.example', audiences: [a]}\n  claimMappings: {username: {expression: 'claims.name'}}\n",
    );
    let claims = json!({"name": ""});
    assert_eq!(
        map_claims(
            &settings,
            claims.as_object().expect("object"),
            Flavor::Kubernetes
        ),
        Err("oidc: empty username via CEL expression is not allowed".to_owned())
    );
}

/// An ES256 key pair: the encoding key and its public JWK with `kid`.
fn es256_key(kid: &str) -> (EncodingKey, Value) {
    let pair = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("key");
    let encoding = EncodingKey::from_ec_pem(pair.serialize_pem().as_bytes()).expect("pem");
    let raw = pair.public_key_raw();
    let jwk = json!({
        "kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": kid,
        "x": URL_SAFE_NO_PAD.encode(&raw[1..33]),
        "y": URL_SAFE_NO_PAD.encode(&raw[33..65]),
    });
    (encoding, jwk)
}

struct StaticKeys(Arc<JwkSet>);

#[async_trait::async_trait]
impl KeySource for StaticKeys {
    async fn keys(&self, _refresh: bool) -> Result<Arc<JwkSet>, String> {
        Ok(self.0.clone())
    }
}

// R-ACC-037, R-ACC-125: signature, issuer, audience and expiry are verified; another issuer's
// token is left to the next authenticator.
#[tokio::test]
async fn tokens_are_verified_before_they_are_mapped() {
    let (key, jwk) = es256_key("k1");
    let (other_key, _) = es256_key("k1");
    let set: JwkSet = serde_json::from_value(json!({"keys": [jwk]})).expect("jwks");
    let authenticator = JwtAuthenticator::new(
        settings(MINIMAL),
        vec![Algorithm::ES256],
        Arc::new(StaticKeys(Arc::new(set))),
        Vec::new(),
    );
    let now = Utc::now().timestamp();
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some("k1".to_owned());
    let sign = |claims: Value, key: &EncodingKey| {
        jsonwebtoken::encode(&header, &claims, key).expect("signs")
    };
    let good = json!({"iss": ISSUER, "aud": "a", "sub": "alice", "exp": now + 60});
    let outcome = |token: String| {
        let authenticator = &authenticator;
        async move {
            authenticator
                .outcome(&token, Utc::now(), &[], Flavor::Kubernetes)
                .await
        }
    };
    match outcome(sign(good.clone(), &key)).await {
        TokenOutcome::Authenticated(user) => assert_eq!(user.user.name, "alice"),
        other => panic!("not authenticated: {other:?}"),
    }
    let mut expired = good.clone();
    expired["exp"] = json!(now - 10);
    assert!(
        matches!(outcome(sign(expired, &key)).await, TokenOutcome::Rejected(r) if r.contains("token is expired"))
    );
    let mut audience = good.clone();
    audience["aud"] = json!(["b"]);
    assert!(
        matches!(outcome(sign(audience, &key)).await, TokenOutcome::Rejected(r) if r.contains("expected audience"))
    );
    assert!(
        matches!(outcome(sign(good.clone(), &other_key)).await, TokenOutcome::Rejected(r) if r.contains("failed to verify signature"))
    );
    let mut other_issuer = good;
    other_issuer["iss"] = json!("https://elsewhere.example");
    assert_eq!(
        outcome(sign(other_issuer, &key)).await,
        TokenOutcome::NotMine
    );
}
