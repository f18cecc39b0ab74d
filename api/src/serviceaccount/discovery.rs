//! Service account issuer discovery (Kubernetes' `ServiceAccountIssuerDiscovery`): the OpenID
//! provider configuration at `/.well-known/openid-configuration` and the verifying keys as a
//! JSON Web Key Set at `/openid/v1/jwks`, so relying parties outside the cluster can verify
//! service account tokens.

use std::collections::BTreeSet;

use axum::response::IntoResponse;
use axum::response::Response;
use http::HeaderValue;
use http::StatusCode;
use http::header;
use serde_json::json;

use super::VerifyingKey;
use super::keys::algorithm_name;

/// The path of the OpenID provider configuration.
pub const OPENID_CONFIGURATION_PATH: &str = "/.well-known/openid-configuration";
/// The path of the key set.
pub const JWKS_PATH: &str = "/openid/v1/jwks";

/// The two discovery documents of one issuer.
#[derive(Debug, Clone)]
pub struct IssuerDiscovery {
    issuer: String,
    jwks_uri: Option<String>,
    keys: Vec<VerifyingKey>,
}

impl IssuerDiscovery {
    /// The documents of `issuer` (the first `--service-account-issuer`), publishing `keys`;
    /// `jwks_uri` (`--service-account-jwks-uri`) names the key set, by default this server's
    /// own `/openid/v1/jwks` at the address the client reached.
    pub fn new(issuer: String, jwks_uri: Option<String>, keys: Vec<VerifyingKey>) -> Self {
        Self {
            issuer,
            jwks_uri,
            keys,
        }
    }

    /// The response to a GET of `path` (reached at `host`), `None` for paths not its own.
    pub(crate) fn answer(&self, path: &str, host: Option<&str>) -> Option<Response> {
        let (body, content_type) = match path {
            OPENID_CONFIGURATION_PATH => {
                let jwks_uri = self.jwks_uri.clone().unwrap_or_else(|| match host {
                    Some(host) => format!("https://{host}{JWKS_PATH}"),
                    None => format!("{}{JWKS_PATH}", self.issuer.trim_end_matches('/')),
                });
                let algorithms: BTreeSet<&str> = self
                    .keys
                    .iter()
                    .map(|k| algorithm_name(k.algorithm()))
                    .collect();
                let document = json!({
                    "issuer": self.issuer,
                    "jwks_uri": jwks_uri,
                    "response_types_supported": ["id_token"],
                    "subject_types_supported": ["public"],
                    "id_token_signing_alg_values_supported": algorithms,
                });
                (document, "application/json")
            }
            JWKS_PATH => {
                let keys: Vec<_> = self.keys.iter().map(VerifyingKey::jwk).collect();
                (json!({"keys": keys}), "application/jwk-set+json")
            }
            _ => return None,
        };
        let mut response = (StatusCode::OK, body.to_string()).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        headers.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=3600"),
        );
        Some(response)
    }
}
