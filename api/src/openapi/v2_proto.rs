//! The OpenAPI v2 document as protobuf, the form client-go's `OpenAPISchema()` asks for (and
//! kubectl reads for `explain --output=plaintext-openapiv2`): hand-written prost messages for
//! the subset of gnostic's `openapi.v2.Document` (`openapiv2/OpenAPIv2.proto`, same field
//! numbers) that our Swagger 2.0 JSON uses. [`from_json`] fills them from that JSON, as
//! upstream derives its protobuf from its JSON, so both encodings say the same. Where gnostic
//! has a `oneof` of which we only ever use one case (`ParametersItem`, `ResponseValue`,
//! `SchemaItem`, `SecurityDefinitionsItem`), that case is a plain field: the bytes are the same.

mod from_json;

pub use from_json::document;

/// The root of a Swagger 2.0 document.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Document {
    /// `swagger` (`2.0`).
    #[prost(string, tag = "1")]
    pub swagger: String,
    /// `info`.
    #[prost(message, optional, tag = "2")]
    pub info: Option<Info>,
    /// `paths`.
    #[prost(message, optional, tag = "8")]
    pub paths: Option<Paths>,
    /// `definitions`.
    #[prost(message, optional, tag = "9")]
    pub definitions: Option<Definitions>,
    /// `security`.
    #[prost(message, repeated, tag = "12")]
    pub security: Vec<SecurityRequirement>,
    /// `securityDefinitions`.
    #[prost(message, optional, tag = "13")]
    pub security_definitions: Option<SecurityDefinitions>,
}

/// `info`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Info {
    /// `title`.
    #[prost(string, tag = "1")]
    pub title: String,
    /// `version`.
    #[prost(string, tag = "2")]
    pub version: String,
}

/// A vendor extension's value: gnostic keeps it as YAML text.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Any {
    /// The value as YAML (we write JSON, which YAML reads alike).
    #[prost(string, tag = "2")]
    pub yaml: String,
}

/// One vendor extension (`x-kubernetes-...`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedAny {
    /// The extension's name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Its value.
    #[prost(message, optional, tag = "2")]
    pub value: Option<Any>,
}

/// `paths`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Paths {
    /// Each path with its item, in document order.
    #[prost(message, repeated, tag = "2")]
    pub path: Vec<NamedPathItem>,
}

/// One entry of `paths`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedPathItem {
    /// The path (`/api/v1/namespaces/{namespace}/pods`).
    #[prost(string, tag = "1")]
    pub name: String,
    /// Its operations.
    #[prost(message, optional, tag = "2")]
    pub value: Option<PathItem>,
}

/// The operations of one path, and the parameters they share.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PathItem {
    /// `get`.
    #[prost(message, optional, tag = "2")]
    pub get: Option<Operation>,
    /// `put`.
    #[prost(message, optional, tag = "3")]
    pub put: Option<Operation>,
    /// `post`.
    #[prost(message, optional, tag = "4")]
    pub post: Option<Operation>,
    /// `delete`.
    #[prost(message, optional, tag = "5")]
    pub delete: Option<Operation>,
    /// `options`.
    #[prost(message, optional, tag = "6")]
    pub options: Option<Operation>,
    /// `head`.
    #[prost(message, optional, tag = "7")]
    pub head: Option<Operation>,
    /// `patch`.
    #[prost(message, optional, tag = "8")]
    pub patch: Option<Operation>,
    /// `parameters`.
    #[prost(message, repeated, tag = "9")]
    pub parameters: Vec<ParametersItem>,
}

/// One operation.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Operation {
    /// `tags`.
    #[prost(string, repeated, tag = "1")]
    pub tags: Vec<String>,
    /// `description`.
    #[prost(string, tag = "3")]
    pub description: String,
    /// `operationId`.
    #[prost(string, tag = "5")]
    pub operation_id: String,
    /// `produces`.
    #[prost(string, repeated, tag = "6")]
    pub produces: Vec<String>,
    /// `consumes`.
    #[prost(string, repeated, tag = "7")]
    pub consumes: Vec<String>,
    /// `parameters`.
    #[prost(message, repeated, tag = "8")]
    pub parameters: Vec<ParametersItem>,
    /// `responses`.
    #[prost(message, optional, tag = "9")]
    pub responses: Option<Responses>,
    /// `schemes`.
    #[prost(string, repeated, tag = "10")]
    pub schemes: Vec<String>,
    /// `x-kubernetes-action`, `x-kubernetes-group-version-kind`.
    #[prost(message, repeated, tag = "13")]
    pub vendor_extension: Vec<NamedAny>,
}

/// An entry of a `parameters` list (always inline in our documents).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ParametersItem {
    /// The parameter.
    #[prost(message, optional, tag = "1")]
    pub parameter: Option<Parameter>,
}

/// A body or a non-body parameter.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Parameter {
    /// Which one.
    #[prost(oneof = "parameter::Oneof", tags = "1, 2")]
    pub oneof: Option<parameter::Oneof>,
}

/// The cases of [`Parameter`].
pub mod parameter {
    /// A body or a non-body parameter.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Oneof {
        /// `in: body`.
        #[prost(message, tag = "1")]
        BodyParameter(super::BodyParameter),
        /// `in: query` or `in: path`.
        #[prost(message, tag = "2")]
        NonBodyParameter(super::NonBodyParameter),
    }
}

/// `in: body`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BodyParameter {
    /// `description`.
    #[prost(string, tag = "1")]
    pub description: String,
    /// `name`.
    #[prost(string, tag = "2")]
    pub name: String,
    /// `in` (`body`).
    #[prost(string, tag = "3")]
    pub r#in: String,
    /// `required`.
    #[prost(bool, tag = "4")]
    pub required: bool,
    /// `schema`.
    #[prost(message, optional, tag = "5")]
    pub schema: Option<Schema>,
}

/// A query or path parameter.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NonBodyParameter {
    /// Which one.
    #[prost(oneof = "non_body_parameter::Oneof", tags = "3, 4")]
    pub oneof: Option<non_body_parameter::Oneof>,
}

/// The cases of [`NonBodyParameter`] our documents use.
pub mod non_body_parameter {
    /// A query or a path parameter.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Oneof {
        /// `in: query`.
        #[prost(message, tag = "3")]
        QueryParameterSubSchema(super::QueryParameterSubSchema),
        /// `in: path`.
        #[prost(message, tag = "4")]
        PathParameterSubSchema(super::PathParameterSubSchema),
    }
}

/// `in: query`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct QueryParameterSubSchema {
    /// `required`.
    #[prost(bool, tag = "1")]
    pub required: bool,
    /// `in` (`query`).
    #[prost(string, tag = "2")]
    pub r#in: String,
    /// `description`.
    #[prost(string, tag = "3")]
    pub description: String,
    /// `name`.
    #[prost(string, tag = "4")]
    pub name: String,
    /// `type`.
    #[prost(string, tag = "6")]
    pub r#type: String,
    /// `uniqueItems`.
    #[prost(bool, tag = "20")]
    pub unique_items: bool,
}

/// `in: path`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PathParameterSubSchema {
    /// `required`.
    #[prost(bool, tag = "1")]
    pub required: bool,
    /// `in` (`path`).
    #[prost(string, tag = "2")]
    pub r#in: String,
    /// `description`.
    #[prost(string, tag = "3")]
    pub description: String,
    /// `name`.
    #[prost(string, tag = "4")]
    pub name: String,
    /// `type`.
    #[prost(string, tag = "5")]
    pub r#type: String,
    /// `uniqueItems`.
    #[prost(bool, tag = "19")]
    pub unique_items: bool,
}

/// `responses`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Responses {
    /// Each status code with its response.
    #[prost(message, repeated, tag = "1")]
    pub response_code: Vec<NamedResponseValue>,
}

/// One entry of `responses`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedResponseValue {
    /// The status code (`200`).
    #[prost(string, tag = "1")]
    pub name: String,
    /// The response.
    #[prost(message, optional, tag = "2")]
    pub value: Option<ResponseValue>,
}

/// A response (always inline in our documents).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ResponseValue {
    /// The response.
    #[prost(message, optional, tag = "1")]
    pub response: Option<Response>,
}

/// One response.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Response {
    /// `description`.
    #[prost(string, tag = "1")]
    pub description: String,
    /// `schema`.
    #[prost(message, optional, tag = "2")]
    pub schema: Option<SchemaItem>,
}

/// A response's schema (never a file in our documents).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SchemaItem {
    /// The schema.
    #[prost(message, optional, tag = "1")]
    pub schema: Option<Schema>,
}

/// A JSON schema, as Swagger 2.0 restricts it.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Schema {
    /// `$ref`.
    #[prost(string, tag = "1")]
    pub _ref: String,
    /// `format`.
    #[prost(string, tag = "2")]
    pub format: String,
    /// `description`.
    #[prost(string, tag = "4")]
    pub description: String,
    /// `required`.
    #[prost(string, repeated, tag = "19")]
    pub required: Vec<String>,
    /// `additionalProperties`.
    #[prost(message, optional, boxed, tag = "21")]
    pub additional_properties: Option<Box<AdditionalPropertiesItem>>,
    /// `type`.
    #[prost(message, optional, tag = "22")]
    pub r#type: Option<TypeItem>,
    /// `items`.
    #[prost(message, optional, tag = "23")]
    pub items: Option<ItemsItem>,
    /// `properties`.
    #[prost(message, optional, tag = "25")]
    pub properties: Option<Properties>,
    /// `x-kubernetes-...` markers.
    #[prost(message, repeated, tag = "31")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `type`: one name (Swagger 2.0 allows a list; our schemas never use one).
#[derive(Clone, PartialEq, prost::Message)]
pub struct TypeItem {
    /// The type names.
    #[prost(string, repeated, tag = "1")]
    pub value: Vec<String>,
}

/// `items`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ItemsItem {
    /// The item schema (one).
    #[prost(message, repeated, tag = "1")]
    pub schema: Vec<Schema>,
}

/// `properties`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Properties {
    /// Each property, in document order.
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSchema>,
}

/// A named schema: a property, or a definition.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedSchema {
    /// The name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// The schema.
    #[prost(message, optional, tag = "2")]
    pub value: Option<Schema>,
}

/// `additionalProperties`: a schema or a boolean.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AdditionalPropertiesItem {
    /// Which one.
    #[prost(oneof = "additional_properties_item::Oneof", tags = "1, 2")]
    pub oneof: Option<additional_properties_item::Oneof>,
}

/// The cases of [`AdditionalPropertiesItem`].
pub mod additional_properties_item {
    /// A schema or a boolean.
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Oneof {
        /// The schema of every value.
        #[prost(message, tag = "1")]
        Schema(Box<super::Schema>),
        /// Whether other properties are allowed.
        #[prost(bool, tag = "2")]
        Boolean(bool),
    }
}

/// `definitions`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Definitions {
    /// Each definition, in document order.
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSchema>,
}

/// One entry of `security`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SecurityRequirement {
    /// Each scheme with its scopes.
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedStringArray>,
}

/// A security scheme's name and scopes.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedStringArray {
    /// The scheme.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Its scopes.
    #[prost(message, optional, tag = "2")]
    pub value: Option<StringArray>,
}

/// A list of strings.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StringArray {
    /// The strings.
    #[prost(string, repeated, tag = "1")]
    pub value: Vec<String>,
}

/// `securityDefinitions`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SecurityDefinitions {
    /// Each scheme.
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSecurityDefinitionsItem>,
}

/// One scheme of `securityDefinitions`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedSecurityDefinitionsItem {
    /// The scheme's name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// The scheme.
    #[prost(message, optional, tag = "2")]
    pub value: Option<SecurityDefinitionsItem>,
}

/// A security scheme (only API keys in our documents: the bearer token header).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SecurityDefinitionsItem {
    /// `type: apiKey`.
    #[prost(message, optional, tag = "2")]
    pub api_key_security: Option<ApiKeySecurity>,
}

/// `type: apiKey`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ApiKeySecurity {
    /// `type` (`apiKey`).
    #[prost(string, tag = "1")]
    pub r#type: String,
    /// `name` (the header).
    #[prost(string, tag = "2")]
    pub name: String,
    /// `in` (`header`).
    #[prost(string, tag = "3")]
    pub r#in: String,
    /// `description`.
    #[prost(string, tag = "4")]
    pub description: String,
}

#[cfg(test)]
mod tests;
