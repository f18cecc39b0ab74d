//! The HTTP side of the subresources served by code of their own: `scale` of the replicated
//! workloads, `binding` and `eviction` of pods (and the core `bindings` collection), `token`
//! of service accounts. These handlers decode the request (body, patch, DeleteOptions) and
//! render the answer; what each subresource does lives in `registry::subresource`.

pub(in crate::handlers) mod body;

use axum::response::Response;
use http::StatusCode;
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::autoscaling::v1::Scale;
use k8s_openapi::api::core::v1::Binding;
use k8s_openapi::api::policy::v1::Eviction;
use serde_json::Value;
use serde_json::json;

use super::ResourceRequest;
use super::delete_options::delete_options;
use super::json_response;
use super::resource::patch_type;
use super::warnings::with_warnings;
use super::write_options::WriteKind;
use super::write_options::write_options;
use crate::admission::ObjectKind;
use crate::admission::Operation;
use crate::error::ApiError;
use crate::group::GroupResource;
use crate::patch;
use crate::patch::PatchType;
use crate::patch::Shape;
use crate::registry::Parent;
use crate::registry::Registry;
use crate::registry::WriteOptions;
use crate::registry::Written;
use crate::registry::subresource::binding;
use crate::registry::subresource::eviction;
use crate::registry::subresource::scale;
use crate::registry::subresource::token;
use crate::request::Verb;
use crate::schema;
use crate::storage::Storage;

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
        ("scale", Verb::Get) => {
            let scale = scale::get_scale(&parent).await?;
            Ok(json_response(
                StatusCode::OK,
                scale.to_string().into_bytes(),
            ))
        }
        ("scale", Verb::Update) => {
            let typed = typed_scale(&body::parse(&req.body)?)?;
            let written = scale::update_scale(&parent, typed, write).await?;
            let response = json_response(StatusCode::OK, written.body);
            Ok(with_warnings(response, &written.warnings))
        }
        ("scale", Verb::Patch) => {
            let written = patch_scale(&parent, req, write).await?;
            let response = json_response(StatusCode::OK, written.body);
            Ok(with_warnings(response, &written.warnings))
        }
        ("binding", Verb::Create) => {
            let binding: Binding = body::typed(&body::parse(&req.body)?, &["v1"], "Binding")?;
            let warnings = binding::bind(&parent, &binding, req.now, write).await?;
            Ok(with_warnings(success(), &warnings))
        }
        ("eviction", Verb::Create) => {
            let warnings = evict(&parent, req, write).await?;
            Ok(with_warnings(success(), &warnings))
        }
        ("token", Verb::Create) => {
            let api_version = format!("authentication.{}/v1", req.flavor.group_domain());
            let value = body::parse(&req.body)?;
            let request: TokenRequest = body::typed(&value, &[&api_version], "TokenRequest")?;
            let signer = req.token_signer.as_deref();
            let at = (req.now, write.dry_run);
            let issued =
                token::issue(&parent, request, signer, at, req.flavor, &req.random).await?;
            let response = json_response(StatusCode::CREATED, issued.body);
            Ok(with_warnings(response, &issued.warnings))
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
    let write = write_options(req.query, WriteKind::Create, req.flavor, req.sender())?;
    let binding: Binding = body::typed(&body::parse(&req.body)?, &["v1"], "Binding")?;
    let warnings =
        binding::bind_collection(storage, registry, &info.namespace, &binding, req.now, write)
            .await?;
    Ok(with_warnings(success(), &warnings))
}

/// `value` as a Scale (400 for another kind or a field of the wrong type).
fn typed_scale(value: &Value) -> Result<Scale, ApiError> {
    body::typed(value, &[scale::SCALE_API_VERSION], "Scale")
}

/// Applies the PATCH in `req` to the parent's current Scale and sets the replicas it asks
/// for (upstream patches the Scale, not the parent). A patch that leaves the `resourceVersion`
/// it read alone applies unconditionally, as upstream's patcher retries such a patch; one that
/// sets another `resourceVersion` must match the parent (409 otherwise). An apply is
/// [`apply_scale`]'s.
async fn patch_scale(
    parent: &Parent<'_>,
    req: &ResourceRequest<'_>,
    write: WriteOptions,
) -> Result<Written, ApiError> {
    let kind = patch_type(req.content_type, parent.store.custom().is_some())?;
    if kind == PatchType::Apply {
        return apply_scale(parent, req, write).await;
    }
    let current = scale::get_scale(parent).await?;
    let read_at = current.pointer("/metadata/resourceVersion").cloned();
    let mut patched = patch::apply(kind, current, &req.body, Shape::untyped())?;
    if patched.pointer("/metadata/resourceVersion") == read_at.as_ref()
        && let Some(meta) = patched.get_mut("metadata").and_then(Value::as_object_mut)
    {
        meta.remove("resourceVersion");
    }
    scale::update_scale(parent, typed_scale(&patched)?, write).await
}

/// The apply configuration of `req` to the Scale of `parent`, applied to the parent (400 when
/// it is no Scale or sets `metadata.managedFields`).
async fn apply_scale(
    parent: &Parent<'_>,
    req: &ResourceRequest<'_>,
    write: WriteOptions,
) -> Result<Written, ApiError> {
    let decoded = schema::decode(&schema::Schema::any(), &req.body, schema::Format::Yaml)
        .map_err(|e| ApiError::BadRequest(format!("error decoding YAML: {e}")))?;
    let config = decoded.value;
    typed_scale(&config)?;
    if config
        .pointer("/metadata/managedFields")
        .is_some_and(|m| !m.is_null())
    {
        return Err(ApiError::BadRequest(
            "metadata.managedFields must be nil".into(),
        ));
    }
    scale::apply_scale(parent, &config, write, req.info).await
}

/// Evicts the pod `parent` as the Eviction in `req`'s body asks, once admitted, deleting it
/// with the Eviction's DeleteOptions (or the query's): 400 when the Eviction names another
/// pod. Answers admission's warnings.
async fn evict(
    parent: &Parent<'_>,
    req: &ResourceRequest<'_>,
    write: WriteOptions,
) -> Result<Vec<String>, ApiError> {
    let value = body::parse(&req.body)?;
    let typed: Eviction = body::typed(&value, &["policy/v1", "policy/v1beta1"], "Eviction")?;
    eviction::check_name(parent, &typed)?;
    let kind = ObjectKind {
        group: "policy",
        version: match value.get("apiVersion").and_then(Value::as_str) {
            Some("policy/v1beta1") => "v1beta1",
            _ => "v1",
        },
        kind: "Eviction",
    };
    let create = (Operation::Create, "eviction");
    let (typed, warnings) = parent
        .admit(create, kind, &typed, None, write.dry_run)
        .await?;
    // The Eviction as admitted: a mutating plugin may have changed its options.
    let options_body = match &typed.delete_options {
        Some(options) => serde_json::to_vec(options)
            .map_err(|e| ApiError::Internal(format!("the eviction's options: {e}")))?,
        None => Vec::new(),
    };
    let options = delete_options(&options_body, req.query, req.flavor)?;
    let write = WriteOptions {
        dry_run: write.dry_run || options.dry_run,
        admitted: true,
        ..WriteOptions::default()
    };
    eviction::evict(parent, &options, req.now, write).await?;
    Ok(warnings)
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
