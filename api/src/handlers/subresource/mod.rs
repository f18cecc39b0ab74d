//! The subresources served by handlers of their own: `scale` of the replicated workloads,
//! `binding` and `eviction` of pods (and the core `bindings` collection), `token` of service
//! accounts. Each reads and writes its parent through the parent's generic store, so the
//! store's steps (validation, generation, optimistic locking, dry run) apply unchanged.

mod binding;
pub(in crate::handlers) mod body;
mod disruption;
mod eviction;
mod rsa_signer;
mod scale;
mod token;

use axum::response::Response;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;

pub use self::rsa_signer::RsaTokenSigner;
pub(crate) use self::scale::get_scale;
pub(crate) use self::scale::update_scale;
use super::ResourceRequest;
use super::json_response;
use super::write_options::WriteKind;
use super::write_options::write_options;
use crate::error::ApiError;
use crate::error::GroupResource;
use crate::registry::Registry;
use crate::registry::Store;
use crate::registry::WriteOptions;
use crate::request::Verb;
use crate::storage::ReadConsistency;
use crate::storage::Storage;

/// The object a subresource request is about.
pub(crate) struct Parent<'a> {
    /// Where objects are.
    pub storage: &'a dyn Storage,
    /// Every served store (eviction reads pods and disruption budgets).
    pub registry: &'a Registry,
    /// The parent's store.
    pub store: &'a Store,
    /// The parent's namespace (empty for cluster-scoped parents).
    pub namespace: &'a str,
    /// The parent's name.
    pub name: &'a str,
}

impl Parent<'_> {
    /// The parent as it is now (a linearizable read, 404 when absent), as JSON.
    async fn read(&self) -> Result<Value, ApiError> {
        let body = self
            .store
            .get(
                self.storage,
                self.namespace,
                self.name,
                ReadConsistency::Linearizable,
            )
            .await?;
        body::stored(&body)
    }
}

/// Whether `subresource` has a handler here (the others go to the generic store).
pub(crate) fn is_handled(subresource: &str) -> bool {
    matches!(subresource, "scale" | "binding" | "eviction" | "token")
}

/// Serves `req` to the subresource of `parent` it names; `write` holds the request's
/// `dryRun` (and `fieldValidation`, which these bodies do not use).
pub(crate) async fn serve_subresource(
    parent: Parent<'_>,
    req: &ResourceRequest<'_>,
    write: WriteOptions,
) -> Result<Response, ApiError> {
    let sub = req.info.subresource.as_str();
    match (sub, &req.info.verb) {
        ("scale", Verb::Get) => Ok(json_response(StatusCode::OK, get_scale(&parent).await?)),
        ("scale", Verb::Update) => {
            let scale = body::parse(&req.body)?;
            let body = update_scale(&parent, scale, write).await?;
            Ok(json_response(StatusCode::OK, body))
        }
        ("scale", Verb::Patch) => {
            let body = scale::patch_scale(&parent, req, write).await?;
            Ok(json_response(StatusCode::OK, body))
        }
        ("binding", Verb::Create) => {
            binding::bind(&parent, &req.body, req.now, write).await?;
            Ok(success())
        }
        ("eviction", Verb::Create) => {
            eviction::evict(&parent, req, write).await?;
            Ok(success())
        }
        ("token", Verb::Create) => {
            let body = token::issue(&parent, req).await?;
            Ok(json_response(StatusCode::CREATED, body))
        }
        _ => Err(ApiError::MethodNotAllowed {
            resource: parent.store.resource().group_resource(),
            name: parent.name.to_owned(),
        }),
    }
}

/// Serves a request to the core `bindings` collection (POST in a namespace only; upstream's
/// `LegacyBindingREST`): 404 outside a namespace, 405 for any other verb.
pub(crate) async fn serve_bindings(
    storage: &dyn Storage,
    registry: &Registry,
    req: &ResourceRequest<'_>,
) -> Result<Response, ApiError> {
    let info = req.info;
    if !info.is_namespaced_path() || info.parts.len() > 2 {
        return Err(ApiError::UnknownResource);
    }
    if info.verb != Verb::Create || !info.name.is_empty() {
        return Err(ApiError::MethodNotAllowed {
            resource: GroupResource::new("", "bindings"),
            name: info.name.clone(),
        });
    }
    let write = write_options(req.query, WriteKind::Create, req.flavor)?;
    binding::bind_collection(
        storage,
        registry,
        &info.namespace,
        &req.body,
        req.now,
        write,
    )
    .await?;
    Ok(success())
}

/// The answer of a subresource create that makes no object (binding, eviction): 201 with a
/// `Status` of `status: Success`, as upstream's create handler answers a `Status` without a
/// code.
pub(crate) fn success() -> Response {
    let body = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
    });
    json_response(StatusCode::CREATED, body.to_string().into_bytes())
}
