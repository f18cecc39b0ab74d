//! Media types and `Accept` lists as HTTP writes them (RFC 9110 §12.5.1): a type, a subtype,
//! parameters, and in `Accept` a quality `q` per range. Names compare case-insensitively;
//! parameter values keep their case (`as=Table`).

/// The most ranges of one `Accept` header that are considered; the rest are ignored, so a
/// hostile header costs a bounded amount of work.
const MAX_RANGES: usize = 32;

/// The most parameters of one range that are kept.
const MAX_PARAMS: usize = 16;

/// One media type or media range: `type/subtype;k=v;...`.
#[derive(Debug, Clone, PartialEq)]
pub struct MediaRange {
    /// The type, lowercase (`application`, or `*`).
    pub kind: String,
    /// The subtype, lowercase (`json`, or `*`).
    pub subtype: String,
    /// The parameters other than `q`, names lowercase, in the order sent.
    pub params: Vec<(String, String)>,
    /// The quality, 0.0 to 1.0 (1.0 when not sent).
    pub quality: f32,
}

impl MediaRange {
    /// Parses one media type or range; `None` when it is not `type/subtype`.
    pub fn parse(text: &str) -> Option<Self> {
        let mut parts = text.split(';');
        let essence = parts.next()?.trim();
        let (kind, subtype) = essence.split_once('/')?;
        let (kind, subtype) = (kind.trim(), subtype.trim());
        if kind.is_empty() || subtype.is_empty() {
            return None;
        }
        let mut range = Self {
            kind: kind.to_ascii_lowercase(),
            subtype: subtype.to_ascii_lowercase(),
            params: Vec::new(),
            quality: 1.0,
        };
        for param in parts.take(MAX_PARAMS) {
            let Some((name, value)) = param.split_once('=') else {
                continue;
            };
            let name = name.trim().to_ascii_lowercase();
            let value = value.trim().trim_matches('"');
            if name == "q" {
                range.quality = value
                    .parse::<f32>()
                    .ok()
                    .filter(|q| (0.0..=1.0).contains(q))?;
            } else {
                range.params.push((name, value.to_owned()));
            }
        }
        Some(range)
    }

    /// `type/subtype`.
    pub fn essence(&self) -> String {
        format!("{}/{}", self.kind, self.subtype)
    }

    /// The value of parameter `name` (lowercase), if sent.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether this range covers the media type `essence` (`type/subtype`, lowercase):
    /// equal, `type/*`, or `*/*`.
    pub fn covers(&self, essence: &str) -> bool {
        let Some((kind, subtype)) = essence.split_once('/') else {
            return false;
        };
        (self.kind == "*" && self.subtype == "*")
            || (self.kind == kind && (self.subtype == "*" || self.subtype == subtype))
    }

    /// How specific the range is: `*/*` 0, `type/*` 1, `type/subtype` 2, plus one with
    /// parameters (the order RFC 9110 gives equally good ranges).
    fn specificity(&self) -> u8 {
        let base = match (self.kind.as_str(), self.subtype.as_str()) {
            ("*", _) => 0,
            (_, "*") => 1,
            _ => 2,
        };
        base + u8::from(!self.params.is_empty())
    }
}

/// The ranges of an `Accept` header a client accepts (quality above 0), best first: by
/// quality, then by specificity, then in the order sent. Unparseable ranges are skipped.
pub fn parse_accept(header: &str) -> Vec<MediaRange> {
    let mut ranges: Vec<MediaRange> = header
        .split(',')
        .take(MAX_RANGES)
        .filter_map(MediaRange::parse)
        .filter(|r| r.quality > 0.0)
        .collect();
    // A stable sort keeps the client's order among equals.
    ranges.sort_by(|a, b| {
        b.quality
            .total_cmp(&a.quality)
            .then(b.specificity().cmp(&a.specificity()))
    });
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_with_parameters_and_quality() {
        let r = MediaRange::parse(" Application/JSON ; as=Table;g=meta.k8s.io; v=v1;q=0.5")
            .expect("parses");
        assert_eq!(r.essence(), "application/json");
        assert_eq!(r.param("as"), Some("Table"));
        assert_eq!(r.param("v"), Some("v1"));
        assert_eq!(r.quality, 0.5);
        assert!(MediaRange::parse("json").is_none());
        assert!(MediaRange::parse("application/json;q=2").is_none());
    }

    #[test]
    fn accept_lists_are_ordered_by_quality_then_specificity() {
        let order: Vec<String> = parse_accept(
            "*/*;q=0.1, application/yaml;q=0.9, application/json;as=Table;g=meta.k8s.io;v=v1, application/json, text/html;q=0",
        )
        .iter()
        .map(|r| format!("{}{}", r.essence(), r.param("as").unwrap_or("")))
        .collect();
        assert_eq!(
            order,
            [
                "application/jsonTable",
                "application/json",
                "application/yaml",
                "*/*"
            ]
        );
    }

    #[test]
    fn ranges_cover_by_wildcard() {
        let any = MediaRange::parse("*/*").expect("parses");
        let app = MediaRange::parse("application/*").expect("parses");
        assert!(any.covers("application/yaml"));
        assert!(app.covers("application/vnd.kubernetes.protobuf"));
        assert!(!app.covers("text/plain"));
    }

    #[test]
    fn hostile_headers_cost_bounded_work() {
        let header = "application/json,".repeat(10_000);
        assert_eq!(parse_accept(&header).len(), MAX_RANGES);
    }
}
