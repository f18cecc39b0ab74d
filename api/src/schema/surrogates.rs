//! Lone UTF-16 surrogate escapes in a JSON body, read as Go's `encoding/json` reads them: a
//! `\uD800`..`\uDFFF` escape that is not the first half of a valid pair decodes to U+FFFD
//! (serde_json refuses it). One linear pass finds them; the body is copied once, and only
//! when it has one, and each is rewritten in place as `\ufffd` (the same six bytes, so
//! every line and column the parser reports stays true).

use std::borrow::Cow;

/// The escape a lone surrogate becomes.
const REPLACEMENT: &[u8; 6] = b"\\ufffd";

/// `body` with every lone surrogate escape inside a string replaced by `\ufffd`; borrowed
/// when there is none. Text outside strings is left alone (the parser judges it).
pub(super) fn replace_lone_surrogates(body: &[u8]) -> Cow<'_, [u8]> {
    if !body.contains(&b'\\') {
        return Cow::Borrowed(body);
    }
    let mut copy: Option<Vec<u8>> = None;
    let mut in_string = false;
    let mut i = 0;
    while i < body.len() {
        match (in_string, body[i]) {
            (false, b'"') => in_string = true,
            (true, b'"') => in_string = false,
            (true, b'\\') => match escaped_unit(body, i) {
                // A valid pair: the parser decodes it.
                Some(0xD800..=0xDBFF)
                    if matches!(escaped_unit(body, i + 6), Some(0xDC00..=0xDFFF)) =>
                {
                    i += 12;
                    continue;
                }
                Some(0xD800..=0xDFFF) => {
                    let out = copy.get_or_insert_with(|| body.to_vec());
                    out[i..i + REPLACEMENT.len()].copy_from_slice(REPLACEMENT);
                    i += REPLACEMENT.len();
                    continue;
                }
                Some(_) => {
                    i += 6;
                    continue;
                }
                // Any other escape is two bytes; the parser judges a bad one.
                None => i += 1,
            },
            _ => {}
        }
        i += 1;
    }
    copy.map_or(Cow::Borrowed(body), Cow::Owned)
}

/// The UTF-16 code unit of the `\uXXXX` escape starting at `at`, if there is one.
fn escaped_unit(body: &[u8], at: usize) -> Option<u16> {
    let escape = body.get(at..at + 6)?;
    if escape[..2] != *b"\\u" {
        return None;
    }
    let hex = std::str::from_utf8(&escape[2..]).ok()?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(hex, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(body: &str) -> Result<String, serde_json::Error> {
        serde_json::from_slice(&replace_lone_surrogates(body.as_bytes()))
    }

    // Go's encoding/json: a lone surrogate is U+FFFD, a valid pair decodes, an invalid pair
    // is two replacements (or one and a decoded pair).
    #[test]
    fn lone_surrogates_become_replacement_characters() {
        assert_eq!(decoded(r#""\ud800""#).expect("decodes"), "\u{FFFD}");
        assert_eq!(decoded(r#""a\udc00b""#).expect("decodes"), "a\u{FFFD}b");
        assert_eq!(decoded(r#""\ud83d\ude00""#).expect("decodes"), "😀");
        assert_eq!(
            decoded(r#""\ud800\ud800\udc00""#).expect("decodes"),
            "\u{FFFD}\u{10000}"
        );
        assert_eq!(
            decoded(r#""\udc00\ud800""#).expect("decodes"),
            "\u{FFFD}\u{FFFD}"
        );
        assert_eq!(decoded(r#""\ud800\u0041""#).expect("decodes"), "\u{FFFD}A");
        assert_eq!(decoded(r#""\\ud800""#).expect("decodes"), "\\ud800");
        assert_eq!(decoded(r#""\"\ud800""#).expect("decodes"), "\"\u{FFFD}");
    }

    #[test]
    fn borrows_unless_it_rewrites() {
        for body in [
            r#"{"a":"b"}"#,
            r#"{"a":"\u00e9\ud83d\ude00\n"}"#,
            r#"{"\\":1}"#,
        ] {
            assert!(matches!(
                replace_lone_surrogates(body.as_bytes()),
                Cow::Borrowed(_)
            ));
        }
        let rewritten = replace_lone_surrogates(br#"{"\ud800":"\udfff"}"#);
        assert_eq!(&*rewritten, br#"{"\ufffd":"\ufffd"}"#);
    }

    #[test]
    fn text_outside_strings_and_broken_escapes_are_left_to_the_parser() {
        let body = br#"{"a":"\ud8"} \ud800"#;
        assert_eq!(&*replace_lone_surrogates(body), body);
        assert!(decoded(r#""\ud80""#).is_err());
        assert!(decoded(r#""\ud800"#).is_err(), "unterminated");
    }
}
