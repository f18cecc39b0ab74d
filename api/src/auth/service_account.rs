//! Service account tokens as bearer credentials (Kubernetes' `pkg/serviceaccount` JWT
//! authenticator, spec 001 "Service account"): a JWT of one of the accepted issuers, signed by
//! one of the verifying keys (`--service-account-key-file`), within its times (one minute of
//! leeway), meant for one of the asked audiences, whose service account (and the Pod, Secret
//! or Node it is bound to) still exists with the uid it names. Legacy Secret-based tokens
//! (issuer `<product>/serviceaccount`) authenticate while their Secret holds them, checked
//! against the API only with `--service-account-lookup`.

use std::collections::BTreeMap;

use chrono::DateTime;
use chrono::Duration;
use chrono::Utc;
use jsonwebtoken::Validation;
use serde_json::Value;

use super::AuthContext;
use super::TokenAuthenticator;
use super::TokenOutcome;
use super::TokenUser;
use super::UserInfo;
use crate::flavor::Flavor;
use crate::serviceaccount::VerifyingKey;

/// The group of every service account.
pub const SERVICE_ACCOUNTS: &str = "system:serviceaccounts";

/// The clock skew a token's times are allowed (go-jose's default leeway, which Kubernetes uses).
const LEEWAY_SECONDS: i64 = 60;

/// How long an object marked for deletion still backs its tokens (Kubernetes' grace).
const DELETION_GRACE_SECONDS: i64 = 60;

/// The issuer of legacy Secret-based tokens: `kubernetes/serviceaccount` in the Kubernetes
/// flavor.
pub fn legacy_issuer(flavor: Flavor) -> String {
    format!("{}/serviceaccount", flavor.api_service_name())
}

/// Authenticates service account JWTs.
pub struct ServiceAccountTokenAuthenticator {
    keys: Vec<VerifyingKey>,
    issuers: Vec<String>,
    api_audiences: Vec<String>,
    lookup: bool,
}

impl ServiceAccountTokenAuthenticator {
    /// Tokens of `issuers` (and legacy tokens) signed by one of `keys`; `api_audiences` are
    /// the audiences of tokens that name none (legacy tokens); `lookup` checks legacy tokens
    /// against their Secret and service account (bound tokens are always checked).
    pub fn new(
        keys: Vec<VerifyingKey>,
        issuers: Vec<String>,
        api_audiences: Vec<String>,
        lookup: bool,
    ) -> Self {
        Self {
            keys,
            issuers,
            api_audiences,
            lookup,
        }
    }

    /// The claims of `token` when one of the keys signed it.
    fn verified_claims(&self, token: &str) -> Option<Value> {
        let header = jsonwebtoken::decode_header(token).ok()?;
        let mut validation = Validation::new(header.alg);
        // Times and audiences are checked below, against the request's clock and audiences.
        validation.validate_exp = false;
        validation.validate_nbf = false;
        validation.validate_aud = false;
        validation.required_spec_claims.clear();
        self.keys
            .iter()
            .filter(|key| key.accepts(header.alg))
            .find_map(|key| jsonwebtoken::decode::<Value>(token, key.decoding(), &validation).ok())
            .map(|data| data.claims)
    }

    /// The token's audiences the context asks for; every asked one when the API has no
    /// audiences at all.
    fn audiences(&self, claims: &Value, context: &AuthContext<'_>) -> Result<Vec<String>, String> {
        let mut token_audiences: Vec<String> = match claims.get("aud") {
            Some(Value::String(one)) => vec![one.clone()],
            Some(Value::Array(many)) => many
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        if token_audiences.is_empty() {
            token_audiences = self.api_audiences.clone();
        }
        let matching: Vec<String> = context
            .audiences
            .iter()
            .filter(|a| token_audiences.contains(a))
            .cloned()
            .collect();
        if matching.is_empty() && !self.api_audiences.is_empty() {
            return Err(format!(
                "token audiences {token_audiences:?} is invalid for the target audiences {:?}",
                context.audiences
            ));
        }
        Ok(matching)
    }
}

#[async_trait::async_trait]
impl TokenAuthenticator for ServiceAccountTokenAuthenticator {
    async fn authenticate_token(&self, token: &str, context: &AuthContext<'_>) -> TokenOutcome {
        let Ok(unverified) = jsonwebtoken::dangerous::insecure_decode_claims::<Value>(token) else {
            return TokenOutcome::NotMine;
        };
        let issuer = unverified
            .get("iss")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let legacy = issuer == legacy_issuer(context.flavor);
        if !legacy && !self.issuers.iter().any(|i| i == issuer) {
            return TokenOutcome::NotMine;
        }
        let Some(claims) = self.verified_claims(token) else {
            return TokenOutcome::Rejected(
                "the token's signature matches no service account key".to_owned(),
            );
        };
        let checked = async {
            check_times(&claims, context.now)?;
            let audiences = self.audiences(&claims, context)?;
            let account = if legacy {
                legacy_account(&claims, token, self.lookup, context).await?
            } else {
                bound_account(&claims, context).await?
            };
            Ok::<_, String>(TokenUser {
                user: account.user_info(context.flavor),
                audiences,
            })
        };
        match checked.await {
            Ok(user) => TokenOutcome::Authenticated(user),
            Err(reason) => TokenOutcome::Rejected(reason),
        }
    }
}

/// `exp`, `nbf` and `iat` against `now`, with the leeway.
fn check_times(claims: &Value, now: DateTime<Utc>) -> Result<(), String> {
    let time = |name: &str| claims.get(name).and_then(Value::as_i64);
    let now = now.timestamp();
    if time("exp").is_some_and(|exp| now - LEEWAY_SECONDS > exp) {
        return Err("service account token has expired".to_owned());
    }
    if time("nbf").is_some_and(|nbf| now + LEEWAY_SECONDS < nbf) {
        return Err("service account token is not valid yet".to_owned());
    }
    if time("iat").is_some_and(|iat| now + LEEWAY_SECONDS < iat) {
        return Err("service account token is issued in the future".to_owned());
    }
    Ok(())
}

/// A name and uid out of the claims.
#[derive(Debug, Default)]
struct Reference {
    name: String,
    uid: String,
}

impl Reference {
    fn of(value: &Value) -> Option<Self> {
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        Some(Self {
            name: text("name").filter(|n| !n.is_empty())?,
            uid: text("uid").unwrap_or_default(),
        })
    }
}

/// The service account a token authenticates (upstream's `ServiceAccountInfo`).
#[derive(Debug, Default)]
struct Account {
    namespace: String,
    name: String,
    uid: String,
    pod: Option<Reference>,
    node: Option<Reference>,
    credential_id: Option<String>,
}

impl Account {
    /// The user, with the extra keys Kubernetes sets for bound tokens.
    fn user_info(&self, flavor: Flavor) -> UserInfo {
        let key = |name: &str| format!("authentication.{}/{name}", flavor.label_domain());
        let mut extra = BTreeMap::new();
        if let Some(pod) = self.pod.as_ref().filter(|p| !p.uid.is_empty()) {
            extra.insert(key("pod-name"), vec![pod.name.clone()]);
            extra.insert(key("pod-uid"), vec![pod.uid.clone()]);
        }
        if let Some(id) = &self.credential_id {
            extra.insert(key("credential-id"), vec![id.clone()]);
        }
        if let Some(node) = &self.node {
            extra.insert(key("node-name"), vec![node.name.clone()]);
            if !node.uid.is_empty() {
                extra.insert(key("node-uid"), vec![node.uid.clone()]);
            }
        }
        UserInfo {
            name: format!("system:serviceaccount:{}:{}", self.namespace, self.name),
            uid: self.uid.clone(),
            groups: vec![
                SERVICE_ACCOUNTS.to_owned(),
                format!("{SERVICE_ACCOUNTS}:{}", self.namespace),
            ],
            extra,
        }
    }
}

/// The account of a TokenRequest token: the private claims name it (and what it is bound
/// to); each must still exist with the uid the token names.
async fn bound_account(claims: &Value, context: &AuthContext<'_>) -> Result<Account, String> {
    let private = claims
        .get(context.flavor.label_domain())
        .ok_or("service account token claims are missing")?;
    let namespace = private
        .get("namespace")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or("service account token has no namespace")?;
    let account = private
        .get("serviceaccount")
        .and_then(Reference::of)
        .ok_or("service account token does not name a service account")?;
    let subject = format!("system:serviceaccount:{namespace}:{}", account.name);
    if claims.get("sub").and_then(Value::as_str) != Some(subject.as_str()) {
        return Err("token does not name a service account".to_owned());
    }
    let pod = private.get("pod").and_then(Reference::of);
    let secret = private.get("secret").and_then(Reference::of);
    let node = private.get("node").and_then(Reference::of);
    let current =
        |resource, namespace, reference| still_there(context, resource, namespace, reference);
    current("serviceaccounts", namespace, &account).await?;
    if let Some(pod) = &pod {
        current("pods", namespace, pod).await?;
    }
    if let Some(secret) = &secret {
        current("secrets", namespace, secret).await?;
    }
    if let (Some(node), None) = (&node, &pod) {
        current("nodes", "", node).await?;
    }
    Ok(Account {
        namespace: namespace.to_owned(),
        name: account.name,
        uid: account.uid,
        pod,
        node,
        credential_id: claims
            .get("jti")
            .and_then(Value::as_str)
            .filter(|j| !j.is_empty())
            .map(|jti| format!("JTI={jti}")),
    })
}

/// The account of a legacy Secret-based token; with `lookup`, its Secret must still hold it
/// and its service account still exist with the uid it names.
async fn legacy_account(
    claims: &Value,
    token: &str,
    lookup: bool,
    context: &AuthContext<'_>,
) -> Result<Account, String> {
    let prefix = format!("{}/serviceaccount/", context.flavor.label_domain());
    let claim = |name: &str| {
        claims
            .get(format!("{prefix}{name}"))
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| format!("token does not have a {name} claim"))
    };
    let namespace = claim("namespace")?;
    let secret = claim("secret.name")?;
    let name = claim("service-account.name")?;
    let uid = claim("service-account.uid")?;
    let subject = format!("system:serviceaccount:{namespace}:{name}");
    if claims.get("sub").and_then(Value::as_str) != Some(subject.as_str()) {
        return Err("token does not name a service account".to_owned());
    }
    if lookup {
        let invalidated = "token has been invalidated".to_owned();
        let stored = context
            .stored("", "v1", "secrets", &namespace, &secret)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| invalidated.clone())?;
        let held = stored
            .pointer("/data/token")
            .and_then(Value::as_str)
            .and_then(|b| base64::Engine::decode(&base64::prelude::BASE64_STANDARD, b).ok());
        if held.as_deref() != Some(token.as_bytes()) || being_deleted(&stored, context.now) {
            return Err(invalidated);
        }
        let account = Reference {
            name: name.clone(),
            uid: uid.clone(),
        };
        still_there(context, "serviceaccounts", &namespace, &account).await?;
    }
    Ok(Account {
        namespace,
        name,
        uid,
        ..Account::default()
    })
}

/// Whether `object` was marked for deletion longer ago than the grace.
fn being_deleted(object: &Value, now: DateTime<Utc>) -> bool {
    object
        .pointer("/metadata/deletionTimestamp")
        .and_then(Value::as_str)
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .is_some_and(|t| t < now - Duration::seconds(DELETION_GRACE_SECONDS))
}

/// The stored `resource` `namespace/name` the token names exists, with its uid, and is not
/// being deleted.
async fn still_there(
    context: &AuthContext<'_>,
    resource: &str,
    namespace: &str,
    reference: &Reference,
) -> Result<(), String> {
    let what = match resource {
        "serviceaccounts" => "service account",
        "pods" => "pod",
        "secrets" => "secret",
        _ => "node",
    };
    let who = if namespace.is_empty() {
        reference.name.clone()
    } else {
        format!("{namespace}/{}", reference.name)
    };
    let deleted = || format!("{what} {who} has been deleted");
    let stored = context
        .stored("", "v1", resource, namespace, &reference.name)
        .await
        .map_err(|e| format!("{what} {who} cannot be read: {e}"))?
        .ok_or_else(deleted)?;
    let uid = stored
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if uid != reference.uid {
        return Err(format!(
            "{what} UID ({uid}) does not match claim ({})",
            reference.uid
        ));
    }
    if being_deleted(&stored, context.now) {
        return Err(deleted());
    }
    Ok(())
}
