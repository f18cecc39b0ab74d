//! JSON responses of stored bytes (never re-encoded).

use axum::response::IntoResponse;
use axum::response::Response;
use http::HeaderValue;
use http::StatusCode;
use http::header;

/// A response of `code` with the JSON `body`.
pub(crate) fn json_response(code: StatusCode, body: Vec<u8>) -> Response {
    let mut res = (code, body).into_response();
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    res
}
