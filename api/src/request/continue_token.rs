//! The `continue` token of a paged list (spec 000 "Pagination", R-RES-102, R-RES-167;
//! R-HA-008), in Kubernetes' format so clients and tools see what they know: unpadded
//! URL-safe base64 of `{"v":"meta.k8s.io/v1","rv":<revision>,"start":"<key>"}`, where `start`
//! is the key the next page starts at, relative to the collection's key prefix.
//!
//! A token holds only a revision and a key, both the same on every replica, so a token issued
//! by one replica continues the same list on any other.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use serde::Serialize;

use crate::error::ApiError;
use crate::error::excerpt;
use crate::storage::Revision;

/// The only token version Kubernetes (and this server) writes.
const TOKEN_VERSION: &str = "meta.k8s.io/v1";
/// What a next page's start key ends with: the last key of the previous page plus this sorts
/// right after it.
const KEY_SUCCESSOR: char = '\0';

/// The token's JSON, field names as Kubernetes' `continueToken`.
#[derive(Serialize, Deserialize)]
struct Wire {
    #[serde(rename = "v")]
    version: String,
    #[serde(rename = "rv")]
    revision: i64,
    start: String,
}

/// A decoded `continue` token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContinueToken {
    /// The revision every page is served at; `None` for the "continue at the newest revision"
    /// token (`rv: -1`) an expired token's 410 offers.
    pub revision: Option<Revision>,
    /// The next page holds the keys after this one (absolute).
    pub after_key: String,
}

impl ContinueToken {
    /// The token of the page after `last_key` (absolute, under `prefix`) of a list served at
    /// `revision` (`None`: the newest, Kubernetes' `rv: -1`).
    pub fn encode(last_key: &str, prefix: &str, revision: Option<Revision>) -> String {
        let relative = last_key.strip_prefix(prefix).unwrap_or(last_key);
        let wire = Wire {
            version: TOKEN_VERSION.to_owned(),
            revision: revision.map_or(-1, |r| i64::try_from(r).unwrap_or(i64::MAX)),
            start: format!("{relative}{KEY_SUCCESSOR}"),
        };
        // A struct of strings and an integer always serializes.
        let json = serde_json::to_vec(&wire).unwrap_or_default();
        URL_SAFE_NO_PAD.encode(json)
    }

    /// Decodes `token` for the collection under `prefix`. 400 (Kubernetes' `invalid continue
    /// token` messages, repeating at most an excerpt of the token) when it is not base64 JSON
    /// of a known version, its revision is not a positive 64-bit integer (or `-1`), it has no
    /// key, or its key would leave the collection (`..`, `//`). The token is a query value, so
    /// the URI's length bounds what is decoded.
    pub fn decode(token: &str, prefix: &str) -> Result<Self, ApiError> {
        let invalid = |why: String| {
            ApiError::BadRequest(format!(
                "invalid continue token: continue key is not valid: {}",
                excerpt(&why)
            ))
        };
        let bytes = URL_SAFE_NO_PAD
            .decode(token.trim_end_matches('='))
            .map_err(|e| invalid(e.to_string()))?;
        let wire: Wire = serde_json::from_slice(&bytes).map_err(|e| invalid(e.to_string()))?;
        if wire.version != TOKEN_VERSION {
            return Err(invalid(format!(
                "server does not recognize this encoded version {}",
                wire.version
            )));
        }
        let revision = match wire.revision {
            -1 => None,
            rv => Some(
                Revision::try_from(rv)
                    .ok()
                    .filter(|r| *r > 0)
                    .ok_or_else(|| {
                        invalid(format!(
                            "incorrect encoded start resourceVersion (version {TOKEN_VERSION})"
                        ))
                    })?,
            ),
        };
        if wire.start.is_empty() {
            return Err(invalid(format!(
                "encoded start key empty (version {TOKEN_VERSION})"
            )));
        }
        let rooted = if wire.start.starts_with('/') {
            wire.start.clone()
        } else {
            format!("/{}", wire.start)
        };
        if !is_clean(&rooted) {
            return Err(invalid(wire.start));
        }
        // Tokens always start right after a key; one that does not (hand-made) cannot be
        // served by an exclusive start and is refused rather than served from the wrong key.
        let start = format!("{prefix}{}", &rooted[1..]);
        let after_key = start
            .strip_suffix(KEY_SUCCESSOR)
            .ok_or_else(|| invalid(format!("{:?} does not follow a key", wire.start)))?;
        Ok(Self {
            revision,
            after_key: after_key.to_owned(),
        })
    }
}

/// Whether `path` (starting with `/`) is what Go's `path.Clean` leaves unchanged: no empty,
/// `.` or `..` segment and no trailing slash, so the key cannot climb out of the prefix.
fn is_clean(path: &str) -> bool {
    path == "/"
        || path[1..]
            .split('/')
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PREFIX: &str = "/registry/core/configmaps/default/";

    fn raw(json: &str) -> String {
        URL_SAFE_NO_PAD.encode(json)
    }

    fn rejected(token: &str) -> String {
        match ContinueToken::decode(token, PREFIX) {
            Err(ApiError::BadRequest(m)) => m,
            other => panic!("{token}: expected 400, got {other:?}"),
        }
    }

    // R-RES-102, R-HA-008: Kubernetes' format, replica-independent (revision + relative key).
    #[test]
    fn kubernetes_format_round_trip() {
        let token = ContinueToken::encode(&format!("{PREFIX}b"), PREFIX, Some(42));
        let json = URL_SAFE_NO_PAD.decode(&token).expect("base64");
        assert_eq!(
            String::from_utf8(json).expect("utf-8"),
            r#"{"v":"meta.k8s.io/v1","rv":42,"start":"b\u0000"}"#
        );
        assert_eq!(
            ContinueToken::decode(&token, PREFIX),
            Ok(ContinueToken {
                revision: Some(42),
                after_key: format!("{PREFIX}b"),
            })
        );
        let newest = ContinueToken::encode(&format!("{PREFIX}b"), PREFIX, None);
        assert_eq!(
            ContinueToken::decode(&newest, PREFIX).map(|t| t.revision),
            Ok(None)
        );
        // Kubernetes' own tokens decode the same way (a leading `/` is allowed).
        let k8s = raw(r#"{"v":"meta.k8s.io/v1","rv":7,"start":"/ns/x\u0000"}"#);
        assert_eq!(
            ContinueToken::decode(&k8s, PREFIX).map(|t| t.after_key),
            Ok(format!("{PREFIX}ns/x"))
        );
    }

    // R-RES-102: a garbled token or one that escapes the collection is a 400.
    #[test]
    fn bad_tokens_are_400() {
        assert!(rejected("!!!").starts_with("invalid continue token: continue key is not valid"));
        assert!(rejected(&raw("not json")).starts_with("invalid continue token"));
        assert!(rejected(&raw(r#"{"v":"v2","rv":1,"start":"a\u0000"}"#)).contains("version v2"));
        assert!(
            rejected(&raw(r#"{"v":"meta.k8s.io/v1","rv":0,"start":"a\u0000"}"#))
                .contains("incorrect encoded start resourceVersion")
        );
        assert!(
            rejected(&raw(r#"{"v":"meta.k8s.io/v1","rv":3,"start":""}"#))
                .contains("encoded start key empty")
        );
        for escape in [
            "../secrets/x\\u0000",
            "a/../../b\\u0000",
            "a//b\\u0000",
            "./a\\u0000",
        ] {
            let token = raw(&format!(
                r#"{{"v":"meta.k8s.io/v1","rv":3,"start":"{escape}"}}"#
            ));
            assert!(
                rejected(&token).contains("continue key is not valid"),
                "{escape}"
            );
        }
        assert!(
            rejected(&raw(r#"{"v":"meta.k8s.io/v1","rv":3,"start":"a"}"#))
                .contains("does not follow a key")
        );
    }
}
