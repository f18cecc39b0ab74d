//! Column definitions: a printer's columns as written in code ([`Column`]), their
//! descriptions (fixed text, or the field documentation of the k8s-openapi type the column
//! shows), and the definitions sent in a Table's `columnDefinitions`, resolved once.

use std::collections::HashMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use schemars::JsonSchema;
use schemars::Schema;
use serde::Serialize;

/// Produces the JSON schema of one k8s-openapi type (its properties carry their docs).
pub(super) type SchemaOf = fn() -> Schema;

/// The root schema of `T`.
pub(super) fn schema_of<T>() -> Schema
where
    T: JsonSchema,
{
    schemars::SchemaGenerator::default().into_root_schema_for::<T>()
}

/// Where a column's description comes from.
#[derive(Clone, Copy)]
pub(super) enum Doc {
    /// A fixed text.
    Text(&'static str),
    /// The documentation of a field of a type, as its OpenAPI schema states it.
    Field(SchemaOf, &'static str),
}

/// One column as a printer declares it.
#[derive(Clone, Copy)]
pub(super) struct Column {
    name: &'static str,
    kind: &'static str,
    format: &'static str,
    priority: i32,
    doc: Doc,
}

impl Column {
    /// A column of `kind` (`string`, `integer`, `boolean`, `date`).
    const fn new(name: &'static str, kind: &'static str, doc: Doc) -> Self {
        Self {
            name,
            kind,
            format: "",
            priority: 0,
            doc,
        }
    }

    /// A `string` column.
    pub(super) const fn string(name: &'static str, doc: Doc) -> Self {
        Self::new(name, "string", doc)
    }

    /// An `integer` column.
    pub(super) const fn integer(name: &'static str, doc: Doc) -> Self {
        Self::new(name, "integer", doc)
    }

    /// A `boolean` column.
    pub(super) const fn boolean(name: &'static str, doc: Doc) -> Self {
        Self::new(name, "boolean", doc)
    }

    /// A `date` column.
    pub(super) const fn date(name: &'static str, doc: Doc) -> Self {
        Self::new(name, "date", doc)
    }

    /// The column with format `name` (the column naming the object).
    pub(super) const fn named(mut self) -> Self {
        self.format = "name";
        self
    }

    /// The column as a wide one (priority 1: `kubectl get -o wide` shows it).
    pub(super) const fn wide(mut self) -> Self {
        self.priority = 1;
        self
    }
}

/// A column definition of a Table (`meta/v1` `TableColumnDefinition`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ColumnDefinition {
    /// The column's title.
    pub name: String,
    /// Its OpenAPI type.
    #[serde(rename = "type")]
    pub kind: String,
    /// Its OpenAPI format (`name` for the column naming the object).
    pub format: String,
    /// What it shows.
    pub description: String,
    /// 0 for the default columns, 1 for the wide ones.
    pub priority: i32,
}

/// Resolves column descriptions, generating each documented type's schema once.
#[derive(Default)]
pub(super) struct Resolver {
    schemas: HashMap<usize, Schema>,
}

impl Resolver {
    /// The definitions of `columns`.
    pub(super) fn definitions(&mut self, columns: &[Column]) -> Vec<ColumnDefinition> {
        columns
            .iter()
            .map(|c| ColumnDefinition {
                name: c.name.to_owned(),
                kind: c.kind.to_owned(),
                format: c.format.to_owned(),
                description: self.describe(c.doc),
                priority: c.priority,
            })
            .collect()
    }

    fn describe(&mut self, doc: Doc) -> String {
        match doc {
            Doc::Text(text) => text.to_owned(),
            Doc::Field(schema, field) => {
                let root = self.schemas.entry(schema as usize).or_insert_with(schema);
                root.as_value()
                    .pointer(&format!("/properties/{field}/description"))
                    .and_then(|d| d.as_str())
                    .unwrap_or_default()
                    .to_owned()
            }
        }
    }
}

/// The documentation of `metadata.<field>`.
pub(super) const fn meta(field: &'static str) -> Doc {
    Doc::Field(schema_of::<ObjectMeta>, field)
}

/// The description of a column Kubernetes sends without one (its description names a field
/// of `ObjectMeta` that does not exist).
pub(super) const UNDOCUMENTED: Doc = Doc::Text("");

/// The object's name (the first column of nearly every printer).
pub(super) const NAME: Column = Column::string("Name", meta("name")).named();

/// The object's age.
pub(super) const AGE: Column = Column::string("Age", meta("creationTimestamp"));

/// The container names of a pod template (wide).
pub(super) const CONTAINERS: Column = Column::string(
    "Containers",
    Doc::Text("Names of each container in the template."),
)
.wide();

/// The container images of a pod template (wide).
pub(super) const IMAGES: Column = Column::string(
    "Images",
    Doc::Text("Images referenced by each container in the template."),
)
.wide();

/// The columns of a kind without a printer of its own: the name and the creation time
/// (R-RES-041).
pub(super) const DEFAULT_COLUMNS: &[Column] =
    &[NAME, Column::date("Created At", meta("creationTimestamp"))];

#[cfg(test)]
mod tests {
    use super::*;

    // R-RES-040, R-RES-041
    #[test]
    fn default_columns_are_name_and_creation_date_with_field_docs() {
        let defs = Resolver::default().definitions(DEFAULT_COLUMNS);
        assert_eq!(defs.len(), 2);
        assert_eq!(
            (defs[0].name.as_str(), defs[0].kind.as_str()),
            ("Name", "string")
        );
        assert_eq!(defs[0].format, "name");
        assert!(
            defs[0]
                .description
                .starts_with("Name must be unique within a namespace")
        );
        assert_eq!(
            (defs[1].name.as_str(), defs[1].kind.as_str()),
            ("Created At", "date")
        );
        assert!(
            defs[1]
                .description
                .starts_with("CreationTimestamp is a timestamp")
        );
        assert_eq!(IMAGES.priority, 1);
    }
}
