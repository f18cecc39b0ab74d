//! `Warning` response headers (RFC 7234 §5.5, as Kubernetes sends them): one header value
//! per warning, `299 - "<text>"`, code 299 (miscellaneous persistent warning) and no agent.

use axum::response::Response;
use http::HeaderValue;
use http::header;

/// The header value of one warning: the text as an RFC 7230 quoted-string. Control
/// characters cannot be sent in a header and become U+FFFD, so a field name carrying one
/// (possible through JSON escapes) still gets its warning.
fn warning_value(text: &str) -> Option<HeaderValue> {
    let mut quoted = String::with_capacity(text.len() + 10);
    quoted.push_str("299 - \"");
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                quoted.push('\\');
                quoted.push(c);
            }
            c if c.is_control() && c != '\t' => quoted.push('\u{FFFD}'),
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    HeaderValue::from_bytes(quoted.as_bytes()).ok()
}

/// `response` with one `Warning` header value per entry of `warnings`, in order.
pub(crate) fn with_warnings(mut response: Response, warnings: &[String]) -> Response {
    let headers = response.headers_mut();
    for value in warnings.iter().filter_map(|w| warning_value(w)) {
        headers.append(header::WARNING, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    // R-RES-186
    #[test]
    fn each_warning_is_one_quoted_299_value() {
        let response = with_warnings(
            Response::new(axum::body::Body::empty()),
            &[
                "unknown field \"spec.foo\"".to_owned(),
                "duplicate field \"a\\b\u{1}\"".to_owned(),
            ],
        );
        let values: Vec<&[u8]> = response
            .headers()
            .get_all(header::WARNING)
            .iter()
            .map(HeaderValue::as_bytes)
            .collect();
        assert_eq!(
            values,
            [
                br#"299 - "unknown field \"spec.foo\"""#.as_slice(),
                "299 - \"duplicate field \\\"a\\\\b\u{FFFD}\\\"\"".as_bytes(),
            ]
        );
    }
}
