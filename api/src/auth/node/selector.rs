//! Reads a request's field selector as authorizers see it (R-ACC-172): comma-separated
//! `<field>=<value>`, `<field>==<value>` or `<field>!=<value>` terms, with `\` escaping `\`,
//! `,` and `=` in values. A selector that does not parse selects nothing.

/// Whether `selector` requires `field` to equal `value` (one of its terms is `field=value`
/// or `field==value`).
pub fn selects(selector: &str, field: &str, value: &str) -> bool {
    terms(selector).is_some_and(|terms| {
        (terms.iter()).any(|(f, op, v)| f == field && *op == Op::Equals && v == value)
    })
}

/// A term's operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Equals,
    NotEquals,
}

/// The terms of `selector`, or `None` when one does not parse.
fn terms(selector: &str) -> Option<Vec<(String, Op, String)>> {
    let mut terms = Vec::new();
    for raw in split_unescaped(selector) {
        if raw.is_empty() {
            continue;
        }
        terms.push(term(&raw)?);
    }
    Some(terms)
}

/// `selector` split at the commas no backslash escapes (escapes kept).
fn split_unescaped(selector: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut chars = selector.chars();
    while let Some(c) = chars.next() {
        let part = parts.last_mut().expect("one part at least");
        match c {
            '\\' => {
                part.push(c);
                part.extend(chars.next());
            }
            ',' => parts.push(String::new()),
            _ => part.push(c),
        }
    }
    parts
}

/// One `field op value` term.
fn term(raw: &str) -> Option<(String, Op, String)> {
    let (field, op, value) = if let Some((f, v)) = raw.split_once("!=") {
        (f, Op::NotEquals, v)
    } else if let Some((f, v)) = raw.split_once("==") {
        (f, Op::Equals, v)
    } else {
        let (f, v) = raw.split_once('=')?;
        (f, Op::Equals, v)
    };
    let field = field.trim();
    if field.is_empty() {
        return None;
    }
    Some((field.to_owned(), op, unescape(value.trim())?))
}

/// `value` without its escapes; `None` for an unescaped `=` or a dangling or unknown escape.
fn unescape(value: &str) -> Option<String> {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next()? {
                e @ ('\\' | ',' | '=') => out.push(e),
                _ => return None,
            },
            '=' => return None,
            _ => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    // R-ACC-172
    #[test]
    fn a_selector_names_a_field_only_with_an_equality_term() {
        assert!(selects("spec.nodeName=n1", "spec.nodeName", "n1"));
        assert!(selects(
            "status.phase=Running,spec.nodeName==n1",
            "spec.nodeName",
            "n1"
        ));
        assert!(!selects("spec.nodeName!=n1", "spec.nodeName", "n1"));
        assert!(!selects("spec.nodeName=n2", "spec.nodeName", "n1"));
        assert!(!selects("", "spec.nodeName", "n1"));
        assert!(!selects("spec.nodeName=n1,broken", "spec.nodeName", "n1"));
        assert!(selects(r"spec.nodeName=a\,b", "spec.nodeName", "a,b"));
        assert!(!selects("spec.nodeName=a,b", "spec.nodeName", "a"));
    }
}
