//! Query parameters, decoded once (`application/x-www-form-urlencoded` rules: `+` is a space,
//! `%XX` a byte) and looked up by name.

/// The decoded query parameters of a request, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryParams {
    pairs: Vec<(String, String)>,
}

impl QueryParams {
    /// Decodes a raw query string (`None`: no query). Malformed escapes are kept literally, as
    /// Go's lenient parsers do, so no query makes a request fail here.
    pub fn parse(raw: Option<&str>) -> Self {
        let pairs = raw
            .unwrap_or("")
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (decode(k, true), decode(v, true))
            })
            .collect();
        Self { pairs }
    }

    /// The first value of `name`, if present (possibly empty).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `name`, in order.
    pub fn get_all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.pairs
            .iter()
            .filter(move |(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether `name` is present.
    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// `name` read as a boolean as Kubernetes reads boolean parameters (`1`, `t`, `true`, ...):
    /// absent or anything else is false.
    pub fn flag(&self, name: &str) -> bool {
        self.get(name).and_then(parse_bool) == Some(true)
    }
}

/// A boolean parameter's value as Go's `strconv.ParseBool` reads it; `None` when it is none of
/// its spellings.
pub(crate) fn parse_bool(value: &str) -> Option<bool> {
    match value {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

/// Percent-decodes `s` (and, with `plus`, turns `+` into a space). Invalid escapes and invalid
/// UTF-8 are kept (lossily), never an error.
pub(crate) fn decode(s: &str, plus: bool) -> String {
    let mut out = Vec::with_capacity(s.len());
    let mut rest = s.as_bytes();
    while let Some((&c, tail)) = rest.split_first() {
        rest = tail;
        match (c, tail) {
            (b'+', _) if plus => out.push(b' '),
            (b'%', [h, l, after @ ..]) if h.is_ascii_hexdigit() && l.is_ascii_hexdigit() => {
                let byte = std::str::from_utf8(&[*h, *l])
                    .ok()
                    .and_then(|hex| u8::from_str_radix(hex, 16).ok());
                out.extend(byte);
                rest = after;
            }
            (c, _) => out.push(c),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_pairs_and_flags() {
        let q = QueryParams::parse(Some(
            "watch=1&labelSelector=a%3Db&x=a+b&verbose&bad=%zz&end=%4",
        ));
        assert!(q.flag("watch"));
        assert_eq!(q.get("labelSelector"), Some("a=b"));
        assert_eq!(q.get("x"), Some("a b"));
        assert_eq!(q.get("verbose"), Some(""));
        assert!(q.has("verbose"));
        assert!(!q.flag("verbose"));
        assert_eq!(q.get("bad"), Some("%zz"));
        assert_eq!(q.get("end"), Some("%4"));
        assert_eq!(decode("%41%62%+f%", false), "Ab%+f%");
        assert_eq!(decode("%e2%9c%93+", true), "\u{2713} ");
        assert_eq!(q.get("missing"), None);
        assert!(QueryParams::parse(None).get("a").is_none());
        let many = QueryParams::parse(Some("exclude=a&exclude=b"));
        assert_eq!(many.get_all("exclude").collect::<Vec<_>>(), vec!["a", "b"]);
    }
}
