//! Response compression, the feature `APIResponseCompression` (R-RES-133): as kube-apiserver's
//! response writer does it, a complete response body larger than [`COMPRESSION_THRESHOLD`] is
//! gzip-compressed when the request's `Accept-Encoding` lists `gzip`. In practice that is a
//! large get or list; watches stream (their length is not known up front) and are never
//! compressed. The other response headers are kept; `Content-Length` goes, as the compressed
//! length is not known before the body is sent.

use axum::Router;
use axum::body::HttpBody;
use axum::extract::Request;
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
    let accepts_gzip = request
        .headers()
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|entry| {
            let coding = entry.split(';').next().unwrap_or_default().trim();
            coding.eq_ignore_ascii_case("gzip")
        });
    let headers = request.headers_mut();
    headers.remove(header::ACCEPT_ENCODING);
    if accepts_gzip {
        headers.insert(header::ACCEPT_ENCODING, HeaderValue::from_static("gzip"));
    }
    request
}
