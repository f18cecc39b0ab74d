//! OpenAPI (not in the spec; Kubernetes clients need it): the server's schemas and operations
//! as Swagger 2.0 (`/openapi/v2`, JSON or the protobuf client-go asks for) and OpenAPI 3.0
//! (`/openapi/v3`, an index of per-group-version documents), generated from the served rows
//! and k8s-openapi's schemas. kubectl reads v3 for `explain`, for client-side validation, and
//! to learn that the server takes `fieldValidation` and `dryRun`; it reads the v2 protobuf for
//! `explain --output=plaintext-openapiv2`.
//!
//! The documents are built on the first request that needs them (building walks every
//! schema; tests that never ask do not pay for it), and again, once, after the registry's
//! custom kinds change; in between they are served from their encoded bytes.

mod cache;
mod components;
mod custom;
mod markers;
mod negotiate;
mod params;
mod paths;
mod render;
mod served;
mod v2;
pub(crate) mod v2_proto;
mod v3;

use std::sync::Arc;
use std::sync::PoisonError;
use std::sync::RwLock;

use axum::response::IntoResponse;
use axum::response::Response;
use http::HeaderValue;
use http::StatusCode;
use http::header;

use crate::discovery::Document;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::registry::Registry;
use cache::Documents;
use negotiate::Encoding;
use negotiate::negotiate;

/// How long a client may keep a v3 document fetched by its hash (a year, as upstream's
/// `Expires`): the hash names the content, so it never changes.
const IMMUTABLE: &str = "public, immutable, max-age=31536000";

/// The caching of a v3 document fetched without a hash (it may change with the server).
const REVALIDATE: &str = "no-cache, private";

/// The OpenAPI documents of one server.
pub struct OpenApi {
    registry: Arc<Registry>,
    flavor: Flavor,
    /// The documents and the [`Registry::generation`] they were built at.
    documents: RwLock<Option<(u64, Arc<Documents>)>>,
}

/// The answer to one OpenAPI GET.
#[derive(Debug)]
pub enum Answer {
    /// A document (a 304 without body when `not_modified`).
    Document {
        /// The document.
        document: Document,
        /// Its encoding.
        encoding: Encoding,
        /// The `Cache-Control` value, if any.
        cache_control: Option<&'static str>,
        /// Whether `If-None-Match` named it.
        not_modified: bool,
    },
    /// 301 to the current URL of a v3 document asked for by a stale hash.
    Moved(String),
    /// 406: the client accepts no form served (upstream answers the same, with no body),
    /// e.g. protobuf for a v3 document.
    NotAcceptable,
}

impl OpenApi {
    /// The documents of what `registry` serves in `flavor` (built when first asked for).
    pub fn new(registry: Arc<Registry>, flavor: Flavor) -> Self {
        Self {
            registry,
            flavor,
            documents: RwLock::new(None),
        }
    }

    /// The documents of the registry as it is now: built if it changed since.
    fn documents(&self) -> Arc<Documents> {
        let generation = self.registry.generation();
        let current = |built: &Option<(u64, Arc<Documents>)>| {
            (built.as_ref()).and_then(|(g, docs)| (*g == generation).then(|| docs.clone()))
        };
        let built = self
            .documents
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(docs) = current(&built) {
            return docs;
        }
        drop(built);
        let mut built = self
            .documents
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(docs) = current(&built) {
            return docs;
        }
        let docs = Arc::new(Documents::build(&self.registry, self.flavor));
        *built = Some((generation, docs.clone()));
        docs
    }

    /// Whether `path` is an OpenAPI path (`/openapi/v2`, `/openapi/v3`, `/openapi/v3/...`).
    pub fn owns(path: &str) -> bool {
        path == "/openapi/v2" || path == "/openapi/v3" || path.starts_with("/openapi/v3/")
    }

    /// The answer to a GET of `path` with the request's `?hash=`, `Accept` and
    /// `If-None-Match`; 404 for an unknown document.
    pub fn answer(
        &self,
        path: &str,
        hash: Option<&str>,
        accept: Option<&str>,
        if_none_match: Option<&str>,
    ) -> Result<Answer, ApiError> {
        let docs = self.documents();
        let key = path.trim_end_matches('/');
        let (document, proto, cache_control) = if key == "/openapi/v2" {
            (&docs.v2, Some(&docs.v2_proto), None)
        } else if key == "/openapi/v3" {
            (&docs.v3_index, None, None)
        } else {
            let key = key.trim_start_matches("/openapi/v3/");
            let document = docs.v3.get(key).ok_or(ApiError::UnknownResource)?;
            match (hash, docs.v3_hash(key)) {
                (Some(asked), Some(current)) if !asked.is_empty() && asked != current => {
                    return Ok(Answer::Moved(format!("/openapi/v3/{key}?hash={current}")));
                }
                (Some(asked), _) if !asked.is_empty() => (document, None, Some(IMMUTABLE)),
                _ => (document, None, Some(REVALIDATE)),
            }
        };
        let offered: &[Encoding] = if proto.is_some() {
            &[Encoding::Json, Encoding::Protobuf]
        } else {
            &[Encoding::Json]
        };
        let Some(encoding) = negotiate(accept, offered) else {
            return Ok(Answer::NotAcceptable);
        };
        let document = match (encoding, proto) {
            (Encoding::Protobuf, Some(proto)) => proto,
            _ => document,
        };
        Ok(Answer::Document {
            document: document.clone(),
            encoding,
            cache_control,
            not_modified: if_none_match.is_some_and(|tags| document.matches(tags)),
        })
    }
}

impl IntoResponse for Answer {
    fn into_response(self) -> Response {
        match self {
            Self::Document {
                document,
                encoding,
                cache_control,
                not_modified,
            } => {
                let mut response = if not_modified {
                    StatusCode::NOT_MODIFIED.into_response()
                } else {
                    let mut r = (StatusCode::OK, document.body.clone()).into_response();
                    r.headers_mut().insert(
                        header::CONTENT_TYPE,
                        HeaderValue::from_static(encoding.content_type()),
                    );
                    r
                };
                let headers = response.headers_mut();
                if let Ok(etag) = HeaderValue::from_str(&document.etag) {
                    headers.insert(header::ETAG, etag);
                }
                // Each encoding has its own bytes and tag under one URL.
                headers.insert(header::VARY, HeaderValue::from_static("accept"));
                if let Some(value) = cache_control {
                    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(value));
                }
                response
            }
            Self::Moved(location) => {
                let mut response = StatusCode::MOVED_PERMANENTLY.into_response();
                if let Ok(location) = HeaderValue::from_str(&location) {
                    response.headers_mut().insert(header::LOCATION, location);
                }
                response
            }
            Self::NotAcceptable => StatusCode::NOT_ACCEPTABLE.into_response(),
        }
    }
}

/// The OpenAPI 3.0 schemas of the built-in kinds in `flavor` (tests type expressions by them).
#[cfg(test)]
pub(crate) fn builtin_v3_schemas(flavor: Flavor) -> serde_json::Map<String, serde_json::Value> {
    let registry = Registry::builtin(flavor);
    components::definitions(&served::served(&registry, flavor), components::Spec::V3).schemas
}
