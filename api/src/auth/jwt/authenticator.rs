//! [`JwtAuthenticator`]: the bearer token authenticator of one JWT issuer. A token whose
//! unverified `iss` is another issuer's is not its own (the chain asks the next one); its own
//! tokens are verified (algorithm, signature with the issuer's keys, `exp`, `nbf`, `aud`) and
//! then mapped to a user ([`map_claims`]). The keys come from a [`KeySource`] (the node fetches
//! them from the issuer's discovery document and `jwks_uri`).

use std::sync::Arc;

use chrono::DateTime;
use chrono::Utc;
use jsonwebtoken::Algorithm;
use jsonwebtoken::DecodingKey;
use jsonwebtoken::Validation;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::jwk::JwkSet;
use serde_json::Map;
use serde_json::Value;

use super::claims::map_claims;
use super::validate::JwtSettings;
use crate::auth::AuthContext;
use crate::auth::TokenAuthenticator;
use crate::auth::TokenOutcome;
use crate::auth::TokenUser;
use crate::flavor::Flavor;

/// How far in the future `nbf` may be (clock skew), as OpenID Connect providers allow.
const NOT_BEFORE_LEEWAY_SECONDS: i64 = 5 * 60;

/// The signing algorithms a JWT authenticator may accept (`--oidc-signing-algs` values).
pub const SUPPORTED_ALGORITHMS: [&str; 9] = [
    "RS256", "RS384", "RS512", "ES256", "ES384", "PS256", "PS384", "PS512", "EdDSA",
];

/// Where an issuer's signing keys come from.
#[async_trait::async_trait]
pub trait KeySource: Send + Sync + 'static {
    /// The issuer's keys; with `refresh`, fetched again first (a token named an unknown key).
    /// The error says why no keys are available (the issuer is unreachable, its documents are
    /// malformed, ...).
    async fn keys(&self, refresh: bool) -> Result<Arc<JwkSet>, String>;
}

/// The bearer token authenticator of one issuer.
pub struct JwtAuthenticator {
    settings: JwtSettings,
    algorithms: Vec<Algorithm>,
    keys: Arc<dyn KeySource>,
    api_audiences: Vec<String>,
}

impl JwtAuthenticator {
    /// Verifies tokens of `settings`' issuer signed with one of `algorithms` by a key of
    /// `keys`. `api_audiences` (`--api-audiences`) are the audiences its users are taken to
    /// be for (ID tokens do not name the API): a review for other audiences refuses them.
    pub fn new(
        settings: JwtSettings,
        algorithms: Vec<Algorithm>,
        keys: Arc<dyn KeySource>,
        api_audiences: Vec<String>,
    ) -> Self {
        Self {
            settings,
            algorithms,
            keys,
            api_audiences,
        }
    }

    /// The issuer URL of this authenticator.
    pub fn issuer(&self) -> &str {
        &self.settings.issuer.url
    }

    /// The key that signed a token with `header`, fetching the keys again once when it is
    /// not among the known ones.
    async fn key_for(&self, header: &jsonwebtoken::Header) -> Result<Jwk, String> {
        for refresh in [false, true] {
            let keys = self.keys.keys(refresh).await?;
            let found = match &header.kid {
                Some(kid) => keys.find(kid).cloned(),
                None => keys.keys.first().cloned(),
            };
            if let Some(key) = found {
                return Ok(key);
            }
        }
        Err(
            "oidc: verify token: failed to verify signature: no key matches the token's key id"
                .to_owned(),
        )
    }

    /// The token's verified claims, or why it is refused.
    async fn verify(&self, token: &str, now: DateTime<Utc>) -> Result<Map<String, Value>, String> {
        let header =
            jsonwebtoken::decode_header(token).map_err(|e| format!("oidc: malformed jwt: {e}"))?;
        if !self.algorithms.contains(&header.alg) {
            let expected: Vec<String> = self.algorithms.iter().map(|a| format!("{a:?}")).collect();
            return Err(format!(
                "oidc: verify token: oidc: id token signed with unsupported algorithm, expected {expected:?} got \"{:?}\"",
                header.alg
            ));
        }
        let jwk = self.key_for(&header).await?;
        let key = DecodingKey::from_jwk(&jwk)
            .map_err(|e| format!("oidc: verify token: failed to verify signature: {e}"))?;
        let mut validation = Validation::new(header.alg);
        validation.required_spec_claims.clear();
        validation.validate_exp = false;
        validation.validate_nbf = false;
        validation.validate_aud = false;
        let claims = jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation)
            .map_err(|_| "oidc: verify token: failed to verify signature".to_owned())?
            .claims;
        self.check_times(&claims, now)?;
        self.check_audience(&claims)?;
        Ok(claims)
    }

    fn check_times(&self, claims: &Map<String, Value>, now: DateTime<Utc>) -> Result<(), String> {
        let seconds = |name: &str| claims.get(name).and_then(Value::as_f64).map(|s| s as i64);
        let expiry = seconds("exp").unwrap_or(i64::MIN);
        if expiry < now.timestamp() {
            let shown = DateTime::from_timestamp(expiry, 0)
                .map_or_else(|| "never".to_owned(), |t| t.to_rfc3339());
            return Err(format!(
                "oidc: verify token: oidc: token is expired (Token Expiry: {shown})"
            ));
        }
        if let Some(not_before) = seconds("nbf")
            && now.timestamp() + NOT_BEFORE_LEEWAY_SECONDS < not_before
        {
            let shown = DateTime::from_timestamp(not_before, 0)
                .map_or_else(|| not_before.to_string(), |t| t.to_rfc3339());
            return Err(format!(
                "oidc: verify token: oidc: current time {} before the nbf (not before) time: {shown}",
                now.to_rfc3339()
            ));
        }
        Ok(())
    }

    fn check_audience(&self, claims: &Map<String, Value>) -> Result<(), String> {
        let found: Vec<&str> = match claims.get("aud") {
            Some(Value::String(aud)) => vec![aud.as_str()],
            Some(Value::Array(auds)) => auds.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let wanted = &self.settings.issuer.audiences;
        if found.iter().any(|a| wanted.iter().any(|w| w == a)) {
            Ok(())
        } else {
            Err(format!(
                "oidc: verify token: oidc: expected audience in {wanted:?} got {found:?}"
            ))
        }
    }

    /// The audiences the user is for when `requested` are asked for: the API's, narrowed to
    /// the requested ones.
    fn audiences(&self, requested: &[String]) -> Result<Vec<String>, String> {
        if self.api_audiences.is_empty() || requested.is_empty() {
            return Ok(self.api_audiences.clone());
        }
        let both: Vec<String> = self
            .api_audiences
            .iter()
            .filter(|a| requested.contains(a))
            .cloned()
            .collect();
        if both.is_empty() {
            Err("token audiences are invalid for the target audiences".to_owned())
        } else {
            Ok(both)
        }
    }

    /// What `token` is at `now`, for `audiences`, in `flavor`'s names.
    pub(super) async fn outcome(
        &self,
        token: &str,
        now: DateTime<Utc>,
        audiences: &[String],
        flavor: Flavor,
    ) -> TokenOutcome {
        if unverified_issuer(token).as_deref() != Some(self.issuer()) {
            return TokenOutcome::NotMine;
        }
        let verified = self.verify(token, now).await.and_then(|claims| {
            let user = map_claims(&self.settings, &claims, flavor)?;
            let audiences = self.audiences(audiences)?;
            Ok(TokenUser { user, audiences })
        });
        match verified {
            Ok(user) => TokenOutcome::Authenticated(user),
            Err(reason) => TokenOutcome::Rejected(reason),
        }
    }
}

#[async_trait::async_trait]
impl TokenAuthenticator for JwtAuthenticator {
    async fn authenticate_token(&self, token: &str, context: &AuthContext<'_>) -> TokenOutcome {
        self.outcome(token, context.now, context.audiences, context.flavor)
            .await
    }
}

/// The unverified `iss` claim of a compact JWT, if it has one.
fn unverified_issuer(token: &str) -> Option<String> {
    let claims =
        jsonwebtoken::dangerous::insecure_decode_claims::<Map<String, Value>>(token).ok()?;
    claims.get("iss")?.as_str().map(str::to_owned)
}
