//! Property names as CEL identifiers (Kubernetes' `Escape`): names matching
//! `[a-zA-Z_.-/][a-zA-Z0-9_.-/]*` are readable, with `__` written `__underscores__`, `.`
//! `__dot__`, `-` `__dash__`, `/` `__slash__`, and a reserved word `__{word}__`.

/// CEL's reserved words (a property named so is read as `__{word}__`).
const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// The CEL identifier property `name` is read as, or `None` when it cannot be read.
pub fn escape(name: &str) -> Option<String> {
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut out = String::with_capacity(name.len() + 8);
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("__") {
            out.push_str("__underscores__");
            rest = &rest[2..];
            continue;
        }
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            _ => return None,
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn property_names_escape_as_kubernetes_does() {
        // R-VER-022, R-VER-023, R-VER-024
        let cases = [
            ("replicas", Some("replicas")),
            ("x-y", Some("x__dash__y")),
            ("a.b", Some("a__dot__b")),
            ("a/b", Some("a__slash__b")),
            ("a__b", Some("a__underscores__b")),
            ("a_b", Some("a_b")),
            ("_x", Some("_x")),
            ("namespace", Some("__namespace__")),
            ("if", Some("__if__")),
            ("int", Some("int")),
            ("interval", Some("interval")),
            ("1x", None),
            ("a b", None),
            ("a@b", None),
            ("", None),
        ];
        for (name, want) in cases {
            assert_eq!(escape(name).as_deref(), want, "{name}");
        }
    }
}
