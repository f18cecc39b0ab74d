//! Watch over HTTP (spec 000 "Watch", "Events"; R-RES-085, R-RES-086, R-RES-136, R-RES-174):
//! `GET <collection>?watch=1`, an item path with `watch`, or the legacy `/watch/` paths answer
//! 200 with a chunked `application/json` stream of events.
//!
//! # Layout
//! - [`start`]: where a watch starts, from its options.
//! - [`filter`]: which changes a watch sends, and as which event.
//! - [`event`]: how events are encoded.
//! - [`encoded`]: events encoded once for every watch of a replica.
//! - [`stream`]: the body: events, bookmarks, timeout, errors.

// Watches run on request-supplied timeouts and versions: every step of arithmetic is checked or
// saturating (tests are exempt).
#![cfg_attr(
    not(test),
    warn(
        clippy::arithmetic_side_effects,
        clippy::cast_possible_truncation,
        clippy::cast_possible_wrap,
        clippy::cast_sign_loss
    )
)]

mod encoded;
mod event;
mod filter;
mod start;
mod stream;

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use http::HeaderValue;
use http::StatusCode;
use http::header;
use tokio::time::Instant;

pub(crate) use self::encoded::EncodedEvents;
use self::event::BookmarkObject;
use self::event::error_event;
use self::filter::Filter;
use self::start::Start;
use self::stream::Bookmarks;
use self::stream::EventStream;
use crate::codec;
use crate::codec::Output;
use crate::config::WatchSettings;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::random::RandomSource;
use crate::registry::Store;
use crate::request::ListOptions;
use crate::request::QueryParams;
use crate::storage::Storage;
use crate::storage::StorageError;

/// What a watch request watches, besides its resource type.
pub(crate) struct WatchTarget<'a> {
    /// The namespace of the path (`None`: all namespaces, or a cluster-scoped type).
    pub namespace: Option<&'a str>,
    /// The one object watched (empty: the collection). The legacy item path and a
    /// `metadata.name` field selector both set it.
    pub name: &'a str,
    /// The query: the list options.
    pub query: &'a QueryParams,
    /// The naming flavor.
    pub flavor: Flavor,
    /// The server's watch durations.
    pub settings: WatchSettings,
    /// Draws the timeout of a watch without `timeoutSeconds`.
    pub random: RandomSource,
    /// Events other watches of this replica already encoded.
    pub encoded: Arc<EncodedEvents>,
    /// The negotiated format of the events.
    pub output: Output,
    /// What writing events in another format needs.
    pub context: codec::Context,
}

/// The longest a watch runs: a longer `timeoutSeconds` is cut to this. Kubernetes multiplies
/// `timeoutSeconds` into a Go `time.Duration` (nanoseconds in an `int64`), which silently
/// wraps past about 292 years; here the time saturates instead, at ten years: longer than any
/// connection lives, and far below where adding it to the clock could overflow on any
/// platform (tokio's own "far future" is 30 years).
const MAX_WATCH_TIMEOUT: Duration = Duration::from_secs(10 * 365 * 24 * 60 * 60);

/// How long the watch runs, as Kubernetes' watch handler decides: `timeoutSeconds` if given
/// and not zero (a negative one has already passed, so the watch ends once its initial events
/// are sent; at most [`MAX_WATCH_TIMEOUT`]), otherwise a random time between the minimum
/// request timeout and twice it, so that clients do not all reconnect at once.
fn timeout(options: &ListOptions, settings: &WatchSettings, random: &RandomSource) -> Duration {
    match options.timeout_seconds {
        None | Some(0) => {
            let secs = settings.min_request_timeout.as_secs_f64();
            Duration::try_from_secs_f64(secs * (1.0 + random.fraction()))
                .unwrap_or(MAX_WATCH_TIMEOUT)
        }
        Some(secs) => u64::try_from(secs).map_or(Duration::ZERO, Duration::from_secs),
    }
    .min(MAX_WATCH_TIMEOUT)
}

/// When a watch started at `started` ends: `timeout` later. A clock that cannot count that far
/// (none that runs this server) ends it at once rather than panicking.
fn deadline(started: Instant, timeout: Duration) -> Instant {
    started.checked_add(timeout).unwrap_or(started)
}

/// A 200 response streaming `body` of `content_type`. No `Content-Length`: HTTP/1.1 sends it
/// chunked.
fn streaming(body: Body, content_type: &str) -> Response {
    let mut res = Response::new(body);
    *res.status_mut() = StatusCode::OK;
    let content_type = HeaderValue::from_str(content_type)
        .unwrap_or_else(|_| HeaderValue::from_static("application/json"));
    res.headers_mut().insert(header::CONTENT_TYPE, content_type);
    res.extensions_mut().insert(codec::Encoded);
    res
}

/// Serves a watch of `store`'s objects.
///
/// Failures before the stream starts (invalid options, a list that cannot be served) are
/// ordinary error responses. A start version below the compaction point is a 200 whose only
/// event is an ERROR with a 410 `Expired` Status (R-RES-072, as Kubernetes answers); the
/// client lists again and watches from the list's version (R-RES-176).
pub(crate) async fn serve_watch(
    storage: &dyn Storage,
    store: &Store,
    target: WatchTarget<'_>,
) -> Result<Response, ApiError> {
    let started = Instant::now();
    let options = ListOptions::from_query(target.query, true, target.flavor)?;
    let mut encoder = codec::event_encoder(target.output, target.context)?;
    let content_type = encoder
        .as_ref()
        .map_or_else(|| "application/json".to_owned(), |e| e.content_type());
    let rt = store.resource();
    let resource = rt.group_resource();
    let storage_error = |e| ApiError::from_storage(e, &resource, "");
    // One object in a known namespace (or of a cluster-scoped type) is one key: watch only it.
    let prefix = match (target.name, target.namespace, rt.is_namespaced()) {
        ("", _, _) | (_, None, true) => rt.collection_key(target.namespace),
        (name, ns, _) => rt.object_key(ns.unwrap_or_default(), name),
    };
    // The kind decides which fields its field selectors may name (400 otherwise).
    let filter = Filter::new(
        target.name,
        store.selectors(options.selectors.clone())?,
        target.encoded,
        rt.api_version(),
        store.read_conversion(),
    );
    let (initial, after, end_bookmark) = match Start::from_options(&options)? {
        Start::Initial {
            consistency,
            end_bookmark,
        } => {
            let page = storage
                .list(&prefix, None, 0, consistency)
                .await
                .map_err(storage_error)?;
            let end = end_bookmark.then_some(page.revision);
            (page.items, page.revision, end)
        }
        Start::Current(consistency) => {
            let page = storage
                .list(&prefix, None, 1, consistency)
                .await
                .map_err(storage_error)?;
            (Vec::new(), page.revision, None)
        }
        Start::After(revision) => (Vec::new(), revision, None),
    };
    let changes = match storage.watch(&prefix, after).await {
        Ok(changes) => changes,
        Err(e @ StorageError::Compacted { .. }) => {
            let mut event = error_event(&storage_error(e));
            if let Some(encoder) = encoder.as_deref_mut() {
                event = codec::transcode_event(encoder, &event).unwrap_or_default();
            }
            let events = futures::stream::iter([Ok::<_, std::convert::Infallible>(event)]);
            return Ok(streaming(Body::from_stream(events), &content_type));
        }
        Err(e) => return Err(storage_error(e)),
    };
    let bookmarks = options.allow_watch_bookmarks.then(|| Bookmarks {
        object: BookmarkObject {
            kind: rt.kind.clone(),
            api_version: rt.api_version(),
            flavor: target.flavor,
        },
        interval: target.settings.bookmark_interval,
    });
    let deadline = deadline(started, timeout(&options, &target.settings, &target.random));
    let events = EventStream::new(
        initial,
        end_bookmark,
        changes,
        filter,
        resource.clone(),
        bookmarks,
        deadline,
    )
    .encoded_by(encoder);
    Ok(streaming(events.into_body(), &content_type))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timeout_of(seconds: Option<i64>, settings: &WatchSettings) -> Duration {
        let options = ListOptions {
            timeout_seconds: seconds,
            ..ListOptions::default()
        };
        timeout(&options, settings, &RandomSource::seeded(1))
    }

    #[test]
    fn timeouts_saturate_and_negative_ones_have_passed() {
        let settings = WatchSettings::default();
        assert_eq!(timeout_of(Some(7), &settings), Duration::from_secs(7));
        assert_eq!(timeout_of(Some(i64::MAX), &settings), MAX_WATCH_TIMEOUT);
        for passed in [-1, i64::MIN] {
            assert_eq!(timeout_of(Some(passed), &settings), Duration::ZERO);
        }
        for default in [None, Some(0)] {
            let t = timeout_of(default, &settings);
            assert!(t >= settings.min_request_timeout, "{t:?}");
            assert!(t <= settings.min_request_timeout * 2, "{t:?}");
        }
        let endless = WatchSettings {
            min_request_timeout: Duration::MAX,
            ..settings
        };
        assert_eq!(timeout_of(None, &endless), MAX_WATCH_TIMEOUT);
        let now = Instant::now();
        assert!(deadline(now, MAX_WATCH_TIMEOUT) > now);
        assert_eq!(deadline(now, Duration::ZERO), now);
    }
}
