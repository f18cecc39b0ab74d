//! Body decoding: a create's or update's body judged in Kubernetes' order (syntax, version
//! and kind, field types, unknown and duplicate fields) against the kind's schema.

use std::sync::Arc;

use serde_json::Map;
use serde_json::Value;

use super::BodySchema;
use super::Store;
use super::WriteOptions;
use crate::error::ApiError;
use crate::error::excerpt;
use crate::schema;
use crate::validation::FieldError;

impl Store {
    /// Decodes a request body in the order Kubernetes judges it, each step a 400 that ends
    /// the request (R-RES-190): syntax (naming line and column; types, unknown and duplicate
    /// fields are judged in the same pass), `apiVersion` and `kind`, the first field of the
    /// wrong type (R-RES-031), and last the unknown and duplicate fields as
    /// `field_validation` asks (R-RES-185..187): the object and the warnings to answer.
    pub(super) fn decode_body(
        &self,
        body: &[u8],
        write: &WriteOptions,
    ) -> Result<(Value, Vec<String>), ApiError> {
        self.decode_with(body, write, schema::decode)
    }

    /// Decodes a server-side apply configuration as [`Store::decode_body`] decodes a body,
    /// but as the partial object it is: required fields it leaves out stay out.
    pub(super) fn decode_config(
        &self,
        body: &[u8],
        write: &WriteOptions,
    ) -> Result<(Value, Vec<String>), ApiError> {
        self.decode_with(body, write, schema::decode_partial)
    }

    fn decode_with(
        &self,
        body: &[u8],
        write: &WriteOptions,
        decode: fn(
            &schema::Schema,
            &[u8],
            schema::Format,
        ) -> Result<schema::Decoded, schema::SyntaxError>,
    ) -> Result<(Value, Vec<String>), ApiError> {
        let parse_error = |e: &dyn std::fmt::Display| {
            ApiError::BadRequest(format!("couldn't get version/kind; json parse error: {e}"))
        };
        let any = schema::Schema::any();
        let compiled = self.compiled_schema()?;
        let schema = compiled.as_deref().unwrap_or(&any);
        let decoded = decode(schema, body, write.format).map_err(|e| parse_error(&e))?;
        let Value::Object(mut raw) = decoded.value else {
            return Err(parse_error(&"the body is not a JSON object"));
        };
        let expected_version = self.resource.api_version();
        if let Some(v) = raw.get("apiVersion").and_then(Value::as_str)
            && v != expected_version
        {
            return Err(ApiError::BadRequest(format!(
                "the API version in the data ({}) does not match the expected API version ({expected_version})",
                excerpt(v)
            )));
        }
        if let Some(k) = raw.get("kind").and_then(Value::as_str)
            && k != self.resource.kind
        {
            return Err(ApiError::BadRequest(format!(
                "the kind in the data ({}) does not match the expected kind ({})",
                excerpt(k),
                self.resource.kind
            )));
        }
        let cannot_handle = |e: &dyn std::fmt::Display| {
            let kind = &self.resource.kind;
            ApiError::BadRequest(format!(
                "{kind} in version \"{}\" cannot be handled as a {kind}: {e}",
                self.resource.version
            ))
        };
        if let Some(e) = decoded.type_error {
            return Err(cannot_handle(&e));
        }
        let warnings = write
            .field_validation
            .judge(decoded.findings)
            .map_err(|e| cannot_handle(&e))?;
        // The served apiVersion and kind lead the object, as the typed round trip wrote them.
        raw.shift_remove("apiVersion");
        raw.shift_remove("kind");
        let mut obj = Map::new();
        obj.insert("apiVersion".to_owned(), expected_version.into());
        obj.insert("kind".to_owned(), self.resource.kind.clone().into());
        obj.extend(raw);
        if !obj.get("metadata").is_some_and(Value::is_object) {
            obj.insert("metadata".to_owned(), Value::Object(Map::new()));
        }
        Ok((Value::Object(obj), warnings))
    }

    /// The kind's compiled schema, if it has one (test kinds do not).
    pub(super) fn compiled_schema(&self) -> Result<Option<Arc<schema::Schema>>, ApiError> {
        match &self.schema {
            None => Ok(None),
            Some(BodySchema::Compiled(schema)) => Ok(Some(schema.clone())),
            Some(BodySchema::Builtin(schema)) => schema().map(Some).map_err(|e| {
                ApiError::Internal(format!(
                    "the schema of {} is broken: {e}",
                    self.resource.kind
                ))
            }),
        }
    }

    /// The required fields of `obj` its schema finds unset, added to `errs` unless a kind
    /// rule already reported them (R-RES-030); checked after defaulting, next to
    /// `validate_new`.
    pub(super) fn check_required(
        &self,
        obj: &Value,
        errs: &mut Vec<FieldError>,
    ) -> Result<(), ApiError> {
        if let Some(schema) = self.compiled_schema()? {
            schema::missing_required(&schema, obj, errs);
        }
        Ok(())
    }
}
