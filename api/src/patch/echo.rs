//! Bounded quotes of the request in patch errors: a path or a value a message names is cut
//! to [`ECHO_LIMIT`] bytes, so an error never costs more than its excerpt to build or send.

use std::io;

use serde::Serialize;

/// The most bytes of a path or value from the request a patch error quotes; longer ones are
/// cut at a character boundary and marked with [`TRUNCATED_MARK`]. Kubernetes' patch errors quote
/// them whole; where its request handling cuts request text it repeats (the user agent), it
/// cuts at 1,024 bytes with this mark, as the API's other error answers do.
pub(super) const ECHO_LIMIT: usize = 1024;

/// What marks a cut quote (Kubernetes' mark for a cut user agent).
const TRUNCATED_MARK: &str = "...TRUNCATED";

/// `text`, cut to [`ECHO_LIMIT`] bytes.
pub(super) fn excerpt(text: &str) -> String {
    if text.len() <= ECHO_LIMIT {
        return text.to_owned();
    }
    let mut end = ECHO_LIMIT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut cut = String::with_capacity(end + TRUNCATED_MARK.len());
    cut.push_str(&text[..end]);
    cut.push_str(TRUNCATED_MARK);
    cut
}

/// The JSON text of `value`, cut to [`ECHO_LIMIT`] bytes; only that much is serialized.
pub(super) fn json_excerpt(value: &impl Serialize) -> String {
    let mut out = Bounded(Vec::with_capacity(KEPT));
    // The writer refusing more is the only way this fails, and then `out` holds more than
    // ECHO_LIMIT bytes, which `excerpt` cuts and marks.
    let _ = serde_json::to_writer(&mut out, value);
    excerpt(&String::from_utf8_lossy(&out.0))
}

/// What [`Bounded`] keeps: past [`ECHO_LIMIT`], so a cut text is seen to be longer.
const KEPT: usize = ECHO_LIMIT + 4;

/// A writer that keeps [`KEPT`] bytes, then refuses more.
struct Bounded(Vec<u8>);

impl io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = KEPT.saturating_sub(self.0.len());
        if room == 0 {
            return Err(io::Error::other("excerpt complete"));
        }
        let take = room.min(buf.len());
        self.0.extend_from_slice(&buf[..take]);
        Ok(take)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn short_text_is_whole_and_long_text_is_cut() {
        assert_eq!(excerpt("/a/b"), "/a/b");
        let long = "é".repeat(ECHO_LIMIT);
        let cut = excerpt(&long);
        assert!(
            cut.len() <= ECHO_LIMIT + TRUNCATED_MARK.len(),
            "{}",
            cut.len()
        );
        assert!(cut.ends_with(TRUNCATED_MARK));
        assert_eq!(json_excerpt(&json!({"a": 1})), r#"{"a":1}"#);
        let big = json!({"k": "x".repeat(1 << 20)});
        let shown = json_excerpt(&big);
        assert!(
            shown.len() <= ECHO_LIMIT + TRUNCATED_MARK.len(),
            "{}",
            shown.len()
        );
        assert!(shown.starts_with(r#"{"k":"xxx"#) && shown.ends_with(TRUNCATED_MARK));
    }
}
