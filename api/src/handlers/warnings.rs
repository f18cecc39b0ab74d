//! `Warning` response headers (RFC 7234 §5.5, as Kubernetes sends them): one header value
//! per warning, `299 - "<text>"`, code 299 (miscellaneous persistent warning) and no agent,
//! deduplicated and capped as kube-apiserver's warning recorder caps them
//! (`k8s.io/apiserver/pkg/endpoints/filters/warning.go`).

use std::collections::HashSet;

use axum::response::Response;
use http::HeaderValue;
use http::header;

use crate::limits::MAX_WARNING_RUNES;
use crate::limits::TRUNCATED_WARNING_RUNES;

/// The header value of one warning: the text as an RFC 7230 quoted-string. Control
/// characters cannot be sent in a header and become U+FFFD, so a field name carrying one
/// (possible through JSON escapes) still gets its warning (Kubernetes drops such a warning).
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

/// `text` cut to its first [`TRUNCATED_WARNING_RUNES`] runes, and its length in runes.
fn truncated(text: &str) -> (&str, usize) {
    match text.char_indices().nth(TRUNCATED_WARNING_RUNES) {
        Some((end, _)) => (&text[..end], TRUNCATED_WARNING_RUNES),
        None => (text, text.chars().count()),
    }
}

/// The header values for `warnings`, as kube-apiserver's recorder writes them: empty and
/// repeated texts are dropped; while the texts total at most [`MAX_WARNING_RUNES`] runes each
/// is written whole; the warning that would pass that total switches to truncating: every
/// warning so far (itself included) is written again cut to [`TRUNCATED_WARNING_RUNES`] runes
/// and the count restarts from their total; from then on each new warning is cut, and once
/// the count reaches [`MAX_WARNING_RUNES`] the rest are dropped. The work is linear in the
/// text.
fn capped(warnings: &[String]) -> Vec<HeaderValue> {
    let mut recorded = HashSet::new();
    let mut ordered: Vec<&str> = Vec::new();
    let mut values = Vec::new();
    let mut written = 0usize;
    let mut truncating = false;
    for text in warnings {
        if text.is_empty() || (truncating && written >= MAX_WARNING_RUNES) {
            continue;
        }
        if !recorded.insert(text.as_str()) {
            continue;
        }
        ordered.push(text);
        let (text, runes) = if truncating {
            truncated(text)
        } else {
            (text.as_str(), text.chars().count())
        };
        let Some(value) = warning_value(text) else {
            continue;
        };
        if truncating || written + runes <= MAX_WARNING_RUNES {
            written += runes;
            values.push(value);
            continue;
        }
        truncating = true;
        written = 0;
        values.clear();
        for text in &ordered {
            let (text, runes) = truncated(text);
            if let Some(value) = warning_value(text) {
                written += runes;
                values.push(value);
            }
        }
    }
    values
}

/// `response` with the `Warning` headers of `warnings`, in order, capped as Kubernetes caps
/// them (see [`capped`]).
pub(crate) fn with_warnings(mut response: Response, warnings: &[String]) -> Response {
    let headers = response.headers_mut();
    for value in capped(warnings) {
        headers.append(header::WARNING, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(warnings: &[String]) -> Vec<String> {
        let response = with_warnings(Response::new(axum::body::Body::empty()), warnings);
        response
            .headers()
            .get_all(header::WARNING)
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect()
    }

    /// The text of a `299 - "<text>"` value, unquoted (the tests' texts hold no backslash).
    fn text(value: &str) -> String {
        value
            .strip_prefix("299 - \"")
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(value)
            .replace("\\\"", "\"")
    }

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

    #[test]
    fn empty_and_repeated_warnings_are_dropped() {
        let warnings = ["a", "", "b", "a", "b", "c"].map(String::from);
        let got = values(&warnings);
        let texts: Vec<String> = got.iter().map(|v| text(v)).collect();
        assert_eq!(texts, ["a", "b", "c"]);
    }

    #[test]
    fn warnings_within_the_budget_are_whole() {
        // Exactly 4,096 runes (multi-byte runes count once).
        let warnings: Vec<String> = (0..16)
            .map(|i| format!("{i:x}{}", "é".repeat(255)))
            .collect();
        let got = values(&warnings);
        assert_eq!(got.len(), 16);
        assert!(got.iter().all(|v| text(v).chars().count() == 256));
    }

    #[test]
    fn passing_the_budget_truncates_every_warning_then_drops_the_rest() {
        // Three whole warnings of 1,000 runes, then one of 1,500 that passes 4,096.
        let mut warnings: Vec<String> = (0..3).map(|i| format!("{i}{}", "x".repeat(999))).collect();
        warnings.push(format!("3{}", "y".repeat(1499)));
        let got = values(&warnings);
        assert_eq!(got.len(), 4, "all are written again, truncated");
        assert!(
            got.iter()
                .all(|v| text(v).chars().count() == TRUNCATED_WARNING_RUNES)
        );
        assert!(text(&got[3]).starts_with("3yyy"));

        // Then each new warning is cut to 256 runes until the count reaches 4,096 (it may
        // pass it by the one that reaches it), and the rest are dropped.
        warnings.extend((4..40).map(|i| format!("{i:02}{}", "z".repeat(998))));
        let got = values(&warnings);
        let runes: Vec<usize> = got.iter().map(|v| text(v).chars().count()).collect();
        assert_eq!(runes.len(), 16, "{runes:?}");
        assert!(runes.iter().all(|r| *r == TRUNCATED_WARNING_RUNES));
        assert_eq!(runes.iter().sum::<usize>(), MAX_WARNING_RUNES);
        assert!(text(&got[15]).starts_with("15z"));
    }

    #[test]
    fn many_short_warnings_stay_within_the_budget() {
        let warnings: Vec<String> = (0..250_000)
            .map(|i| format!("unknown field \"f{i}\""))
            .collect();
        let got = values(&warnings);
        let runes: usize = got.iter().map(|v| text(v).chars().count()).sum();
        assert!(
            runes <= MAX_WARNING_RUNES + TRUNCATED_WARNING_RUNES,
            "{runes}"
        );
        assert!(got.len() < 300, "{}", got.len());
    }
}
