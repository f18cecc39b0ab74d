//! The tokens of an expression's source with their byte offsets, for pointing at the place a
//! checker issue is about (the `cel` crate keeps no source positions in a parsed tree):
//! identifiers and operators, with string and bytes literals, numbers and comments skipped.

/// The operators of two characters, matched before single ones.
const PAIRS: &[&str] = &["==", "!=", "<=", ">=", "&&", "||"];

/// The identifier and operator tokens of `source` with their byte offsets, in order.
pub(super) fn tokens(source: &str) -> Vec<(usize, &str)> {
    let bytes = source.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let rest = &source[i..];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if let Some(end) = literal_end(rest) {
            i += end;
        } else if c.is_ascii_digit() {
            i += number_end(rest);
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let end = rest
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                .unwrap_or(rest.len());
            out.push((i, &rest[..end]));
            i += end;
        } else {
            let width = match PAIRS.iter().find(|p| rest.starts_with(*p)) {
                Some(pair) => pair.len(),
                None => rest.chars().next().map_or(1, char::len_utf8),
            };
            out.push((i, &rest[..width]));
            i += width;
        }
    }
    out
}

/// The length of the string or bytes literal `rest` starts with (prefixes `r`, `b`, `rb`,
/// `br`; single, double and triple quotes), or `None` when it starts with none.
fn literal_end(rest: &str) -> Option<usize> {
    let prefix = rest.find(['"', '\'']).filter(|&p| {
        p <= 2
            && rest[..p]
                .chars()
                .all(|c| matches!(c, 'r' | 'R' | 'b' | 'B'))
    })?;
    let raw = rest[..prefix].contains(['r', 'R']);
    let body = &rest[prefix..];
    let quote = if body.starts_with("\"\"\"") || body.starts_with("'''") {
        &body[..3]
    } else {
        &body[..1]
    };
    let mut j = quote.len();
    while j < body.len() {
        if !raw && body.as_bytes()[j] == b'\\' {
            j += 2;
            continue;
        }
        if body[j..].starts_with(quote) {
            return Some(prefix + j + quote.len());
        }
        j += body[j..].chars().next().map_or(1, char::len_utf8);
    }
    Some(rest.len())
}

/// The length of the number literal `rest` starts with (`12`, `0x1F`, `3u`, `1.5e-3`).
fn number_end(rest: &str) -> usize {
    let bytes = rest.as_bytes();
    let mut j = 0;
    let hex = rest.starts_with("0x") || rest.starts_with("0X");
    if hex {
        j = 2;
    }
    while j < bytes.len() {
        let b = bytes[j];
        let exponent_sign = j > 0 && matches!(bytes[j - 1], b'e' | b'E') && !hex;
        let fraction = b == b'.' && bytes.get(j + 1).is_some_and(u8::is_ascii_digit) && !hex;
        if b.is_ascii_alphanumeric() || fraction || (exponent_sign && matches!(b, b'+' | b'-')) {
            j += 1;
        } else {
            break;
        }
    }
    j
}
