//! Request transfer codings other than plain `chunked`, refused before the router sees the
//! request, as Go's `net/http` (kube-apiserver's server) refuses them: a body framed by codings
//! the server does not implement (`gzip, chunked`) must not be read as if it were plain
//! chunked, and several `Transfer-Encoding` fields are a request-smuggling vector.
//!
//! Go accepts exactly one `Transfer-Encoding` field whose value is `chunked` (any case) and
//! answers anything else `501 Not Implemented`, `Content-Type: text/plain; charset=utf-8`,
//! `Connection: close`, body `Unsupported transfer encoding` (not echoing the value), then
//! closes the connection. hyper itself answers 400 to a coding list whose last coding is not
//! `chunked` (its parser cannot frame such a body), before this check can run.

use axum::body::Body;
use http::HeaderMap;
use http::HeaderValue;
use http::Response;
use http::StatusCode;
use http::header;

/// The body of the refusal, Go's words.
const UNSUPPORTED: &str = "Unsupported transfer encoding";

/// Whether `headers` carry a transfer coding other than one plain `chunked`.
fn unsupported(headers: &HeaderMap) -> bool {
    let mut codings = headers.get_all(header::TRANSFER_ENCODING).iter();
    match (codings.next(), codings.next()) {
        (None, _) => false,
        (Some(only), None) => !only
            .as_bytes()
            .trim_ascii()
            .eq_ignore_ascii_case(b"chunked"),
        (Some(_), Some(_)) => true,
    }
}

/// The 501 answer for a request whose `headers` carry an unsupported transfer coding, if they
/// do.
pub(super) fn refusal(headers: &HeaderMap) -> Option<Response<Body>> {
    if !unsupported(headers) {
        return None;
    }
    let mut response = Response::new(Body::from(UNSUPPORTED));
    *response.status_mut() = StatusCode::NOT_IMPLEMENTED;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    Some(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(codings: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for coding in codings {
            headers.append(header::TRANSFER_ENCODING, coding.parse().unwrap());
        }
        headers
    }

    #[test]
    fn only_one_plain_chunked_coding_passes() {
        assert!(refusal(&headers(&[])).is_none());
        assert!(refusal(&headers(&["chunked"])).is_none());
        assert!(refusal(&headers(&["Chunked"])).is_none());
        for refused in [
            &["gzip, chunked"][..],
            &["chunked, chunked"],
            &["gzip"],
            &["identity"],
            &["chunked", "chunked"],
            &["gzip", "chunked"],
        ] {
            let response = refusal(&headers(refused)).unwrap();
            assert_eq!(
                response.status(),
                StatusCode::NOT_IMPLEMENTED,
                "{refused:?}"
            );
            assert_eq!(response.headers()[header::CONNECTION], "close");
        }
    }
}
