//! An encoded discovery document and its entity tag. The registry is static, so each
//! document is encoded once at start; `If-None-Match` with the tag lets a client skip the
//! body (304), as Kubernetes' aggregated discovery does.

use bytes::Bytes;
use serde_json::Value;
use sha2::Digest;
use sha2::Sha512;

/// A document's bytes (JSON, or the OpenAPI v2 protobuf) and its strong `ETag` (the quoted
/// upper-case hex SHA-512 of the bytes, as Kubernetes computes it).
#[derive(Debug, Clone)]
pub struct Document {
    /// The encoded document.
    pub body: Bytes,
    /// The `ETag` header value, quotes included.
    pub etag: String,
}

impl Document {
    /// Encodes `value` and tags it.
    pub fn new(value: &Value) -> Self {
        Self::from_bytes(Bytes::from(value.to_string()))
    }

    /// Tags already encoded bytes (the OpenAPI v2 protobuf).
    pub fn from_bytes(body: Bytes) -> Self {
        let hex: String = Sha512::digest(&body)
            .iter()
            .map(|b| format!("{b:02X}"))
            .collect();
        Self {
            body,
            etag: format!("\"{hex}\""),
        }
    }

    /// Whether an `If-None-Match` value names this document (`*`, or a list of tags, weak
    /// ones compared weakly as RFC 9110 requires for `If-None-Match`).
    pub fn matches(&self, if_none_match: &str) -> bool {
        if_none_match
            .split(',')
            .map(str::trim)
            .any(|tag| tag == "*" || tag.trim_start_matches("W/") == self.etag)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn tags_follow_the_bytes() {
        let a = Document::new(&json!({"a": 1}));
        let b = Document::new(&json!({"a": 2}));
        assert_ne!(a.etag, b.etag);
        assert_eq!(a.etag.len(), 128 + 2);
        assert!(a.etag.starts_with('"') && a.etag.ends_with('"'));
        assert!(a.matches(&a.etag));
        assert!(a.matches(&format!("\"x\", W/{}", a.etag)));
        assert!(a.matches("*"));
        assert!(!a.matches(&b.etag));
        assert!(!a.matches(""));
    }
}
