//! `bootstrapsigner` (R-ACC-024, R-ACC-027..029, R-ACC-081): keeps the `cluster-info`
//! ConfigMap of the public namespace signed, as the `bootstrap-signer` ServiceAccount of the
//! system namespace. Each pass reads `cluster-info`'s `kubeconfig` and the system namespace's
//! bootstrap token Secrets and makes the `jws-kubeconfig-<id>` keys exactly one detached JWS per token that may
//! sign (well formed, not expired, `usage-bootstrap-signing`), removing stale ones; it asks to
//! run again at the next expiration, when a signature must go.
//!
//! The JWS is the one Kubernetes' bootstrap signer computes and kubeadm's verifier recomputes
//! (CHECKLIST's table of differences, R-ACC-029): HS256 keyed with the token *secret*, the
//! protected header `{"alg":"HS256","kid":"<token id>"}`, the payload left out
//! (`<header>..<signature>`, RFC 7515 appendix F).
//!
//! Apiary does not write `cluster-info` or its `kubeconfig` itself: as in Kubernetes, the
//! installer (kubeadm there) publishes the cluster's connection data; without a `cluster-info`
//! with a `kubeconfig` the signer has nothing to sign and does nothing.

use std::collections::BTreeMap;

use apiary_api::auth::BOOTSTRAP_SIGNER_ACCOUNT;
use apiary_api::auth::BootstrapTokenSecret;
use apiary_api::auth::CLUSTER_INFO;
use apiary_api::auth::controller_user;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::DateTime;
use chrono::Utc;
use hmac::Hmac;
use hmac::Mac;
use serde_json::Value;
use sha2::Sha256;
use tokio_util::sync::CancellationToken;

use super::Controller;
use super::ControllerContext;
use super::client::ControllerError;
use super::client::InProcessClient;
use super::runner::converge;

/// The controller's `--controllers` name.
pub const NAME: &str = "bootstrapsigner";

/// The `cluster-info` key holding the kubeconfig that is signed.
pub const KUBECONFIG_KEY: &str = "kubeconfig";

/// The prefix of `cluster-info`'s signature keys (`jws-kubeconfig-<token id>`).
pub const SIGNATURE_KEY_PREFIX: &str = "jws-kubeconfig-";

/// The detached JWS of `content` signed with the bootstrap token `id`.`secret`, byte for byte
/// as Kubernetes' `ComputeDetachedSignature` makes it. (Kubernetes pads a key shorter than 32
/// bytes with zero bytes; HMAC pads every key to its 64-byte block with zero bytes anyway, so
/// the MAC is the same without that step.)
pub fn detached_jws(content: &str, id: &str, secret: &str) -> String {
    let header = serde_json::json!({"alg": "HS256", "kid": id}).to_string();
    let header = URL_SAFE_NO_PAD.encode(header);
    let signing_input = format!("{header}.{}", URL_SAFE_NO_PAD.encode(content));
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
    mac.update(signing_input.as_bytes());
    let signature = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
    format!("{header}..{signature}")
}

/// The bootstrap signer.
#[derive(Debug, Clone, Copy, Default)]
pub struct BootstrapSigner;

#[async_trait::async_trait]
impl Controller for BootstrapSigner {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn run(&self, context: ControllerContext, stop: CancellationToken) {
        let client = InProcessClient::new(
            context.api.clone(),
            controller_user(context.flavor, BOOTSTRAP_SIGNER_ACCOUNT),
        );
        converge(NAME, &context, &stop, || sign(&client, &context)).await;
    }
}

/// One pass: brings `cluster-info`'s signatures in line with the signing tokens; the next
/// expiration of a signing token.
async fn sign(
    client: &InProcessClient,
    context: &ControllerContext,
) -> Result<Option<DateTime<Utc>>, ControllerError> {
    let public = context.flavor.public_namespace();
    let path = format!("/api/v1/namespaces/{public}/configmaps/{CLUSTER_INFO}");
    let Some(mut cluster_info) = client.get(&path).await? else {
        return Ok(None);
    };
    let Some(content) = cluster_info["data"][KUBECONFIG_KEY]
        .as_str()
        .map(str::to_owned)
    else {
        return Ok(None);
    };
    let system = context.flavor.system_namespace();
    let secrets = client
        .list(&format!("/api/v1/namespaces/{system}/secrets"))
        .await?;
    let now = context.clock.now();
    let mut wanted = BTreeMap::new();
    let mut next: Option<DateTime<Utc>> = None;
    for object in &secrets {
        let Some(token) = BootstrapTokenSecret::from_object(object, context.flavor) else {
            continue;
        };
        let Some((id, secret)) = token.signing_token(now) else {
            continue;
        };
        wanted.insert(
            format!("{SIGNATURE_KEY_PREFIX}{id}"),
            detached_jws(&content, id, secret),
        );
        if let Ok(Some(at)) = token.expiration() {
            next = Some(next.map_or(at, |n| n.min(at)));
        }
    }
    let data = cluster_info["data"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let current: BTreeMap<String, String> = data
        .iter()
        .filter(|(key, _)| key.starts_with(SIGNATURE_KEY_PREFIX))
        .map(|(key, value)| (key.clone(), value.as_str().unwrap_or_default().to_owned()))
        .collect();
    if current == wanted {
        return Ok(next);
    }
    let mut updated: serde_json::Map<String, Value> = data
        .into_iter()
        .filter(|(key, _)| !key.starts_with(SIGNATURE_KEY_PREFIX))
        .collect();
    updated.extend(wanted.into_iter().map(|(k, v)| (k, Value::String(v))));
    cluster_info["data"] = Value::Object(updated);
    client.update(&path, &cluster_info).await?;
    tracing::info!("cluster-info signatures updated");
    Ok(next)
}

#[cfg(test)]
mod tests {
    use jsonwebtoken::Algorithm;
    use jsonwebtoken::DecodingKey;

    use super::*;

    // R-ACC-028, R-ACC-029: the detached JWS is byte for byte Kubernetes' own (the vectors of
    // cluster-bootstrap's jws tests: HS256 keyed with the token secret, `kid` = token id).
    #[test]
    fn signatures_match_kubernetes_vectors() {
        let content = "Hello from the other side. I must have called a thousand times.";
        let header = "eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9";
        assert_eq!(
            detached_jws(content, "joshua", "my voice is my passcode"),
            format!("{header}..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8")
        );
        assert_eq!(
            detached_jws("", "joshua", "my voice is my passcode"),
            format!("{header}..7Ui1ALizW4jXphVUB7xUqC9vLYLL9RZeOFfVLoB7Tgk")
        );
        assert_eq!(
            detached_jws(content, "joshua", ""),
            format!("{header}..UfkqvDGiIFxrMnFseDj9LYJOLNrvjW8aHhF71mvvAs8")
        );
    }

    // R-ACC-028, R-ACC-029: a verifier that puts the content back and checks HS256 with the
    // token secret (jsonwebtoken's HMAC, not this module's) accepts the signature, and one
    // keyed with the full token does not.
    #[test]
    fn signatures_verify_independently_with_the_token_secret() {
        let content = "apiVersion: v1\nkind: Config\nclusters: []\n";
        let jws = detached_jws(content, "abcdef", "0123456789abcdef");
        let (header, signature) = jws.split_once("..").unwrap();
        let header_json = URL_SAFE_NO_PAD.decode(header).unwrap();
        assert_eq!(header_json, br#"{"alg":"HS256","kid":"abcdef"}"#);
        let message = format!("{header}.{}", URL_SAFE_NO_PAD.encode(content));
        let verify = |key: &[u8]| {
            jsonwebtoken::crypto::verify(
                signature,
                message.as_bytes(),
                &DecodingKey::from_secret(key),
                Algorithm::HS256,
            )
            .unwrap()
        };
        assert!(verify(b"0123456789abcdef"));
        assert!(!verify(b"abcdef.0123456789abcdef"));
    }
}
