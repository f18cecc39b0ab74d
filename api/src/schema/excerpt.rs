//! Bounded excerpts of request text for answers and warnings: a field path, a key or a value
//! echoed back is cut to its head and tail around `...`, with control characters shown as
//! U+FFFD, so no body can make an answer, a `Warning` or a log line grow with it.

/// The most bytes of request text one excerpt keeps (`...` included); each byte shows as at
/// most three (a control character becomes U+FFFD). Kubernetes prints a field path whole (its
/// only bound is the 3 MiB request body); Apiary cuts it so that the 100 findings of a strict
/// decoding error stay far under 64 KiB however the body is made (100 × 3 × 128 bytes).
pub const MAX_EXCERPT_BYTES: usize = 128;

/// What stands for the cut middle of a long excerpt.
const ELLIPSIS: &str = "...";

/// `text` as an excerpt (see [`excerpt_of`]).
pub(crate) fn excerpt(text: &str) -> String {
    excerpt_of(&[text])
}

/// `pieces` joined, as an excerpt: whole when together they hold at most
/// [`MAX_EXCERPT_BYTES`], else their first and last bytes around `...` (cut at character
/// boundaries). The work is O(pieces + MAX_EXCERPT_BYTES) however long the pieces are, so a
/// path below a megabyte-long key costs no more than a short one.
pub(crate) fn excerpt_of(pieces: &[&str]) -> String {
    let total: usize = pieces.iter().map(|p| p.len()).sum();
    let mut out = String::with_capacity(total.min(MAX_EXCERPT_BYTES));
    if total <= MAX_EXCERPT_BYTES {
        for piece in pieces {
            push_clean(&mut out, piece);
        }
        return out;
    }
    let keep = MAX_EXCERPT_BYTES - ELLIPSIS.len();
    let mut head = keep / 2;
    for piece in pieces {
        let cut = floor_boundary(piece, head.min(piece.len()));
        push_clean(&mut out, &piece[..cut]);
        head -= cut;
        if cut < piece.len() {
            break;
        }
    }
    out.push_str(ELLIPSIS);
    let mut tail = keep - keep / 2;
    let mut ends = Vec::new();
    for piece in pieces.iter().rev() {
        let start = ceil_boundary(piece, piece.len() - tail.min(piece.len()));
        ends.push(&piece[start..]);
        tail -= piece.len() - start;
        if start > 0 {
            break;
        }
    }
    for end in ends.iter().rev() {
        push_clean(&mut out, end);
    }
    out
}

/// Appends `text` with each control character replaced by U+FFFD (a `Warning` header cannot
/// carry one, and the excerpt stays the same in every answer).
fn push_clean(out: &mut String, text: &str) {
    if !text.chars().any(char::is_control) {
        out.push_str(text);
        return;
    }
    out.extend(
        text.chars()
            .map(|c| if c.is_control() { '\u{FFFD}' } else { c }),
    );
}

/// The largest character boundary of `s` at or before `at`.
fn floor_boundary(s: &str, mut at: usize) -> usize {
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The smallest character boundary of `s` at or after `at`.
fn ceil_boundary(s: &str, mut at: usize) -> usize {
    while !s.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_kept_whole() {
        assert_eq!(excerpt("spec.foo"), "spec.foo");
        assert_eq!(excerpt_of(&["spec", ".", "foo"]), "spec.foo");
        let exact = "a".repeat(MAX_EXCERPT_BYTES);
        assert_eq!(excerpt(&exact), exact);
        assert_eq!(excerpt("a\u{1}b\tc"), "a\u{FFFD}b\u{FFFD}c");
    }

    #[test]
    fn long_text_keeps_head_and_tail() {
        let long = format!(
            "{}{}{}",
            "h".repeat(100),
            "m".repeat(1_000_000),
            "t".repeat(100)
        );
        let cut = excerpt(&long);
        assert_eq!(cut.len(), MAX_EXCERPT_BYTES);
        assert!(cut.starts_with(&"h".repeat(62)), "{cut}");
        assert!(cut.ends_with(&format!("...{}", "t".repeat(63))), "{cut}");
        let pieces = ["spec", ".", &long, ".", "unknownField"];
        let path = excerpt_of(&pieces);
        assert!(path.starts_with("spec.hhh"), "{path}");
        assert!(path.ends_with("ttt.unknownField"), "{path}");
        assert_eq!(path.len(), MAX_EXCERPT_BYTES);
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        for text in [
            "é".repeat(200),
            "😀".repeat(100),
            format!("a{}", "€".repeat(100)),
        ] {
            let cut = excerpt(&text);
            assert!(cut.len() <= MAX_EXCERPT_BYTES, "{cut}");
            assert!(cut.contains("..."), "{cut}");
        }
        let controls = "\u{1}".repeat(1000);
        let cut = excerpt(&controls);
        assert_eq!(cut.chars().filter(|c| *c == '\u{FFFD}').count(), 125);
        assert!(cut.len() <= 3 * MAX_EXCERPT_BYTES);
    }
}
