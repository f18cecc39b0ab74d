//! A resource request, by verb, to its store (spec 000 "Verbs", R-RES-083..093). Scope,
//! subresource and verb are checked against the resource type first: unknown resources and
//! paths of the wrong scope are 404, verbs the type does not serve are 405. A request to a
//! deprecated kind then answers, success or failure, with its deprecation `Warning` first and
//! the [`DeprecatedApi`] in the response's extensions (crate::deprecation).

use std::sync::Arc;

use axum::response::IntoResponse;
use axum::response::Response;
use bytes::Bytes;
use chrono::DateTime;
use chrono::Utc;
use http::StatusCode;

use super::delete_options::delete_options;
use super::json_response;
use super::response::streamed_json_response;
use super::response::streamed_protobuf_response;
use super::review;
use super::subresource;
use super::unsafe_delete;
use super::warnings::with_warnings;
use super::write_options::Sender;
use super::write_options::WriteKind;
use super::write_options::write_options;
use crate::auth::AuthorizerChain;
use crate::auth::Requester;
use crate::auth::TokenChain;
use crate::auth::UserInfo;
use crate::codec;
use crate::config::WatchSettings;
use crate::deprecation::DeprecatedApi;
use crate::deprecation::DeprecationTable;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::health::Readiness;
use crate::patch::PATCH_MEDIA_TYPES;
use crate::patch::PatchType;
use crate::random::RandomSource;
use crate::registry::DeleteOptions;
use crate::registry::Registry;
use crate::registry::Store;
use crate::registry::WriteOptions;
use crate::request::ListOptions;
use crate::request::QueryParams;
use crate::request::RequestInfo;
use crate::request::Verb;
use crate::request::get_consistency;
use crate::schema::Format;
use crate::serviceaccount::TokenSigner;
use crate::storage::Storage;
use crate::watch::EncodedEvents;

/// What a resource handler needs besides the request.
pub(crate) struct ResourceRequest<'a> {
    /// The request's path info.
    pub info: &'a RequestInfo,
    /// The query.
    pub query: &'a QueryParams,
    /// The body (empty for reads), in JSON or YAML whatever format it was sent in.
    pub body: Bytes,
    /// The format of `body` (a patch's is its patch type's).
    pub body_format: Format,
    /// The negotiated response format.
    pub output: codec::Output,
    /// What writing the response in another format needs.
    pub context: &'a codec::Context,
    /// The body's `Content-Type`, if sent.
    pub content_type: Option<&'a str>,
    /// The `User-Agent`, if sent (a write's field manager when `fieldManager` is unset).
    pub user_agent: Option<&'a str>,
    /// The naming flavor (the group of `DeleteOptions` in errors).
    pub flavor: Flavor,
    /// The request's time.
    pub now: DateTime<Utc>,
    /// How long watches run and how often they report progress.
    pub watch: WatchSettings,
    /// The watch events this replica encoded for other watches.
    pub watch_events: Arc<EncodedEvents>,
    /// The signer of service account tokens, if configured.
    pub token_signer: Option<Arc<dyn TokenSigner>>,
    /// The bearer token authenticators (TokenReview asks them as requests do).
    pub tokens: &'a TokenChain,
    /// The audiences of the API (a TokenReview's default).
    pub api_audiences: &'a [String],
    /// The randomness of token ids and watch timeouts.
    pub random: RandomSource,
    /// The authenticated user (the self reviews answer about them).
    pub user: &'a UserInfo,
    /// The authorizer chain (the access reviews and the escalation checks ask it).
    pub authz: &'a AuthorizerChain,
    /// Whether this replica can serve (componentstatuses).
    pub readiness: &'a dyn Readiness,
    /// The deprecated kinds (their requests warn).
    pub deprecations: &'a DeprecationTable,
    /// Whether `AllowUnsafeMalformedObjectDeletion` is on (the forced delete of corrupt
    /// objects, and lists naming every corrupt object they meet).
    pub unsafe_delete: bool,
}

impl ResourceRequest<'_> {
    /// Who sends the request, for its write's field manager.
    pub(crate) fn sender(&self) -> Sender<'_> {
        Sender {
            user_agent: self.user_agent,
            now: self.now,
        }
    }
}

/// The patch type a PATCH's `Content-Type` names; 415 listing the served ones otherwise.
/// Custom resources take no strategic merge patch: they have no patch strategies.
pub(crate) fn patch_type(content_type: Option<&str>, custom: bool) -> Result<PatchType, ApiError> {
    let served = |t: &PatchType| !(custom && *t == PatchType::Strategic);
    PatchType::from_content_type(content_type)
        .filter(served)
        .ok_or_else(|| ApiError::UnsupportedMediaType {
            accepted: (PATCH_MEDIA_TYPES.iter().copied())
                .filter(|m| PatchType::from_content_type(Some(m)).is_some_and(|t| served(&t)))
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// Serves a resource request of an authorized user.
pub(crate) async fn serve_resource(
    storage: &dyn Storage,
    registry: &Registry,
    req: ResourceRequest<'_>,
) -> Result<Response, ApiError> {
    let info = req.info;
    if info.api_group.is_empty() && info.api_version == "v1" && info.resource == "bindings" {
        // Boxed: this rare branch's state would otherwise be part of every request's.
        return Box::pin(subresource::serve_bindings(storage, registry, &req)).await;
    }
    let lookup = || registry.lookup(&info.api_group, &info.api_version, &info.resource);
    let store = match lookup() {
        Some(store) => store,
        None => {
            // Right after start-up the custom kinds may not be known yet.
            registry.custom_resources().first_sync().await;
            lookup().ok_or(ApiError::UnknownResource)?
        }
    };
    let rt = store.resource();
    let namespace = info.is_namespaced_path().then_some(info.namespace.as_str());
    if !rt.is_namespaced() && namespace.is_some() {
        return Err(ApiError::UnknownResource);
    }
    let not_allowed = || ApiError::MethodNotAllowed {
        resource: rt.group_resource(),
        name: info.name.clone(),
    };
    let sub = info.subresource.as_str();
    if info.parts.len() > 3 || (!sub.is_empty() && !rt.subresources.iter().any(|s| s == sub)) {
        return Err(ApiError::UnknownResource);
    }
    let supported = if sub.is_empty() {
        rt.supports(info.verb.as_str())
    } else {
        rt.subresource_supports(sub, info.verb.as_str())
    };
    if !supported {
        return Err(not_allowed());
    }
    let deprecated = req.deprecations.resolve(rt, sub);
    let mut warnings: Vec<String> = deprecated.iter().map(|(d, _)| d.warning.clone()).collect();
    warnings.extend(store.custom().and_then(|c| c.deprecation.clone()));
    let requester = Requester {
        user: req.user.clone(),
        authz: req.authz.clone(),
    };
    if info.verb == Verb::Create && store.custom().is_some_and(|c| c.terminating) {
        return Err(ApiError::DefinitionTerminating {
            resource: rt.group_resource(),
            verb: info.verb.as_str().to_owned(),
        });
    }
    let dispatched = dispatch(storage, registry, &store, &req, &mut warnings);
    let response = match requester.scope(dispatched).await {
        Ok(response) => response,
        Err(error) if deprecated.is_none() => return Err(error),
        Err(error) => error.into_response(),
    };
    let mut response = with_warnings(response, &warnings);
    if let Some((_, api)) = deprecated {
        response.extensions_mut().insert::<DeprecatedApi>(api);
    }
    Ok(response)
}

/// Serves a request whose resource, subresource and verb were checked, recording the
/// warnings of its answer after those in `warnings`.
async fn dispatch(
    storage: &dyn Storage,
    registry: &Registry,
    store: &Store,
    req: &ResourceRequest<'_>,
    warnings: &mut Vec<String>,
) -> Result<Response, ApiError> {
    let info = req.info;
    let rt = store.resource();
    let namespace = info.is_namespaced_path().then_some(info.namespace.as_str());
    let not_allowed = || ApiError::MethodNotAllowed {
        resource: rt.group_resource(),
        name: info.name.clone(),
    };
    let sub = info.subresource.as_str();
    // A patch's media type is checked first, as Kubernetes does (R-RES-130: no CBOR patch).
    let patch_type = match info.verb {
        Verb::Patch => Some(patch_type(req.content_type, store.custom().is_some())?),
        _ => None,
    };
    // The options are checked before the body is read, as Kubernetes does. A dry run is
    // authorized as the same write (R-RES-196): the verb above never depends on `dryRun`.
    let (mut write, deletion) = match info.verb {
        Verb::Create => (
            write_options(req.query, WriteKind::Create, req.flavor, req.sender())?,
            DeleteOptions::default(),
        ),
        Verb::Update => (
            write_options(req.query, WriteKind::Update, req.flavor, req.sender())?,
            DeleteOptions::default(),
        ),
        Verb::Patch => {
            let kind = WriteKind::Patch(patch_type.ok_or_else(not_allowed)?);
            (
                write_options(req.query, kind, req.flavor, req.sender())?,
                DeleteOptions::default(),
            )
        }
        Verb::Delete | Verb::DeleteCollection => {
            let mut options = delete_options(&req.body, req.query, req.flavor)?;
            unsafe_delete::check_options(&mut options, req.unsafe_delete, &info.verb, req.flavor)?;
            let write = WriteOptions {
                dry_run: options.dry_run,
                ..WriteOptions::default()
            };
            (write, options)
        }
        _ => Default::default(),
    };
    if !req.body.is_empty() && patch_type.is_none() {
        write.format = req.body_format;
    }
    // Namespaced items live only under their namespace; the all-namespaces path serves lists.
    let item_ns = match (rt.is_namespaced(), namespace) {
        (true, Some(ns)) => Some(ns),
        (true, None) => None,
        (false, _) => Some(""),
    };
    if review::is_computed(rt) {
        return review::serve(storage, registry, rt, item_ns, req).await;
    }
    if subresource::is_handled(sub) {
        let namespace = item_ns.ok_or(ApiError::UnknownResource)?;
        let parent = crate::registry::Parent {
            storage,
            registry,
            store,
            namespace,
            name: &info.name,
        };
        return subresource::serve_subresource(parent, req, write).await;
    }
    match (&info.verb, item_ns) {
        (Verb::List, _) => {
            let listed = |e| unsafe_delete::list_error(e, req.unsafe_delete, rt.group_resource());
            let options = ListOptions::from_query(req.query, false, req.flavor)?;
            if req.output.format == codec::Format::Protobuf
                && req.output.view == codec::View::Object
            {
                let cache = &req.context.protobuf_cache;
                let body = store
                    .list_protobuf(storage, namespace, &options, req.context.flavor, cache)
                    .await
                    .map_err(listed)?;
                return Ok(streamed_protobuf_response(body, req.context.flavor));
            }
            let body = store
                .list_streamed(storage, namespace, &options)
                .await
                .map_err(listed)?;
            Ok(streamed_json_response(body))
        }
        (Verb::Watch, _) if sub.is_empty() => {
            let target = crate::watch::WatchTarget {
                namespace,
                name: &info.name,
                query: req.query,
                flavor: req.flavor,
                settings: req.watch,
                random: req.random.clone(),
                encoded: req.watch_events.clone(),
                output: req.output,
                context: req.context.clone(),
            };
            crate::watch::serve_watch(storage, store, target).await
        }
        (Verb::DeleteCollection, Some(_)) if sub.is_empty() => {
            warnings.extend(store.delete_warnings(&deletion));
            let options = ListOptions::from_query(req.query, false, req.flavor)?;
            let body = store
                .delete_collection(storage, namespace, &options, &deletion, req.now, write)
                .await?;
            Ok(json_response(StatusCode::OK, body))
        }
        (Verb::Get, Some(ns)) => {
            let consistency = get_consistency(req.query.get("resourceVersion"))?;
            let body = store.get(storage, ns, &info.name, consistency).await?;
            Ok(json_response(StatusCode::OK, body))
        }
        (Verb::Create, Some(ns)) if info.name.is_empty() && sub.is_empty() => {
            let written = store.create(storage, ns, &req.body, req.now, write).await?;
            warnings.extend(written.warnings);
            Ok(json_response(StatusCode::CREATED, written.body))
        }
        (Verb::Update, Some(ns)) => {
            let written = store
                .update(storage, ns, &info.name, sub, &req.body, write)
                .await?;
            warnings.extend(written.warnings);
            Ok(json_response(StatusCode::OK, written.body))
        }
        (Verb::Patch, Some(ns)) if patch_type == Some(PatchType::Apply) => {
            let target = (ns, info.name.as_str(), sub);
            let applied = store.apply(storage, target, &req.body, write, info).await?;
            warnings.extend(applied.written.warnings);
            let status = match applied.created {
                true => StatusCode::CREATED,
                false => StatusCode::OK,
            };
            Ok(json_response(status, applied.written.body))
        }
        (Verb::Patch, Some(ns)) => {
            let kind = patch_type.ok_or_else(not_allowed)?;
            let target = (ns, info.name.as_str(), sub);
            let written = store.patch(storage, target, kind, &req.body, write).await?;
            warnings.extend(written.warnings);
            Ok(json_response(StatusCode::OK, written.body))
        }
        (Verb::Delete, Some(ns)) if sub.is_empty() && deletion.ignore_store_read_errors => {
            unsafe_delete::authorize(req.authz, req.user, info).await?;
            let body = store
                .delete_corrupt(storage, ns, &info.name, &deletion, req.now, write)
                .await?;
            Ok(json_response(StatusCode::OK, body))
        }
        (Verb::Delete, Some(ns)) if sub.is_empty() => {
            warnings.extend(store.delete_warnings(&deletion));
            let deleted = store
                .delete(storage, ns, &info.name, &deletion, req.now, write)
                .await?;
            warnings.extend(deleted.warnings);
            // 202 where Kubernetes answers it: the object stays (finalizers, a grace period)
            // and the client asked for its dependents with `orphanDependents: false`.
            let status = match !deleted.removed && deletion.orphan_dependents == Some(false) {
                true => StatusCode::ACCEPTED,
                false => StatusCode::OK,
            };
            Ok(json_response(status, deleted.body))
        }
        (Verb::Get | Verb::Update | Verb::Patch | Verb::Delete, None) => {
            Err(ApiError::UnknownResource)
        }
        _ => Err(not_allowed()),
    }
}
