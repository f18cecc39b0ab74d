//! The Webhook authorization mode (R-ACC-089..093, R-ACC-198, R-ACC-199): a request's
//! attributes are POSTed as a JSON `SubjectAccessReview` (`v1` or `v1beta1`) to the server of
//! a kubeconfig (the authentication webhook's TLS client and retries); `status.allowed`
//! allows, `status.denied` denies, neither is no opinion. Allowed answers are kept for
//! `authorizedTTL`, the others for `unauthorizedTTL`, keyed by a digest of the whole review.
//! A failed call or a malformed answer follows the failure policy. Match conditions (CEL over
//! the v1 review's spec as `request`) decide first whether the webhook is asked at all: any
//! false skips it, an error with none false follows the failure policy.

use std::sync::Arc;
use std::time::Duration;

use apiary_api::Flavor;
use apiary_api::auth::Attributes;
use apiary_api::auth::Authorizer;
use apiary_api::auth::Decision;
use apiary_api::cel::Program;
use apiary_api::cel::evaluate;
use apiary_api::labels::LabelRequirement;
use apiary_api::labels::LabelSelector;
use apiary_api::request::FieldSelector;
use serde::Deserialize;
use serde_json::Map;
use serde_json::Value;
use serde_json::json;
use sha2::Digest;
use sha2::Sha256;
use tokio::time::Instant;

use super::WebhookMode;
use super::file::REQUEST_VARIABLE;
use super::metrics::WebhookMetrics;
use crate::answer_cache::AnswerCache;
use crate::audit::webhook::TlsWebhook;
use crate::authn::webhook::INITIAL_BACKOFF;
use crate::authn::webhook::ReviewPoster;
pub use crate::authn::webhook::ReviewVersion as SarVersion;
use crate::authn::webhook::post_with_retries;

/// What a failed call or a malformed answer decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailurePolicy {
    /// The next mode decides.
    NoOpinion,
    /// The request is denied.
    Deny,
}

impl FailurePolicy {
    /// The policy named `name` (`NoOpinion`, `Deny`).
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "NoOpinion" => Some(Self::NoOpinion),
            "Deny" => Some(Self::Deny),
            _ => None,
        }
    }
}

/// The part of the answer that counts.
#[derive(Deserialize)]
struct Reply {
    #[serde(default)]
    status: Option<ReplyStatus>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReplyStatus {
    #[serde(default)]
    allowed: bool,
    #[serde(default)]
    denied: bool,
    #[serde(default)]
    reason: Option<String>,
}

/// One authorization webhook.
pub struct WebhookAuthorizer {
    name: String,
    poster: Arc<dyn ReviewPoster>,
    api_version: String,
    version: SarVersion,
    timeout: Duration,
    authorized_ttl: Duration,
    unauthorized_ttl: Duration,
    failure_policy: FailurePolicy,
    match_conditions: Vec<Program>,
    first_backoff: Duration,
    metrics: WebhookMetrics,
    cache: AnswerCache<Decision>,
}

impl WebhookAuthorizer {
    /// The webhook `mode` describes, reached through the client of its kubeconfig.
    pub fn from_mode(
        mode: &WebhookMode,
        flavor: Flavor,
        metrics: WebhookMetrics,
    ) -> Result<Self, String> {
        let client = TlsWebhook::from_kubeconfig(&mode.kubeconfig)?;
        Self::new(mode, Arc::new(client), flavor, metrics)
    }

    /// The webhook `mode` describes, posting through `poster` in `flavor`'s authorization
    /// group; its match conditions compiled once here.
    pub fn new(
        mode: &WebhookMode,
        poster: Arc<dyn ReviewPoster>,
        flavor: Flavor,
        metrics: WebhookMetrics,
    ) -> Result<Self, String> {
        let match_conditions = mode
            .match_conditions
            .iter()
            .map(|e| Program::compile(e, &[REQUEST_VARIABLE]).map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            name: mode.name.clone(),
            poster,
            api_version: format!(
                "authorization.{}/{}",
                flavor.group_domain(),
                mode.version.name()
            ),
            version: mode.version,
            timeout: mode.timeout,
            authorized_ttl: mode.authorized_ttl,
            unauthorized_ttl: mode.unauthorized_ttl,
            failure_policy: mode.failure_policy,
            match_conditions,
            first_backoff: INITIAL_BACKOFF,
            metrics,
            cache: AnswerCache::default(),
        })
    }

    /// Waits `first_backoff` before the first retry (tests shorten it).
    pub fn with_first_backoff(mut self, first_backoff: Duration) -> Self {
        self.first_backoff = first_backoff;
        self
    }

    /// Whether the match conditions let the webhook be asked: `Ok(false)` when one is false,
    /// an error when one failed and none is false.
    fn matches(&self, request: &Value) -> Result<bool, String> {
        let mut failure = None;
        for program in &self.match_conditions {
            match evaluate(program, &[(REQUEST_VARIABLE, request)]) {
                Ok(Value::Bool(false)) => return Ok(false),
                Ok(Value::Bool(true)) => {}
                Ok(other) => {
                    failure.get_or_insert(format!(
                        "match condition {:?} must evaluate to bool, not {other}",
                        program.source()
                    ));
                }
                Err(e) => {
                    failure.get_or_insert(format!(
                        "match condition {:?} failed: {e}",
                        program.source()
                    ));
                }
            }
        }
        failure.map_or(Ok(true), Err)
    }

    /// What the failure policy decides after `error`.
    fn failed(&self, error: &str) -> Decision {
        tracing::warn!(webhook = %self.name, %error, "the authorization webhook failed");
        match self.failure_policy {
            FailurePolicy::NoOpinion => Decision::NoOpinion(String::new()),
            FailurePolicy::Deny => Decision::Deny(String::new()),
        }
    }

    /// Posts `body` and reads the answer's decision.
    async fn ask(&self, body: Vec<u8>) -> Result<Decision, String> {
        let started = Instant::now();
        let answer =
            post_with_retries(self.poster.as_ref(), body, self.first_backoff, self.timeout).await;
        let result = match &answer {
            Ok(_) => "success",
            Err(e) if e.starts_with("no answer within") => "timeout",
            Err(_) => "error",
        };
        self.metrics
            .record(&self.name, result, started.elapsed().as_secs_f64());
        let reply: Reply = serde_json::from_slice(&answer?).map_err(|e| {
            format!(
                "the answer is not a SubjectAccessReview (line {}, column {})",
                e.line(),
                e.column()
            )
        })?;
        let status = reply.status.ok_or("the answer has no status".to_owned())?;
        let reason = status.reason.unwrap_or_default();
        Ok(if status.allowed {
            Decision::Allow
        } else if status.denied {
            Decision::Deny(reason)
        } else {
            Decision::NoOpinion(reason)
        })
    }

    fn remember(&self, key: [u8; 32], decision: &Decision) {
        let ttl = if *decision == Decision::Allow {
            self.authorized_ttl
        } else {
            self.unauthorized_ttl
        };
        self.cache.insert(key, decision, ttl);
    }
}

#[async_trait::async_trait]
impl Authorizer for WebhookAuthorizer {
    async fn authorize(&self, attributes: &Attributes<'_>) -> Decision {
        let spec = review_spec(attributes);
        match self.matches(&spec) {
            Ok(true) => {}
            Ok(false) => return Decision::NoOpinion(String::new()),
            Err(error) => return self.failed(&error),
        }
        let body = json!({
            "apiVersion": self.api_version,
            "kind": "SubjectAccessReview",
            "spec": in_version(spec, self.version),
        })
        .to_string()
        .into_bytes();
        let key: [u8; 32] = Sha256::digest(&body).into();
        if let Some(decision) = self.cache.get(&key) {
            return decision;
        }
        match self.ask(body).await {
            Ok(decision) => {
                self.remember(key, &decision);
                decision
            }
            Err(error) => self.failed(&error),
        }
    }
}

/// The v1 `SubjectAccessReview` spec of `attributes` (empty fields left out, as Kubernetes
/// leaves them out): the user, and the resource or the path with the verb.
pub fn review_spec(attributes: &Attributes<'_>) -> Value {
    let user = attributes.user;
    let r = attributes.request;
    let mut spec = Map::new();
    let put = |map: &mut Map<String, Value>, key: &str, value: &str| {
        if !value.is_empty() {
            map.insert(key.to_owned(), Value::from(value));
        }
    };
    put(&mut spec, "user", &user.name);
    put(&mut spec, "uid", &user.uid);
    if !user.groups.is_empty() {
        spec.insert("groups".to_owned(), json!(user.groups));
    }
    if !user.extra.is_empty() {
        spec.insert("extra".to_owned(), json!(user.extra));
    }
    let mut target = Map::new();
    if r.is_resource_request {
        put(&mut target, "namespace", &r.namespace);
        put(&mut target, "verb", r.verb.as_str());
        put(&mut target, "group", &r.api_group);
        put(&mut target, "version", &r.api_version);
        put(&mut target, "resource", &r.resource);
        put(&mut target, "subresource", &r.subresource);
        put(&mut target, "name", &r.name);
        if let Some(requirements) = field_requirements(&r.field_selector) {
            target.insert("fieldSelector".to_owned(), requirements);
        }
        if let Some(requirements) = label_requirements(&r.label_selector) {
            target.insert("labelSelector".to_owned(), requirements);
        }
        spec.insert("resourceAttributes".to_owned(), Value::Object(target));
    } else {
        put(&mut target, "path", &r.path);
        put(&mut target, "verb", r.verb.as_str());
        spec.insert("nonResourceAttributes".to_owned(), Value::Object(target));
    }
    Value::Object(spec)
}

/// The field selector's requirements as the review carries them (`In` or `NotIn` one value);
/// none when it is empty or does not parse.
fn field_requirements(selector: &str) -> Option<Value> {
    let parsed = FieldSelector::parse(selector).ok()?;
    let requirements: Vec<Value> = parsed
        .terms()
        .map(|(key, equal, value)| {
            let operator = if equal { "In" } else { "NotIn" };
            json!({"key": key, "operator": operator, "values": [value]})
        })
        .collect();
    (!requirements.is_empty()).then(|| json!({ "requirements": requirements }))
}

/// The label selector's requirements as the review carries them; none when it is empty or
/// does not parse.
fn label_requirements(selector: &str) -> Option<Value> {
    let parsed = LabelSelector::parse(selector).ok()?;
    let requirements: Vec<Value> = parsed
        .requirements()
        .iter()
        .map(|r| match r {
            LabelRequirement::Exists(key) => json!({"key": key, "operator": "Exists"}),
            LabelRequirement::NotExists(key) => json!({"key": key, "operator": "DoesNotExist"}),
            LabelRequirement::In(key, values) => {
                json!({"key": key, "operator": "In", "values": values})
            }
            LabelRequirement::NotIn(key, values) => {
                json!({"key": key, "operator": "NotIn", "values": values})
            }
        })
        .collect();
    (!requirements.is_empty()).then(|| json!({ "requirements": requirements }))
}

/// The v1 `spec` as `version` spells it: `v1beta1` calls the groups `group`.
fn in_version(mut spec: Value, version: SarVersion) -> Value {
    if version == SarVersion::V1beta1
        && let Some(map) = spec.as_object_mut()
        && let Some(groups) = map.remove("groups")
    {
        map.insert("group".to_owned(), groups);
    }
    spec
}

#[cfg(test)]
#[path = "webhook_test.rs"]
mod tests;
