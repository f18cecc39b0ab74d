//! Response compression, the feature `APIResponseCompression` (R-RES-133): as kube-apiserver's
//! response writer does it, a complete response body larger than [`COMPRESSION_THRESHOLD`] is
//! gzip-compressed when the request's `Accept-Encoding` lists `gzip`. In practice that is a
//! large get or list; watches stream (their length is not known up front) and are not
//! compressed by it. The other response headers are kept; `Content-Length` goes, as the
//! compressed length is not known before the body is sent.
//!
//! The feature `WatchListCompression` compresses one kind of watch: a streaming list (a watch
//! with `sendInitialEvents=true` and `allowWatchBookmarks=true`, marked [`WatchListStream`] by
//! the watch handler), as kube-apiserver 1.37's watch writer does it (`perFlushGzipWriter` in
//! `endpoints/handlers/watch.go`): whatever the size, each body frame, which the client gets
//! as soon as it is written, is one complete gzip member, so a client decompressing the
//! stream sees every event without waiting for more.

use std::io::Write as _;

use axum::Router;
use axum::body::Body;
use axum::body::Bytes;
use axum::body::HttpBody;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use flate2::Compression;
use flate2::write::GzEncoder;
use futures::TryStreamExt as _;
use http::HeaderMap;
use http::HeaderValue;
use http::header;
use tower_http::CompressionLevel;
use tower_http::compression::CompressionLayer;
use tower_http::compression::Predicate;

/// Responses up to this many bytes go out uncompressed (kube-apiserver's
/// `defaultGzipThresholdBytes`, 128 KiB): below it gzip costs more time than it saves.
const COMPRESSION_THRESHOLD: u64 = 128 * 1024;

/// Compresses `router`'s large responses for clients that accept gzip.
pub(crate) fn compress(router: Router) -> Router {
    router
        .layer(
            CompressionLayer::new()
                .quality(CompressionLevel::Fastest)
                .compress_when(LargeAndComplete),
        )
        .layer(axum::middleware::map_request(negotiate))
}

/// Only bodies of known length above [`COMPRESSION_THRESHOLD`].
#[derive(Debug, Clone, Copy)]
struct LargeAndComplete;

impl Predicate for LargeAndComplete {
    fn should_compress<B>(&self, response: &http::Response<B>) -> bool
    where
        B: HttpBody,
    {
        response
            .body()
            .size_hint()
            .exact()
            .is_some_and(|length| length > COMPRESSION_THRESHOLD)
    }
}

/// Reduces `Accept-Encoding` to kube-apiserver's decision: gzip when one of its
/// comma-separated entries is `gzip` (parameters such as `q` aside), otherwise no encoding at
/// all. A client can thus never be answered 406 for the encodings it lists.
async fn negotiate(mut request: Request) -> Request {
    let accepts_gzip = accepts_gzip(request.headers());
    let headers = request.headers_mut();
    headers.remove(header::ACCEPT_ENCODING);
    if accepts_gzip {
        headers.insert(header::ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
    }
    request
}

/// Whether one of the comma-separated entries of `Accept-Encoding` is `gzip` (parameters such
/// as `q` aside).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|entry| {
            let coding = entry.split(';').next().unwrap_or_default().trim();
            coding.eq_ignore_ascii_case("gzip")
        })
}

/// The mark the watch handler puts in the extensions of a streaming list's response, which
/// `WatchListCompression` compresses.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WatchListStream;

/// Compresses `router`'s streaming lists ([`WatchListStream`]) for clients that accept gzip.
pub(crate) fn compress_watch_lists(router: Router) -> Router {
    router.layer(axum::middleware::from_fn(gzip_watch_list))
}

async fn gzip_watch_list(request: Request, next: Next) -> Response {
    let accepts_gzip = accepts_gzip(request.headers());
    let response = next.run(request).await;
    if !accepts_gzip
        || response.extensions().get::<WatchListStream>().is_none()
        || response.headers().contains_key(header::CONTENT_ENCODING)
    {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    parts
        .headers
        .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    parts
        .headers
        .append(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    let frames = body
        .into_data_stream()
        .and_then(|frame| async move { gzip_member(&frame).map_err(axum::Error::new) });
    Response::from_parts(parts, Body::from_stream(frames))
}

/// `frame` as one complete gzip member, at kube-apiserver's level (the fastest).
fn gzip_member(frame: &[u8]) -> std::io::Result<Bytes> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
    encoder.write_all(frame)?;
    encoder.finish().map(Bytes::from)
}
