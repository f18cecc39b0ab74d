//! Content negotiation in one place (spec 000 "Media types and headers", R-RES-120..137): the
//! response's [`Output`] from the request's `Accept` and what the target can be served as
//! (its [`Offer`]), and the body's [`Input`] format from its `Content-Type`.
//!
//! As kube-apiserver: ranges are tried best first; the first served format a range covers
//! wins, with the view its `as`/`g`/`v` parameters ask for (a range asking for a view the target
//! cannot give is skipped, so `application/json` listed after a Table range is the fallback,
//! R-RES-132); nothing acceptable is 406 (R-RES-137); no `Accept` at all is JSON.

use super::media_type::MediaRange;
use super::media_type::parse_accept;
use crate::error::ApiError;
use crate::flavor::Flavor;

/// A serialization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `application/json`.
    Json,
    /// `application/yaml`.
    Yaml,
    /// `application/vnd.<flavor>.protobuf` (spec 000 "Protobuf wrapper").
    Protobuf,
    /// `application/cbor` (feature `CBORServingAndStorage`).
    Cbor,
}

impl Format {
    /// The media type (`type/subtype`) of this format in `flavor`.
    pub fn media_type(self, flavor: Flavor) -> &'static str {
        match self {
            Self::Json => "application/json",
            Self::Yaml => "application/yaml",
            Self::Protobuf => flavor.protobuf_media_type(),
            Self::Cbor => "application/cbor",
        }
    }
}

/// A version of the `meta` group's view kinds (`Table`, `PartialObjectMetadata`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaVersion {
    /// `v1`.
    V1,
    /// `v1beta1`.
    V1beta1,
}

impl MetaVersion {
    /// The version's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V1 => "v1",
            Self::V1beta1 => "v1beta1",
        }
    }

    fn parse(v: &str) -> Option<Self> {
        match v {
            "v1" => Some(Self::V1),
            "v1beta1" => Some(Self::V1beta1),
            _ => None,
        }
    }
}

/// What a response carries: the object itself, or a view of it the client asked for with
/// `as=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// The object (or list, or Status) as served.
    Object,
    /// A `Table` (R-RES-131).
    Table(MetaVersion),
    /// A `PartialObjectMetadata`, or a `PartialObjectMetadataList` for lists.
    Metadata(MetaVersion),
}

/// The negotiated response: a format and a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Output {
    /// The serialization.
    pub format: Format,
    /// What is serialized.
    pub view: View,
}

impl Output {
    /// Plain JSON of the object: the default, written from stored bytes without transcoding.
    pub const JSON: Self = Self {
        format: Format::Json,
        view: View::Object,
    };

    /// The response's `Content-Type` as Kubernetes writes it: the format's media type, with
    /// `;as=<Kind>;v=<v>;g=<group>` for a view. `list` picks the list kind of a metadata view.
    pub fn content_type(self, flavor: Flavor, list: bool) -> String {
        let media = self.format.media_type(flavor);
        let (kind, version) = match self.view {
            View::Object => return media.to_owned(),
            View::Table(v) => ("Table", v),
            View::Metadata(v) if list => ("PartialObjectMetadataList", v),
            View::Metadata(v) => ("PartialObjectMetadata", v),
        };
        format!(
            "{media};as={kind};v={};g={}",
            version.as_str(),
            flavor.meta_group()
        )
    }
}

/// What a request's target can be served as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offer {
    /// Protobuf: built-in kinds with a message (never custom kinds, R-RES-125).
    pub protobuf: bool,
    /// CBOR: only with `CBORServingAndStorage` (R-RES-127).
    pub cbor: bool,
    /// Tables (get, list and watch of a resource).
    pub table: bool,
    /// Metadata-only views (get, list and watch of a resource).
    pub metadata: bool,
    /// Whether the target is a list (a metadata view asks for `PartialObjectMetadataList`).
    pub list: bool,
    /// Whether the response is a watch stream (no YAML: it has no stream form).
    pub watch: bool,
}

impl Offer {
    /// The formats offered, in the order a wildcard picks them.
    fn formats(&self) -> impl Iterator<Item = Format> + '_ {
        [
            (Format::Json, true),
            (Format::Yaml, !self.watch),
            (Format::Protobuf, self.protobuf),
            (Format::Cbor, self.cbor),
        ]
        .into_iter()
        .filter_map(|(format, offered)| offered.then_some(format))
    }

    /// The response for `accept` (the `Accept` header, if sent); 406 listing what is offered
    /// when no range is served.
    pub fn negotiate(&self, accept: Option<&str>, flavor: Flavor) -> Result<Output, ApiError> {
        let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else {
            return Ok(Output::JSON);
        };
        for range in parse_accept(accept) {
            for format in self.formats() {
                if !range.covers(format.media_type(flavor)) {
                    continue;
                }
                if let Some(view) = self.view(&range, flavor) {
                    return Ok(Output { format, view });
                }
            }
        }
        Err(ApiError::NotAcceptable {
            accepted: self
                .formats()
                .map(|f| f.media_type(flavor))
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    /// The view `range` asks for, if this target can give it; `None` skips the range.
    fn view(&self, range: &MediaRange, flavor: Flavor) -> Option<View> {
        if range.param("stream").is_some_and(|s| s != "watch") {
            return None;
        }
        let Some(kind) = range.param("as") else {
            return Some(View::Object);
        };
        if range.param("g") != Some(flavor.meta_group().as_str()) {
            return None;
        }
        let version = MetaVersion::parse(range.param("v")?)?;
        match kind {
            "Table" if self.table => Some(View::Table(version)),
            "PartialObjectMetadata" if self.metadata && !self.list => Some(View::Metadata(version)),
            "PartialObjectMetadataList" if self.metadata && self.list => {
                Some(View::Metadata(version))
            }
            _ => None,
        }
    }

    /// The format of a request body of `content_type` (none: JSON, which clients sending JSON
    /// sometimes omit; R-RES-121); 415 listing the accepted types otherwise.
    pub fn input(&self, content_type: Option<&str>, flavor: Flavor) -> Result<Format, ApiError> {
        let Some(ct) = content_type.filter(|ct| !ct.trim().is_empty()) else {
            return Ok(Format::Json);
        };
        let essence = MediaRange::parse(ct).map(|r| r.essence());
        let accepted = [Format::Json, Format::Yaml, Format::Protobuf, Format::Cbor]
            .into_iter()
            .filter(|f| match f {
                Format::Protobuf => self.protobuf,
                Format::Cbor => self.cbor,
                Format::Json | Format::Yaml => true,
            });
        let mut names = Vec::new();
        for format in accepted {
            if essence.as_deref() == Some(format.media_type(flavor)) {
                return Ok(format);
            }
            names.push(format.media_type(flavor));
        }
        Err(ApiError::UnsupportedMediaType {
            accepted: names.join(", "),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K8S: Flavor = Flavor::Kubernetes;

    fn offer() -> Offer {
        Offer {
            protobuf: true,
            cbor: false,
            table: true,
            metadata: true,
            list: false,
            watch: false,
        }
    }

    fn pick(offer: Offer, accept: &str) -> Result<Output, ApiError> {
        offer.negotiate(Some(accept), K8S)
    }

    // R-RES-120, R-RES-122: no Accept, wildcards and JSON all answer JSON.
    #[test]
    fn json_is_the_default_and_the_wildcard_choice() {
        assert_eq!(offer().negotiate(None, K8S).ok(), Some(Output::JSON));
        for accept in [
            "*/*",
            "application/*",
            "application/json",
            "application/json;charset=utf-8",
        ] {
            assert_eq!(pick(offer(), accept).ok(), Some(Output::JSON), "{accept}");
        }
    }

    // R-RES-120, R-RES-125: Protobuf where offered; a target without it falls back to a
    // later JSON range, and is 406 when only Protobuf is acceptable.
    #[test]
    fn protobuf_only_where_offered() {
        let accept = "application/vnd.kubernetes.protobuf, application/json";
        assert_eq!(
            pick(offer(), accept).map(|o| o.format).ok(),
            Some(Format::Protobuf)
        );
        let custom = Offer {
            protobuf: false,
            ..offer()
        };
        assert_eq!(pick(custom, accept).ok(), Some(Output::JSON));
        let only = pick(custom, "application/vnd.kubernetes.protobuf");
        assert!(matches!(only, Err(ApiError::NotAcceptable { .. })));
    }

    // R-RES-137: nothing acceptable is 406, naming what is served.
    #[test]
    fn nothing_acceptable_is_406() {
        let Err(e) = pick(offer(), "text/html") else {
            panic!("text/html must not be served");
        };
        assert_eq!(
            e.to_string(),
            "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        );
    }

    // R-RES-131, R-RES-132: a Table range gives a Table; a target without Tables takes the
    // JSON range listed after it.
    #[test]
    fn tables_fall_back_to_json() {
        let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        let table = pick(offer(), accept).expect("served");
        assert_eq!(table.view, View::Table(MetaVersion::V1));
        assert_eq!(
            table.content_type(K8S, false),
            "application/json;as=Table;v=v1;g=meta.k8s.io"
        );
        let no_table = Offer {
            table: false,
            ..offer()
        };
        assert_eq!(pick(no_table, accept).ok(), Some(Output::JSON));
        let wrong_group = "application/json;as=Table;v=v1;g=meta.platform.io";
        assert!(pick(offer(), wrong_group).is_err());
    }

    #[test]
    fn metadata_views_match_the_target() {
        let object = "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io";
        let list = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io";
        assert_eq!(
            pick(offer(), object).map(|o| o.view).ok(),
            Some(View::Metadata(MetaVersion::V1))
        );
        assert!(pick(offer(), list).is_err());
        let lists = Offer {
            list: true,
            ..offer()
        };
        assert!(pick(lists, list).is_ok());
        assert!(pick(lists, object).is_err());
    }

    // R-RES-123: YAML responses, but not for watches.
    #[test]
    fn yaml_but_not_for_watches() {
        assert_eq!(
            pick(offer(), "application/yaml").map(|o| o.format).ok(),
            Some(Format::Yaml)
        );
        let watch = Offer {
            watch: true,
            ..offer()
        };
        assert!(pick(watch, "application/yaml").is_err());
        assert_eq!(
            pick(watch, "application/json;stream=watch").ok(),
            Some(Output::JSON)
        );
    }

    // R-RES-121, R-RES-127: bodies are decoded by Content-Type; unsupported ones are 415.
    #[test]
    fn bodies_by_content_type() {
        let o = offer();
        assert_eq!(o.input(None, K8S).ok(), Some(Format::Json));
        assert_eq!(
            o.input(Some("Application/YAML"), K8S).ok(),
            Some(Format::Yaml)
        );
        assert_eq!(
            o.input(Some("application/vnd.kubernetes.protobuf"), K8S)
                .ok(),
            Some(Format::Protobuf)
        );
        let Err(e) = o.input(Some("application/cbor"), K8S) else {
            panic!("CBOR is off");
        };
        assert_eq!(
            e.to_string(),
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        );
    }
}
