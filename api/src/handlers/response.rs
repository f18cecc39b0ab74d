//! Responses of stored bytes (never re-encoded): JSON whole or written while it is sent, and
//! Protobuf lists written while they are sent.

use axum::body::Body;
use axum::response::IntoResponse;
use axum::response::Response;
use http::HeaderValue;
use http::StatusCode;
use http::header;

use crate::codec::Encoded;
use crate::codec::Format;
use crate::flavor::Flavor;
use crate::registry::ListBody;
use crate::registry::ProtobufListBody;

/// A response of `code` with the JSON `body`.
pub(crate) fn json_response(code: StatusCode, body: Vec<u8>) -> Response {
    let mut res = (code, body).into_response();
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    res
}

/// A 200 response of the JSON list `body`, written while it is sent (`Content-Length` is its
/// exact length, known before the first byte).
pub(crate) fn streamed_json_response(body: ListBody) -> Response {
    let mut res = Response::new(Body::new(body));
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    res
}

/// A 200 response of the Protobuf list `body`, written while it is sent (`Content-Length` is
/// its exact length, known before the first byte), already in its format.
pub(crate) fn streamed_protobuf_response(body: ProtobufListBody, flavor: Flavor) -> Response {
    let mut res = Response::new(Body::new(body));
    let content_type = Format::Protobuf.media_type(flavor);
    res.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    res.extensions_mut().insert(Encoded);
    res
}
