//! The authentication webhook (spec 001 "Webhook token authentication", R-ACC-008..015,
//! R-ACC-094, R-ACC-126, R-ACC-127): a bearer token no earlier method recognised is POSTed as
//! a JSON `TokenReview` (`v1` or `v1beta1`, `--authentication-token-webhook-version`) to the
//! server of `--authentication-token-webhook-config-file` (a kubeconfig, read by the audit
//! webhook's TLS client), and its answer, decoded in the version sent, decides it. Answers are
//! cached for `--authentication-token-webhook-cache-ttl` under a SHA-256 digest of the token and
//! the audiences, in a bounded cache. As kube-apiserver does, each post is bounded by 30 s and
//! retried with exponential backoff (500 ms, times 1.5, five attempts) when the connection
//! fails or the server answers 429 or 5xx. Neither the token nor the webhook's `status.error`
//! reaches the client: a failure is a 401 with the generic message, the reason is logged at
//! debug level.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use apiary_api::Flavor;
use apiary_api::auth::AuthContext;
use apiary_api::auth::TokenAuthenticator;
use apiary_api::auth::TokenOutcome;
use apiary_api::auth::TokenUser;
use apiary_api::auth::UserInfo;
use http::StatusCode;
use serde::Deserialize;
use serde::Deserializer;
use serde::Serialize;
use sha2::Digest;
use sha2::Sha256;

use crate::answer_cache::AnswerCache;
use crate::audit::webhook::POST_TIMEOUT;
use crate::audit::webhook::TlsWebhook;

/// The wait before the first retry (kube-apiserver's webhook retry backoff); each next wait is [`BACKOFF_FACTOR`] times longer.
pub const INITIAL_BACKOFF: Duration = Duration::from_millis(500);

/// How much longer each retry waits than the one before.
const BACKOFF_FACTOR: f64 = 1.5;

/// The most posts of one review.
const ATTEMPTS: u32 = 5;

/// The `TokenReview` version sent (`--authentication-token-webhook-version`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReviewVersion {
    /// `v1`.
    V1,
    /// `v1beta1`, kube-apiserver's default.
    #[default]
    V1beta1,
}

impl ReviewVersion {
    /// The version named `name` (`v1` or `v1beta1`).
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "v1" => Some(Self::V1),
            "v1beta1" => Some(Self::V1beta1),
            _ => None,
        }
    }

    /// The version's name (`v1`, `v1beta1`).
    pub fn name(self) -> &'static str {
        match self {
            Self::V1 => "v1",
            Self::V1beta1 => "v1beta1",
        }
    }
}

/// Sends one JSON body to the webhook server and returns its answer's status and body.
#[async_trait::async_trait]
pub trait ReviewPoster: Send + Sync + 'static {
    /// Posts `body` once.
    async fn post(&self, body: Vec<u8>) -> Result<(StatusCode, Vec<u8>), String>;
}

#[async_trait::async_trait]
impl ReviewPoster for TlsWebhook {
    async fn post(&self, body: Vec<u8>) -> Result<(StatusCode, Vec<u8>), String> {
        self.exchange(body).await
    }
}

/// Posts `body` through `poster` until an answer that is not worth retrying (the connection
/// failed, or the server answered 429 or 5xx, are worth it), at most [`ATTEMPTS`] times, the
/// first retry after `first_backoff`, each post bounded by `timeout`; the answer's body when
/// it is a success. Shared by the authentication and the authorization webhooks.
pub async fn post_with_retries(
    poster: &dyn ReviewPoster,
    body: Vec<u8>,
    first_backoff: Duration,
    timeout: Duration,
) -> Result<Vec<u8>, String> {
    let mut wait = first_backoff;
    let mut attempt = 1;
    loop {
        let answer = tokio::time::timeout(timeout, poster.post(body.clone()))
            .await
            .unwrap_or_else(|_| Err(format!("no answer within {timeout:?}")));
        let retry = match &answer {
            Ok((status, _)) => *status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error(),
            Err(_) => true,
        };
        if !retry || attempt == ATTEMPTS {
            return match answer {
                Ok((status, body)) if status.is_success() => Ok(body),
                Ok((status, _)) => Err(format!("the webhook answered {status}")),
                Err(error) => Err(error),
            };
        }
        tokio::time::sleep(wait).await;
        wait = wait.mul_f64(BACKOFF_FACTOR);
        attempt += 1;
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Review<'a> {
    api_version: &'a str,
    kind: &'static str,
    spec: ReviewSpec<'a>,
}

#[derive(Serialize)]
struct ReviewSpec<'a> {
    token: &'a str,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    audiences: &'a [String],
}

/// The part of the answer that counts: its version and status (its `spec` is ignored,
/// R-ACC-015).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Reply {
    #[serde(default)]
    api_version: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    status: ReplyStatus,
}

#[derive(Default, Deserialize)]
struct ReplyStatus {
    #[serde(default, deserialize_with = "nullable")]
    authenticated: bool,
    #[serde(default, deserialize_with = "nullable")]
    user: ReplyUser,
    #[serde(default, deserialize_with = "nullable")]
    audiences: Vec<String>,
    #[serde(default, deserialize_with = "nullable")]
    error: String,
}

#[derive(Default, Deserialize)]
struct ReplyUser {
    #[serde(default, deserialize_with = "nullable")]
    username: String,
    #[serde(default, deserialize_with = "nullable")]
    uid: String,
    #[serde(default, deserialize_with = "nullable")]
    groups: Vec<String>,
    #[serde(default, deserialize_with = "nullable")]
    extra: BTreeMap<String, Vec<String>>,
}

/// A field Go may write as `null`: its default then.
fn nullable<'de, D: Deserializer<'de>, T: Default + Deserialize<'de>>(
    deserializer: D,
) -> Result<T, D::Error> {
    Option::<T>::deserialize(deserializer).map(Option::unwrap_or_default)
}

/// The authentication webhook as a [`TokenAuthenticator`].
pub struct TokenWebhook {
    poster: Arc<dyn ReviewPoster>,
    api_version: String,
    implicit_audiences: Vec<String>,
    ttl: Duration,
    first_backoff: Duration,
    cache: AnswerCache<TokenOutcome>,
}

impl TokenWebhook {
    /// The webhook of the kubeconfig at `config_file`; see [`TokenWebhook::new`].
    pub fn from_kubeconfig(
        config_file: &Path,
        flavor: Flavor,
        version: ReviewVersion,
        api_audiences: Vec<String>,
        ttl: Duration,
    ) -> Result<Self, String> {
        let client = TlsWebhook::from_kubeconfig(config_file)?;
        Ok(Self::new(
            Arc::new(client),
            flavor,
            version,
            api_audiences,
            ttl,
        ))
    }

    /// Reviews tokens through `poster` in `version` of `flavor`'s authentication group; a
    /// token is meant for `api_audiences` unless the review asks for others; answers are
    /// kept for `ttl` (zero: not kept).
    pub fn new(
        poster: Arc<dyn ReviewPoster>,
        flavor: Flavor,
        version: ReviewVersion,
        api_audiences: Vec<String>,
        ttl: Duration,
    ) -> Self {
        Self {
            poster,
            api_version: format!(
                "authentication.{}/{}",
                flavor.group_domain(),
                version.name()
            ),
            implicit_audiences: api_audiences,
            ttl,
            first_backoff: INITIAL_BACKOFF,
            cache: AnswerCache::default(),
        }
    }

    /// What the webhook says of `token` for `wanted` audiences (empty: the API's).
    async fn review(&self, token: &str, wanted: &[String]) -> Result<TokenOutcome, String> {
        let wanted = if wanted.is_empty() {
            self.implicit_audiences.as_slice()
        } else {
            wanted
        };
        let body = serde_json::to_vec(&Review {
            api_version: &self.api_version,
            kind: "TokenReview",
            spec: ReviewSpec {
                token,
                audiences: wanted,
            },
        })
        .map_err(|_| "the TokenReview could not be encoded".to_owned())?;
        let answer = self.post(body).await?;
        let reply: Reply = serde_json::from_slice(&answer).map_err(|e| {
            format!(
                "the answer is not a TokenReview (line {}, column {})",
                e.line(),
                e.column()
            )
        })?;
        if let Some(version) = reply.api_version.filter(|v| *v != self.api_version) {
            return Err(format!(
                "the answer is a {version} TokenReview, not {}",
                self.api_version
            ));
        }
        let status = reply.status;
        let mut audiences = Vec::new();
        if !wanted.is_empty() {
            let got = if status.audiences.is_empty() {
                &self.implicit_audiences
            } else {
                &status.audiences
            };
            audiences = wanted.iter().filter(|a| got.contains(a)).cloned().collect();
            if audiences.is_empty() {
                return Ok(TokenOutcome::NotMine);
            }
        }
        if !status.authenticated {
            return Ok(if status.error.is_empty() {
                TokenOutcome::NotMine
            } else {
                // A webhook may quote the token in its error; the reason is logged, so not it.
                let error = status.error.replace(token, "[token]");
                TokenOutcome::Rejected(format!("the authentication webhook: {error}"))
            });
        }
        if status.user.username.is_empty() {
            return Ok(TokenOutcome::Rejected(
                "the authentication webhook authenticated a token without a username".to_owned(),
            ));
        }
        Ok(TokenOutcome::Authenticated(TokenUser {
            user: UserInfo {
                name: status.user.username,
                uid: status.user.uid,
                groups: status.user.groups,
                extra: status.user.extra,
            },
            audiences,
        }))
    }

    /// Posts `body` as [`post_with_retries`] does, each post bounded by [`POST_TIMEOUT`].
    async fn post(&self, body: Vec<u8>) -> Result<Vec<u8>, String> {
        post_with_retries(self.poster.as_ref(), body, self.first_backoff, POST_TIMEOUT).await
    }
}

/// The cache key of `token` for `audiences`: a digest, so the cache holds no token.
fn cache_key(token: &str, audiences: &[String]) -> [u8; 32] {
    let mut hash = Sha256::new();
    for part in std::iter::once(token).chain(audiences.iter().map(String::as_str)) {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part.as_bytes());
    }
    hash.finalize().into()
}

#[async_trait::async_trait]
impl TokenAuthenticator for TokenWebhook {
    async fn authenticate_token(&self, token: &str, context: &AuthContext<'_>) -> TokenOutcome {
        self.decide(token, context.audiences).await
    }
}

impl TokenWebhook {
    /// The cached answer for `token` and `audiences`, else the webhook's (then cached unless
    /// the webhook failed).
    async fn decide(&self, token: &str, audiences: &[String]) -> TokenOutcome {
        let key = cache_key(token, audiences);
        if let Some(outcome) = self.cache.get(&key) {
            return outcome;
        }
        match self.review(token, audiences).await {
            Ok(outcome) => {
                self.cache.insert(key, &outcome, self.ttl);
                outcome
            }
            Err(error) => {
                tracing::warn!(%error, "the authentication webhook failed");
                TokenOutcome::Rejected("the authentication webhook failed".to_owned())
            }
        }
    }
}

#[cfg(test)]
#[path = "webhook_test.rs"]
mod tests;
