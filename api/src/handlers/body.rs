//! Request bodies, read whole and at most 3 MiB (R-RES-241).

use axum::body::Body;
use bytes::Bytes;
use http::HeaderMap;
use http::header;
use http_body_util::BodyExt;
use http_body_util::LengthLimitError;
use http_body_util::Limited;

use crate::error::ApiError;
use crate::limits::MAX_BODY_BYTES;

/// Reads `body`; 413 when it is (or announces to be) larger than [`MAX_BODY_BYTES`], 400 when
/// the connection fails mid-body.
pub(crate) async fn read_body(headers: &HeaderMap, body: Body) -> Result<Bytes, ApiError> {
    let too_large = ApiError::RequestEntityTooLarge {
        limit: MAX_BODY_BYTES,
    };
    let announced = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return Err(too_large);
    }
    match Limited::new(body, MAX_BODY_BYTES).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => Err(too_large),
        Err(e) => Err(ApiError::BadRequest(format!(
            "error reading the request body: {e}"
        ))),
    }
}
