//! Wire formats (spec 000 "Media types and headers"): which format a request body is in, which
//! one a response is written in, and the one place where a document, a watch event or a body
//! changes format.
//!
//! Handlers answer in JSON, from stored bytes; a response negotiated to another format or view
//! is written from that JSON here ([`render`]), watch events one by one ([`EventEncoder`]), and
//! a body in another format becomes the JSON the decode pipeline reads ([`decode_body`]).
//!
//! # Layout
//! - [`cbor`]: CBOR documents, bodies and watch sequences (item 6).
//! - [`media_type`]: media types and `Accept` lists.
//! - [`negotiate`]: the response's [`Output`] and the body's [`Format`] for a request.
//! - `metadata`: the metadata-only views (`PartialObjectMetadata`, item 5).
//! - [`protobuf`]: Protobuf documents and watch frames of the built-in kinds (item 3).
//! - `yaml`: YAML documents.
//! - `table`: Tables (item 4): the printers of the built-in kinds and the Table document.

pub mod cbor;
pub mod media_type;
mod metadata;
pub mod negotiate;
pub mod protobuf;
mod table;
mod yaml;

use axum::body::Body;
use axum::response::IntoResponse;
use axum::response::Response;
use bytes::Bytes;
use chrono::DateTime;
use chrono::Utc;
use http::HeaderValue;
use http::header;
use serde_json::Value;

pub use self::negotiate::Format;
pub use self::negotiate::MetaVersion;
pub use self::negotiate::Offer;
pub use self::negotiate::Output;
pub use self::negotiate::View;
pub use self::table::CustomColumns;
use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::request::QueryParams;
use crate::request::RequestInfo;
use crate::request::Verb;

/// The most bytes of a handler's JSON answer that [`render`] reads to write it in another
/// format; handlers' answers are bounded far below it (lists by their page size).
const MAX_RENDERED_BYTES: usize = 1 << 30;

/// What writing a response in another format or view needs to know about its request.
#[derive(Debug, Clone)]
pub struct Context {
    /// The naming flavor (media types, the `meta` group).
    pub flavor: Flavor,
    /// The request's time (the ages of a Table).
    pub now: DateTime<Utc>,
    /// The resource's API group.
    pub group: String,
    /// The resource (`pods`).
    pub resource: String,
    /// The `includeObject` query parameter of a Table request, if sent.
    pub include_object: Option<String>,
    /// The replica's cache of Protobuf encodings.
    pub protobuf_cache: std::sync::Arc<protobuf::EncodingCache>,
    /// The printer columns of the custom resource the request serves (its Tables print
    /// them instead of a built-in printer's); `None` for every other resource.
    pub custom_columns: Option<std::sync::Arc<CustomColumns>>,
}

impl Context {
    /// The context of `info`'s request with `query`, served at `now`, encoding Protobuf
    /// through `protobuf_cache`.
    pub fn of(
        flavor: Flavor,
        now: DateTime<Utc>,
        info: &RequestInfo,
        query: &QueryParams,
        protobuf_cache: &std::sync::Arc<protobuf::EncodingCache>,
    ) -> Self {
        Self {
            flavor,
            now,
            group: info.api_group.clone(),
            resource: info.resource.clone(),
            include_object: query.get("includeObject").map(str::to_owned),
            protobuf_cache: protobuf_cache.clone(),
            custom_columns: None,
        }
    }
}

/// What `info`'s request can be answered as (`cbor`: whether `CBORServingAndStorage` is on).
pub fn offer(info: &RequestInfo, cbor: bool, flavor: Flavor) -> Offer {
    let read = matches!(info.verb, Verb::Get | Verb::List | Verb::Watch);
    let views = read && info.subresource.is_empty();
    Offer {
        protobuf: protobuf::serves(flavor, info),
        cbor,
        table: views,
        metadata: views,
        list: info.verb == Verb::List,
        watch: info.verb == Verb::Watch,
    }
}

/// A request body of `format` as the decode pipeline reads it: JSON and YAML as they are, other
/// formats transcoded to JSON (they have no unknown or duplicate fields to report).
pub fn decode_body(
    format: Format,
    body: Bytes,
    flavor: Flavor,
) -> Result<(crate::schema::Format, Bytes), ApiError> {
    match format {
        Format::Json => Ok((crate::schema::Format::Json, body)),
        Format::Yaml => Ok((crate::schema::Format::Yaml, body)),
        Format::Cbor => Ok((
            crate::schema::Format::Json,
            Bytes::from(cbor::decode_to_json(&body)?),
        )),
        Format::Protobuf => Ok((
            crate::schema::Format::Json,
            Bytes::from(protobuf::body_to_json(flavor, &body)?),
        )),
    }
}

/// Whether `value` is a list (`<Kind>List` with `items`).
fn is_list(value: &Value) -> bool {
    value.get("items").is_some_and(Value::is_array)
        && value
            .get("kind")
            .and_then(Value::as_str)
            .is_some_and(|k| k.ends_with("List"))
}

/// Whether `value` is a `Status` (which no view converts, as in Kubernetes).
fn is_status(value: &Value) -> bool {
    value.get("kind").and_then(Value::as_str) == Some("Status")
}

/// `value` (an object, a list or a Status) written as `output` asks, with its `Content-Type`.
pub fn encode_document(
    value: Value,
    output: Output,
    context: &Context,
) -> Result<(Vec<u8>, String), ApiError> {
    let list = is_list(&value);
    let (value, output) = if is_status(&value) {
        let plain = Output {
            view: View::Object,
            ..output
        };
        (value, plain)
    } else {
        let viewed = match output.view {
            View::Object => value,
            View::Metadata(version) => metadata::partial(value, version, context.flavor),
            View::Table(version) => table::document(&value, version, context)?,
        };
        (viewed, output)
    };
    let body = encode(&value, output.format, context)?;
    Ok((body, output.content_type(context.flavor, list)))
}

/// `value` serialized as `format`.
fn encode(value: &Value, format: Format, context: &Context) -> Result<Vec<u8>, ApiError> {
    match format {
        Format::Json => Ok(value.to_string().into_bytes()),
        Format::Yaml => yaml::encode(value),
        Format::Cbor => Ok(cbor::encode(value)),
        Format::Protobuf => Ok(protobuf::encode_object_with(
            context.flavor,
            value,
            &context.protobuf_cache,
        )?),
    }
}

/// The error of an output this build does not write (negotiation never picks one).
fn not_served(output: Output, flavor: Flavor) -> ApiError {
    ApiError::NotAcceptable {
        accepted: format!("not {}", output.content_type(flavor, false)),
    }
}

/// A response extension saying the body is already in the negotiated format (a watch stream,
/// or an answer written from cached encodings): [`render`] leaves it alone.
#[derive(Debug, Clone, Copy)]
pub struct Encoded;

/// `response` (a handler's JSON answer) written as `output` asks. Responses that are not
/// JSON documents, or are [`Encoded`] already, go out unchanged; a failure to write the answer
/// is its error's Status, in JSON.
pub async fn render(response: Response, output: Output, context: &Context) -> Response {
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|ct| ct == "application/json");
    let encoded = response.extensions().get::<Encoded>().is_some();
    if output == Output::JSON || !json || encoded {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_RENDERED_BYTES).await {
        Ok(bytes) => bytes,
        Err(e) => return ApiError::Internal(format!("answer cannot be read: {e}")).into_response(),
    };
    let Ok(value) = serde_json::from_slice::<Value>(&bytes) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    match encode_document(value, output, context) {
        Ok((body, content_type)) => {
            parts.headers.remove(header::CONTENT_LENGTH);
            if let Ok(ct) = HeaderValue::from_str(&content_type) {
                parts.headers.insert(header::CONTENT_TYPE, ct);
            }
            Response::from_parts(parts, Body::from(body))
        }
        Err(e) => e.into_response(),
    }
}

/// Writes the events of one watch in a negotiated format or view, event by event. May keep
/// state between events (a Table sends its columns only with the first).
pub trait EventEncoder: Send {
    /// The stream's `Content-Type`.
    fn content_type(&self) -> String;

    /// The event of `kind` (`ADDED`, ..., `ERROR`) whose object is `object`.
    fn event(&mut self, kind: &str, object: Value) -> Result<Bytes, ApiError>;
}

/// The encoder of a watch negotiated to `output`; `None` for plain JSON, which the watch
/// writes from stored bytes.
pub fn event_encoder(
    output: Output,
    context: Context,
) -> Result<Option<Box<dyn EventEncoder>>, ApiError> {
    match output {
        Output::JSON => Ok(None),
        Output {
            format: Format::Json,
            view: View::Metadata(version),
        } => Ok(Some(Box::new(metadata::JsonEvents::new(version, context)))),
        Output {
            format: Format::Cbor,
            view: View::Object,
        } => Ok(Some(Box::new(cbor::Events))),
        Output {
            format: Format::Json,
            view: View::Table(version),
        } => Ok(Some(Box::new(table::TableEvents::new(version, context)?))),
        Output {
            format: Format::Protobuf,
            ..
        } => Ok(Some(Box::new(protobuf::ProtobufEvents::new(
            output,
            context.flavor,
            context.protobuf_cache,
        )))),
        other => Err(not_served(other, context.flavor)),
    }
}

/// A JSON watch event line (`{"type":..,"object":..}\n`) written by `encoder`. An event that
/// cannot be written becomes an ERROR event of its failure, if that can be written.
pub fn transcode_event(encoder: &mut dyn EventEncoder, json_event: &[u8]) -> Option<Bytes> {
    let parsed = serde_json::from_slice::<Value>(json_event)
        .map_err(|e| ApiError::Internal(format!("watch event cannot be read: {e}")))
        .and_then(|mut event| {
            let kind = event
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let object = event.get_mut("object").map(Value::take).unwrap_or_default();
            encoder.event(&kind, object)
        });
    match parsed {
        Ok(bytes) => Some(bytes),
        Err(e) => encoder.event("ERROR", e.status()).ok(),
    }
}
