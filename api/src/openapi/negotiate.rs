//! Which encoding of an OpenAPI document a request's `Accept` asks for, chosen as
//! kube-openapi chooses: clauses by falling `q` (a more specific one first among equals), and
//! the first clause that names or wildcards an offered media type wins, JSON before protobuf.
//! No `Accept` means `*/*`.

/// JSON's media type.
const JSON: &str = "application/json";

/// The v2 protobuf media type upstream answers with.
const PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// The older spelling client-go still asks for; answered with [`PROTOBUF`].
const PROTOBUF_DEPRECATED: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";

/// An encoding of an OpenAPI document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// JSON (every document).
    Json,
    /// gnostic's protobuf (only the v2 document).
    Protobuf,
}

impl Encoding {
    /// The `Content-Type` of a document in this encoding.
    pub fn content_type(self) -> &'static str {
        match self {
            Self::Json => JSON,
            Self::Protobuf => PROTOBUF,
        }
    }

    fn media_types(self) -> &'static [&'static str] {
        match self {
            Self::Json => &[JSON],
            Self::Protobuf => &[PROTOBUF_DEPRECATED, PROTOBUF],
        }
    }
}

/// The encoding `accept` asks for among `offered` (in preference order), or `None` (406).
pub fn negotiate(accept: Option<&str>, offered: &[Encoding]) -> Option<Encoding> {
    let mut clauses: Vec<(&str, f32, usize)> = accept
        .unwrap_or("*/*")
        .split(',')
        .filter_map(|clause| {
            let mut parts = clause.split(';');
            let media = match parts.next().unwrap_or_default().trim() {
                "" => "*/*",
                media => media,
            };
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            (q > 0.0).then(|| (media, q, media.matches('*').count()))
        })
        .collect();
    clauses.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    clauses.iter().find_map(|(media, _, _)| {
        offered.iter().copied().find(|encoding| {
            encoding
                .media_types()
                .iter()
                .any(|offer| media_matches(media, offer))
        })
    })
}

/// Whether the `Accept` media range `range` covers the media type `offer`.
fn media_matches(range: &str, offer: &str) -> bool {
    let (Some((ty, sub)), Some((offer_ty, offer_sub))) =
        (range.split_once('/'), offer.split_once('/'))
    else {
        return false;
    };
    (ty == "*" || ty.eq_ignore_ascii_case(offer_ty))
        && (sub == "*" || sub.eq_ignore_ascii_case(offer_sub))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pick(accept: Option<&str>) -> Option<Encoding> {
        negotiate(accept, &[Encoding::Json, Encoding::Protobuf])
    }

    // R-RES-120, R-RES-137
    #[test]
    fn client_go_gets_protobuf_and_wildcards_get_json() {
        assert_eq!(pick(Some(PROTOBUF_DEPRECATED)), Some(Encoding::Protobuf));
        assert_eq!(pick(Some(PROTOBUF)), Some(Encoding::Protobuf));
        assert_eq!(pick(None), Some(Encoding::Json));
        assert_eq!(pick(Some("")), Some(Encoding::Json));
        assert_eq!(pick(Some("*/*")), Some(Encoding::Json));
        assert_eq!(pick(Some("application/*")), Some(Encoding::Json));
        assert_eq!(
            pick(Some(&format!("{PROTOBUF_DEPRECATED}, application/json"))),
            Some(Encoding::Protobuf)
        );
        assert_eq!(
            pick(Some(&format!("*/*, {PROTOBUF_DEPRECATED}"))),
            Some(Encoding::Protobuf),
            "the specific clause outranks the wildcard"
        );
        assert_eq!(
            pick(Some(&format!("{PROTOBUF};q=0.5, application/json"))),
            Some(Encoding::Json)
        );
        assert_eq!(pick(Some("text/html")), None);
        assert_eq!(pick(Some("application/json;q=0")), None);
    }

    // R-RES-137
    #[test]
    fn json_only_documents_refuse_protobuf() {
        let json = &[Encoding::Json];
        let v3 = "application/com.github.proto-openapi.spec.v3@v1.0+protobuf";
        assert_eq!(negotiate(Some(v3), json), None);
        assert_eq!(negotiate(Some(PROTOBUF_DEPRECATED), json), None);
        assert_eq!(negotiate(Some("*/*"), json), Some(Encoding::Json));
    }
}
