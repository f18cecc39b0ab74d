//! The whole HTTP API as one axum [`Router`] (DESIGN.md §2): health and `/version` without
//! credentials; everything else through authentication -> request info -> impersonation ->
//! authorization -> discovery or the resource handlers. Every failure leaves as a `Status`
//! (crate::error), and a panic, should one slip through, becomes a 500 `Status` instead of a
//! dropped connection. Large responses are gzip-compressed while `APIResponseCompression` is
//! on (crate::compression).

use std::any::Any;
use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::routing::get;
use http::HeaderValue;
use http::Method;
use http::StatusCode;
use http::header;
use tower_http::catch_panic::CatchPanicLayer;

use crate::admin;
use crate::admin::AdminRequest;
use crate::admin::ClusterAdmin;
use crate::admission;
use crate::audit;
use crate::auth::Attributes;
use crate::auth::AuthContext;
use crate::auth::AuthenticatorChain;
use crate::auth::AuthorizerChain;
use crate::auth::Impersonation;
use crate::auth::RequestHeaderAuthenticator;
use crate::auth::TokenChain;
use crate::codec;
use crate::compression;
use crate::config::ApiConfig;
use crate::config::Clock;
use crate::config::WatchSettings;
use crate::deprecation::DeprecatedApi;
use crate::deprecation::DeprecationTable;
use crate::discovery;
use crate::discovery::Answer;
use crate::discovery::Discovery;
use crate::error::ApiError;
use crate::features::Feature;
use crate::flavor::Flavor;
use crate::flowcontrol::FlowControl;
use crate::handlers::json_response;
use crate::handlers::read_body;
use crate::handlers::serve_resource;
use crate::health;
use crate::health::Readiness;
use crate::metrics::Metrics;
use crate::metrics::RequestRecord;
use crate::openapi::OpenApi;
use crate::random::RandomSource;
use crate::registry::Registry;
use crate::registry::custom_resource::WebhookCalls;
use crate::request::QueryParams;
use crate::request::RequestInfo;
use crate::request::Verb;
use crate::serviceaccount::IssuerDiscovery;
use crate::serviceaccount::TokenSigner;
use crate::storage::Storage;
use crate::watch::EncodedEvents;

/// Everything a request handler shares; behind one `Arc`, so a request clones a pointer.
struct AppState {
    storage: Arc<dyn Storage>,
    registry: Arc<Registry>,
    authn: AuthenticatorChain,
    tokens: TokenChain,
    api_audiences: Arc<[String]>,
    request_header: Option<Arc<RequestHeaderAuthenticator>>,
    authz: AuthorizerChain,
    impersonation: Impersonation,
    clock: Arc<dyn Clock>,
    random: RandomSource,
    flavor: Flavor,
    watch: WatchSettings,
    watch_events: Arc<EncodedEvents>,
    discovery: Arc<Discovery>,
    token_signer: Option<Arc<dyn TokenSigner>>,
    issuer_discovery: Option<Arc<IssuerDiscovery>>,
    openapi: Arc<OpenApi>,
    readiness: Arc<dyn Readiness>,
    deprecations: Arc<DeprecationTable>,
    flow_control: Arc<FlowControl>,
    metrics: Metrics,
    /// Whether `CBORServingAndStorage` is on (CBOR is offered).
    cbor: bool,
    /// Whether `AllowUnsafeMalformedObjectDeletion` is on.
    unsafe_delete: bool,
    /// The replica's Protobuf encodings of stored object versions.
    protobuf_cache: Arc<crate::codec::protobuf::EncodingCache>,
    cluster_admin: Option<Arc<dyn ClusterAdmin>>,
}

/// The whole HTTP API over `storage`.
pub fn router(storage: Arc<dyn Storage>, config: ApiConfig) -> Router {
    let registry = Registry::new(config.flavor, &config.runtime_config)
        .with_service_ranges(config.flavor, config.service_ranges)
        .with_max_object_bytes(config.max_object_bytes)
        .with_random(&config.random);
    let namespaces = registry
        .builtin_store("", "v1", "namespaces")
        .map(|store| store.resource().key_prefix())
        .unwrap_or_else(|| "/registry/namespaces/".to_owned());
    let context = admission::PluginContext {
        storage: storage.clone(),
        flavor: config.flavor,
        namespaces: admission::Namespaces::follow(storage.clone(), namespaces),
        config: config.admission_config.clone(),
        webhooks: config.webhooks.clone(),
        authorizers: AuthorizerChain::new(config.authorizers.clone()),
        random: config.random.clone(),
        resources: admission::policy::ResourceTable::new(&registry),
    };
    let (chain, missing) = admission::build(&config.admission, &context);
    if !missing.is_empty() {
        tracing::info!(plugins = ?missing, "enabled admission plugins this server does not have");
    }
    let registry = Arc::new(registry.with_admission(Arc::new(chain)));
    if let Some(transport) = config.webhooks.clone() {
        registry.custom_resources().set_webhooks(WebhookCalls::new(
            transport,
            storage.clone(),
            config.flavor,
            config.random.clone(),
        ));
    }
    if let Some(crds) = registry.builtin_store(
        &format!("apiextensions.{}", config.flavor.group_domain()),
        "v1",
        "customresourcedefinitions",
    ) {
        registry
            .custom_resources()
            .follow(storage.clone(), crds.resource().key_prefix());
    }
    let discovery = Arc::new(Discovery::new(registry.clone(), config.flavor));
    let flow_control = FlowControl::new(
        config.flavor,
        config.flow_control,
        &config.metrics,
        storage.clone(),
        registry.clone(),
        config.clock.clone(),
    );
    let (authn, tokens) = config.authentication.chains();
    let authz = AuthorizerChain::new(config.authorizers);
    let impersonation = Impersonation::new(
        authz.clone(),
        config.flavor,
        config
            .feature_gates
            .enabled(Feature::ConstrainedImpersonation),
    );
    let state = AppState {
        flow_control,
        authn,
        tokens,
        request_header: config.authentication.request_header.clone(),
        api_audiences: config.authentication.api_audiences.into(),
        storage,
        discovery,
        openapi: Arc::new(OpenApi::new(registry.clone(), config.flavor)),
        registry,
        authz,
        impersonation,
        clock: config.clock,
        random: config.random,
        flavor: config.flavor,
        watch: config.watch,
        watch_events: Arc::default(),
        token_signer: config.token_signer,
        issuer_discovery: config.issuer_discovery,
        readiness: config.readiness.clone(),
        deprecations: Arc::new(DeprecationTable::new(config.flavor)),
        metrics: config.metrics,
        cbor: config.feature_gates.enabled(Feature::CBORServingAndStorage),
        unsafe_delete: config
            .feature_gates
            .enabled(Feature::AllowUnsafeMalformedObjectDeletion),
        protobuf_cache: Arc::new(crate::codec::protobuf::EncodingCache::new(
            crate::codec::protobuf::MAX_CACHED_BYTES,
        )),
        cluster_admin: config.cluster_admin,
    };
    let auditor = audit::filter::Auditor::new(
        config.audit,
        config.flavor,
        state.clock.clone(),
        state.random.clone(),
    );
    let router = Router::new()
        .route("/version", get(version).fallback(not_allowed))
        .fallback(serve)
        .with_state(Arc::new(state))
        .merge(health::routes(config.readiness))
        .layer(axum::middleware::from_fn_with_state(
            auditor,
            audit::filter::audit,
        ))
        .layer(CatchPanicLayer::custom(panic_response));
    let router = if config.feature_gates.enabled(Feature::WatchListCompression) {
        compression::compress_watch_lists(router)
    } else {
        router
    };
    if config
        .feature_gates
        .enabled(Feature::APIResponseCompression)
    {
        compression::compress(router)
    } else {
        router
    }
}

async fn version() -> Response {
    json_response(
        StatusCode::OK,
        discovery::version_info().to_string().into_bytes(),
    )
}

/// A discovery document, or 304 when the client has it; `ETag` on both, and `Vary: Accept`
/// where `Accept` picks between the legacy and the aggregated form.
fn discovery_response(answer: &Answer) -> Response {
    let mut response = if answer.not_modified {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (StatusCode::OK, answer.document.body.clone()).into_response()
    };
    let headers = response.headers_mut();
    if !answer.not_modified {
        headers.insert(header::CONTENT_TYPE, header_value(&answer.content_type));
    }
    headers.insert(header::ETAG, header_value(&answer.document.etag));
    if answer.varies_by_accept {
        headers.insert(header::VARY, HeaderValue::from_static("accept"));
    }
    response
}

/// A header value of text the server made (media types, hex tags), which is always valid.
fn header_value(text: &str) -> HeaderValue {
    HeaderValue::from_str(text).unwrap_or_else(|_| HeaderValue::from_static(""))
}

async fn not_allowed() -> Response {
    ApiError::MethodNotAllowed {
        resource: Default::default(),
        name: String::new(),
    }
    .into_response()
}

pub(crate) fn panic_response(panic: Box<dyn Any + Send + 'static>) -> Response {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    tracing::error!(panic = %what, "request handler panicked");
    ApiError::Internal("the server failed to handle the request".into()).into_response()
}

/// Every request but health and `/version`, measured from start to end (crate::metrics).
async fn serve(State(state): State<Arc<AppState>>, request: Request) -> Response {
    let query = QueryParams::parse(request.uri().query());
    let info = RequestInfo::parse(request.method(), request.uri().path(), &query);
    let record = RequestRecord::start(&state.metrics, &info, &query, request.headers());
    let accept = request.headers().get(header::ACCEPT).cloned();
    let response = pipeline(&state, request, &query, &info)
        .await
        .unwrap_or_else(IntoResponse::into_response);
    if !info.is_resource_request {
        return record.finish(response);
    }
    // Every answer to a resource request, errors of authentication, authorization and flow
    // control included, in the negotiated format; a 406 goes out in JSON.
    let accept = accept.as_ref().and_then(|v| v.to_str().ok());
    let output = codec::offer(&info, state.cbor, state.flavor)
        .negotiate(accept, state.flavor)
        .unwrap_or(codec::Output::JSON);
    let mut context = codec::Context::of(
        state.flavor,
        state.clock.now(),
        &info,
        &query,
        &state.protobuf_cache,
    );
    context.custom_columns = custom_columns(&state, &info, output);
    record.finish(codec::render(response, output, &context).await)
}

/// The printer columns of a custom kind's Table answer (`None` for anything else).
fn custom_columns(
    state: &AppState,
    info: &RequestInfo,
    output: codec::Output,
) -> Option<Arc<codec::CustomColumns>> {
    if !matches!(output.view, codec::View::Table(_)) {
        return None;
    }
    let store = (state.registry).lookup(&info.api_group, &info.api_version, &info.resource)?;
    store.custom().map(|c| c.columns.clone())
}

async fn pipeline(
    state: &AppState,
    request: Request,
    query: &QueryParams,
    info: &RequestInfo,
) -> Result<Response, ApiError> {
    let (mut parts, body) = request.into_parts();
    let context = AuthContext::new(
        state.clock.now(),
        &state.api_audiences,
        state.flavor,
        state.storage.as_ref(),
        &state.registry,
    );
    let user = match state.authn.authenticate(&parts, &context).await {
        Ok(user) => user,
        Err(error) => {
            audit::unauthenticated(info);
            return Err(error);
        }
    };
    if let Some(proxy) = &state.request_header {
        proxy.clear(&mut parts.headers);
    }
    audit::received(&user, info).await?;
    let user = state
        .impersonation
        .impersonate(&mut parts.headers, user, info)
        .await?;
    // Boxed, because flow control holds the rest of the pipeline across its awaits: inline,
    // that state (tens of KiB) made every enclosing future as large, and each was moved
    // (copied) whole on every request.
    let served = Box::pin(authorized(state, &parts, body, &user, info, query));
    let served = async { served.await.unwrap_or_else(IntoResponse::into_response) };
    Ok(state.flow_control.serve(&user, info, query, served).await)
}

/// The pipeline after flow control: authorization, then discovery, the flow-control dumps
/// or the resource handlers.
async fn authorized(
    state: &AppState,
    parts: &http::request::Parts,
    body: axum::body::Body,
    user: &crate::auth::UserInfo,
    info: &RequestInfo,
    query: &QueryParams,
) -> Result<Response, ApiError> {
    let attributes = Attributes {
        user,
        request: info,
    };
    let authorized = state.authz.authorize(&attributes).await;
    audit::authorization(&authorized);
    authorized?;
    if let (Some(admin), Some(path)) = (&state.cluster_admin, admin_path(&info.path)) {
        let body = read_body(&parts.headers, body).await?;
        let request = AdminRequest {
            method: parts.method.clone(),
            path,
            query,
            body,
            user,
        };
        // Boxed: this rare branch's state would otherwise be part of every request's.
        return Box::pin(admin.serve(request)).await;
    }
    if !info.is_resource_request {
        if parts.method != Method::GET && parts.method != Method::HEAD {
            return Err(ApiError::MethodNotAllowed {
                resource: Default::default(),
                name: String::new(),
            });
        }
        if info.path == "/metrics" {
            return Ok(state.metrics.response());
        }
        let header = |name| parts.headers.get(name).and_then(|v| v.to_str().ok());
        if let Some(answer) = (state.issuer_discovery.as_ref())
            .and_then(|d| d.answer(&info.path, header(http::header::HOST)))
        {
            return Ok(answer);
        }
        if let Some(dump) = state.flow_control.dump(&info.path) {
            return Ok((StatusCode::OK, dump).into_response());
        }
        if OpenApi::owns(&info.path) {
            let answer = state.openapi.answer(
                &info.path,
                query.get("hash"),
                header(http::header::ACCEPT),
                header(http::header::IF_NONE_MATCH),
            )?;
            return Ok(answer.into_response());
        }
        let answer = state.discovery.answer(
            &info.path,
            header(http::header::ACCEPT),
            header(http::header::IF_NONE_MATCH),
        )?;
        return Ok(discovery_response(&answer));
    }
    let header = |name| parts.headers.get(name).and_then(|v| v.to_str().ok());
    let offer = codec::offer(info, state.cbor, state.flavor);
    let output = offer.negotiate(header(http::header::ACCEPT), state.flavor)?;
    let body = read_body(&parts.headers, body).await?;
    audit::request_body(&body);
    let mut content_type = header(http::header::CONTENT_TYPE);
    // An apply in CBOR (with the CBOR gate on) is the apply of its JSON, which is YAML.
    let body = match content_type {
        Some(ct) if state.cbor && info.verb == Verb::Patch && is_apply_cbor(ct) => {
            content_type = Some(crate::patch::APPLY_YAML);
            bytes::Bytes::from(codec::cbor::decode_to_json(&body)?)
        }
        _ => body,
    };
    // A patch's body is its patch type's document (crate::patch); any other body is decoded
    // by its media type into the JSON the pipeline reads.
    let (body_format, body) = if body.is_empty() || info.verb == Verb::Patch {
        (crate::schema::Format::Json, body)
    } else {
        codec::decode_body(offer.input(content_type, state.flavor)?, body, state.flavor)?
    };
    let mut context = codec::Context::of(
        state.flavor,
        state.clock.now(),
        info,
        query,
        &state.protobuf_cache,
    );
    context.custom_columns = custom_columns(state, info, output);
    let req = crate::handlers::ResourceRequest {
        info,
        query,
        body,
        body_format,
        output,
        context: &context,
        content_type,
        user_agent: header(http::header::USER_AGENT),
        flavor: state.flavor,
        now: state.clock.now(),
        watch: state.watch,
        watch_events: state.watch_events.clone(),
        token_signer: state.token_signer.clone(),
        tokens: &state.tokens,
        api_audiences: &state.api_audiences,
        random: state.random.clone(),
        user,
        authz: &state.authz,
        readiness: state.readiness.as_ref(),
        deprecations: &state.deprecations,
        unsafe_delete: state.unsafe_delete,
    };
    let response = serve_resource(state.storage.as_ref(), &state.registry, req)
        .await
        .unwrap_or_else(IntoResponse::into_response);
    if let Some(deprecated) = response.extensions().get::<DeprecatedApi>() {
        state.metrics.deprecated_api_requested(deprecated);
        for (key, value) in deprecated.audit_annotations(state.flavor) {
            audit::annotate(&key, &value);
        }
    }
    Ok(response)
}

/// Whether `content_type` is CBOR apply's (parameters ignored, as for the other patches).
/// The path of an operating API request below [`admin::PREFIX`], without a trailing slash.
fn admin_path(path: &str) -> Option<&str> {
    let rest = path.strip_prefix(admin::PREFIX)?;
    Some(rest.strip_suffix('/').unwrap_or(rest))
}

fn is_apply_cbor(content_type: &str) -> bool {
    content_type.split(';').next().unwrap_or_default().trim() == crate::patch::APPLY_CBOR
}

#[cfg(test)]
mod tests {
    use super::*;

    // A panic in a handler becomes a 500 Status, not a dropped connection.
    #[test]
    fn panics_become_internal_error_statuses() {
        let res = panic_response(Box::new("boom"));
        assert_eq!(res.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(
            res.headers().get("content-type").map(|v| v.as_bytes()),
            Some(&b"application/json"[..])
        );
    }
}
