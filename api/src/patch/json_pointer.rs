//! RFC 6901 JSON Pointers as JSON Patch uses them: `""` is the whole document, `/a/b` the
//! member `b` of the member `a`, `~1` and `~0` stand for `/` and `~`, list items are named by
//! their decimal index and `-` names the end of a list (where `add` appends).

use std::borrow::Cow;

use serde_json::Value;

use crate::limits::MAX_NESTING_DEPTH;

/// The unescaped reference tokens of `pointer`; `None` when it is not a pointer (it does not
/// start with `/`), or has more tokens than any value within [`MAX_NESTING_DEPTH`] can hold
/// (its parent would be nested deeper than that), so it names nothing.
pub(super) fn tokens(pointer: &str) -> Option<Vec<Cow<'_, str>>> {
    if pointer.is_empty() {
        return Some(Vec::new());
    }
    let rest = pointer.strip_prefix('/')?;
    if rest.bytes().filter(|b| *b == b'/').count() >= MAX_NESTING_DEPTH {
        return None;
    }
    Some(rest.split('/').map(unescape).collect())
}

fn unescape(token: &str) -> Cow<'_, str> {
    if token.contains('~') {
        Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(token)
    }
}

/// The list index `token` names in a list of `len` items: a decimal number below `len`, or
/// up to `len` itself (and `-`, the end) when `end` allows naming the place after the last.
pub(super) fn index(token: &str, len: usize, end: bool) -> Option<usize> {
    let at = if token == "-" {
        len
    } else if !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) {
        token.parse().ok()?
    } else {
        return None;
    };
    (at < len || (end && at == len)).then_some(at)
}

/// The value `tokens` name in `doc`.
pub(super) fn get<'d>(doc: &'d Value, tokens: &[Cow<'_, str>]) -> Option<&'d Value> {
    tokens.iter().try_fold(doc, |at, token| match at {
        Value::Object(map) => map.get(token.as_ref()),
        Value::Array(items) => items.get(index(token, items.len(), false)?),
        _ => None,
    })
}

/// The value `tokens` name in `doc`, to change.
pub(super) fn get_mut<'d>(doc: &'d mut Value, tokens: &[Cow<'_, str>]) -> Option<&'d mut Value> {
    tokens.iter().try_fold(doc, |at, token| match at {
        Value::Object(map) => map.get_mut(token.as_ref()),
        Value::Array(items) => {
            let at = index(token, items.len(), false)?;
            items.get_mut(at)
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn pointers_unescape_and_index() {
        assert_eq!(tokens(""), Some(vec![]));
        assert_eq!(tokens("/"), Some(vec![Cow::Borrowed("")]));
        assert_eq!(
            tokens("/a~1b/c~0d/~01"),
            Some(vec![
                Cow::Borrowed("a/b"),
                Cow::Borrowed("c~d"),
                Cow::Borrowed("~1")
            ])
        );
        assert_eq!(tokens("a/b"), None);
        let deepest = "/a".repeat(MAX_NESTING_DEPTH);
        assert_eq!(tokens(&deepest).map(|t| t.len()), Some(MAX_NESTING_DEPTH));
        assert_eq!(tokens(&format!("{deepest}/a")), None);
        assert_eq!(index("0", 1, false), Some(0));
        assert_eq!(index("1", 1, false), None);
        assert_eq!(index("1", 1, true), Some(1));
        assert_eq!(index("-", 3, true), Some(3));
        assert_eq!(index("-", 3, false), None);
        for bad in ["", "+1", "-1", "1e2", "99999999999999999999999"] {
            assert_eq!(index(bad, usize::MAX, true), None, "{bad}");
        }
        let doc = json!({"a": [{"b/c": 1}]});
        let path = tokens("/a/0/b~1c").expect("pointer");
        assert_eq!(get(&doc, &path), Some(&json!(1)));
        assert_eq!(get(&doc, &tokens("/a/1").expect("pointer")), None);
        assert_eq!(get(&doc, &tokens("/a/0/b~1c/d").expect("pointer")), None);
    }
}
