//! The Table document (`meta/v1` and `meta/v1beta1` `Table`): its metadata carried from
//! the object or list printed, its column definitions (left out when the caller asks for no
//! headers, as every watch event after the first), and its rows with the object each row
//! shows, as `includeObject` asks.

use serde_json::Map;
use serde_json::Value;
use serde_json::json;

use super::columns::ColumnDefinition;
use crate::codec::MetaVersion;
use crate::error::ApiError;
use crate::flavor::Flavor;

/// What each row carries in `object` (`includeObject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IncludeObject {
    /// Nothing (`null`).
    None,
    /// The object's metadata as a `PartialObjectMetadata` (the default).
    #[default]
    Metadata,
    /// The whole object, with its kind and apiVersion.
    Object,
}

impl IncludeObject {
    /// The `includeObject` query value; absent or empty is `Metadata`, any other value
    /// than `None`, `Metadata` and `Object` is 400, as Kubernetes validates it.
    pub fn from_query(value: Option<&str>) -> Result<Self, ApiError> {
        match value.unwrap_or_default() {
            "" | "Metadata" => Ok(Self::Metadata),
            "None" => Ok(Self::None),
            "Object" => Ok(Self::Object),
            other => Err(ApiError::BadRequest(format!(
                "Unable to convert to Table as requested: includeObject: Invalid value: \
                 {other:?}: must be 'Metadata', 'Object', 'None', or empty"
            ))),
        }
    }
}

/// How a Table is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableOptions {
    /// The meta version of the Table and of the rows' `PartialObjectMetadata`.
    pub version: MetaVersion,
    /// What each row carries.
    pub include: IncludeObject,
    /// Whether `columnDefinitions` are sent (false: `null`, as on the watch events after
    /// the first).
    pub headers: bool,
}

/// One printed row before its object is chosen.
pub(super) struct PrintedRow<'a> {
    /// The cells.
    pub cells: Vec<Value>,
    /// The conditions.
    pub conditions: Vec<Value>,
    /// The object printed.
    pub object: &'a Value,
}

/// What the Table is made of besides its rows.
pub(super) struct Frame<'a> {
    /// The naming flavor (the meta group's name).
    pub flavor: Flavor,
    /// The options.
    pub options: TableOptions,
    /// The column definitions of the printer.
    pub columns: &'a [ColumnDefinition],
    /// The `apiVersion` and `kind` of the objects printed (their row objects carry them).
    pub type_meta: (&'a str, &'a str),
}

/// The Table of `rows`, with the list metadata `meta` (`resourceVersion`, `continue`,
/// `remainingItemCount`; empty values left out). `rows` is `None` when the printer gives
/// none (`null`, as Kubernetes' default printer does for an empty list).
pub(super) fn table(
    frame: &Frame<'_>,
    meta: &Map<String, Value>,
    rows: Option<Vec<PrintedRow<'_>>>,
) -> Value {
    let api_version = format!(
        "{}/{}",
        frame.flavor.meta_group(),
        frame.options.version.as_str()
    );
    let mut metadata = Map::new();
    for key in ["resourceVersion", "continue"] {
        if let Some(value) = meta
            .get(key)
            .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
        {
            metadata.insert(key.to_owned(), value.clone());
        }
    }
    if let Some(count) = meta.get("remainingItemCount").filter(|v| v.is_number()) {
        metadata.insert("remainingItemCount".to_owned(), count.clone());
    }
    let columns = if frame.options.headers {
        serde_json::to_value(frame.columns).unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    let rows = rows.map_or(Value::Null, |rows| {
        Value::Array(
            rows.into_iter()
                .map(|r| row(frame, &api_version, r))
                .collect(),
        )
    });
    json!({
        "kind": "Table",
        "apiVersion": api_version,
        "metadata": metadata,
        "columnDefinitions": columns,
        "rows": rows,
    })
}

fn row(frame: &Frame<'_>, meta_api_version: &str, printed: PrintedRow<'_>) -> Value {
    let object = match frame.options.include {
        IncludeObject::None => Value::Null,
        IncludeObject::Metadata => json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": meta_api_version,
            "metadata": printed.object.get("metadata").cloned().unwrap_or_else(|| json!({})),
        }),
        IncludeObject::Object => with_type_meta(printed.object, frame.type_meta),
    };
    let mut out = Map::new();
    out.insert("cells".to_owned(), Value::Array(printed.cells));
    if !printed.conditions.is_empty() {
        out.insert("conditions".to_owned(), Value::Array(printed.conditions));
    }
    out.insert("object".to_owned(), object);
    Value::Object(out)
}

/// The object with `kind` and `apiVersion` first (list items are stored without them).
fn with_type_meta(object: &Value, (api_version, kind): (&str, &str)) -> Value {
    let mut out = Map::new();
    out.insert("kind".to_owned(), Value::from(kind));
    out.insert("apiVersion".to_owned(), Value::from(api_version));
    if let Some(fields) = object.as_object() {
        for (key, value) in fields {
            if key != "kind" && key != "apiVersion" {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn include_object_values_are_checked() {
        assert_eq!(
            IncludeObject::from_query(None).unwrap(),
            IncludeObject::Metadata
        );
        assert_eq!(
            IncludeObject::from_query(Some("")).unwrap(),
            IncludeObject::Metadata
        );
        assert_eq!(
            IncludeObject::from_query(Some("None")).unwrap(),
            IncludeObject::None
        );
        assert_eq!(
            IncludeObject::from_query(Some("Object")).unwrap(),
            IncludeObject::Object
        );
        assert!(matches!(
            IncludeObject::from_query(Some("Everything")),
            Err(ApiError::BadRequest(m)) if m.contains("\"Everything\"")
        ));
    }
}
