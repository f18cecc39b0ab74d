//! The Tables of custom resources: the Name column, then the `additionalPrinterColumns` of the
//! served version (or Kubernetes' default `Age` column), each cell the first value its
//! JSONPath finds in the object, typed as apiextensions-apiserver's table convertor types it.

use chrono::DateTime;
use chrono::Utc;
use serde_json::Map;
use serde_json::Value;

use super::TableOptions;
use super::columns::ColumnDefinition;
use super::document;
use super::document::Frame;
use super::document::PrintedRow;
use super::format;
use super::go_text;
use super::jsonpath::JsonPath;
use super::jsonpath_eval::Item;
use crate::flavor::Flavor;

/// A custom resource version's printer columns, compiled once per CRD generation.
#[derive(Debug)]
pub struct CustomColumns {
    /// Name, then one definition per column.
    definitions: Vec<ColumnDefinition>,
    /// The columns after Name, in order.
    columns: Vec<Column>,
}

/// One printer column: its type and its path.
#[derive(Debug)]
struct Column {
    kind: String,
    path: JsonPath,
}

impl CustomColumns {
    /// The columns of `additionalPrinterColumns` (already validated with the CRD). An empty
    /// slice gives Kubernetes' default columns (Name, Age). As in Kubernetes, a column whose
    /// path does not parse is left out, and so is every column after it.
    pub fn compile(additional_printer_columns: &[Value]) -> Self {
        let (_, defaults) = super::definitions();
        let mut definitions: Vec<ColumnDefinition> = defaults.iter().take(1).cloned().collect();
        let mut columns = Vec::new();
        let default = [age_column(defaults.get(1))];
        let declared = if additional_printer_columns.is_empty() {
            &default[..]
        } else {
            additional_printer_columns
        };
        for column in declared {
            let text = |key: &str| column.get(key).and_then(Value::as_str).unwrap_or("");
            let json_path = text("jsonPath");
            let Ok(path) = JsonPath::parse(&format!("{{{json_path}}}")) else {
                break;
            };
            let description = match text("description") {
                "" => {
                    format!("Custom resource definition column (in JSONPath format): {json_path}")
                }
                given => given.to_owned(),
            };
            let priority = column.get("priority").and_then(Value::as_i64).unwrap_or(0);
            definitions.push(ColumnDefinition {
                name: text("name").to_owned(),
                kind: text("type").to_owned(),
                format: text("format").to_owned(),
                description,
                priority: i32::try_from(priority).unwrap_or(if priority < 0 {
                    i32::MIN
                } else {
                    i32::MAX
                }),
            });
            columns.push(Column {
                kind: text("type").to_owned(),
                path,
            });
        }
        Self {
            definitions,
            columns,
        }
    }

    /// The Table of one custom resource: one row, the object's `resourceVersion`.
    pub(super) fn object(
        &self,
        object: &Value,
        options: TableOptions,
        now: DateTime<Utc>,
        flavor: Flavor,
    ) -> Value {
        let meta = format::map(object, "/metadata")
            .cloned()
            .unwrap_or_default();
        let rows = vec![self.print(object, now)];
        let what = (
            format::text(object, "/apiVersion"),
            format::text(object, "/kind"),
        );
        document::table(&self.frame(what, options, flavor), &meta, Some(rows))
    }

    /// The Table of a list of custom resources: one row per item (an empty list has no
    /// rows, `[]`), the list's `resourceVersion`, `continue` and `remainingItemCount`.
    pub(super) fn list(
        &self,
        list: &Value,
        options: TableOptions,
        now: DateTime<Utc>,
        flavor: Flavor,
    ) -> Value {
        let meta = format::map(list, "/metadata")
            .cloned()
            .unwrap_or_else(Map::new);
        let rows = format::items(list, "/items")
            .iter()
            .map(|item| self.print(item, now))
            .collect();
        let kind = match format::text(list, "/items/0/kind") {
            "" => {
                let list_kind = format::text(list, "/kind");
                list_kind.strip_suffix("List").unwrap_or(list_kind)
            }
            kind => kind,
        };
        let what = (format::text(list, "/apiVersion"), kind);
        document::table(&self.frame(what, options, flavor), &meta, Some(rows))
    }

    fn frame<'b>(
        &'b self,
        type_meta: (&'b str, &'b str),
        options: TableOptions,
        flavor: Flavor,
    ) -> Frame<'b> {
        Frame {
            flavor,
            options,
            columns: &self.definitions,
            type_meta,
        }
    }

    fn print<'o>(&self, object: &'o Value, now: DateTime<Utc>) -> PrintedRow<'o> {
        let mut cells = Vec::with_capacity(1 + self.columns.len());
        cells.push(Value::from(format::text(object, "/metadata/name")));
        for column in &self.columns {
            let cell = column
                .path
                .first(object)
                .map_or(Value::Null, |item| cell(&column.kind, item, now));
            cells.push(cell);
        }
        PrintedRow {
            cells,
            conditions: Vec::new(),
            object,
        }
    }
}

/// Whether `value` is a list of custom resources: it has `items` and no name (a CRD's
/// `listKind` need not end in `List`, and every custom resource has a name).
pub(super) fn is_list(value: &Value) -> bool {
    value.get("items").is_some_and(Value::is_array)
        && value.pointer("/metadata/name").is_none()
        && value.get("kind").and_then(Value::as_str).is_some()
}

/// The cell of a column of type `kind` showing `item`: a `string` column prints any value
/// (maps and arrays as JSON); the other types take only values of their type (an integer
/// column truncates a float, a number column widens an integer) and are empty otherwise; a
/// `date` prints the age of the time it holds at `now`.
fn cell(kind: &str, item: Item<'_>, now: DateTime<Utc>) -> Value {
    if kind == "string" {
        return go_text::print(item).map_or(Value::Null, Value::from);
    }
    let json = match item {
        Item::Json(value) => value,
        Item::Text(text) if kind == "date" => return Value::from(age(text, now)),
        Item::Float(f) if kind == "number" => return number(f),
        Item::Float(f) if kind == "integer" => return Value::from(truncate(f)),
        Item::Bool(b) if kind == "boolean" => return Value::Bool(b),
        _ => return Value::Null,
    };
    match (kind, json) {
        ("integer", Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().map(truncate))
            .map_or(Value::Null, Value::from),
        ("number", Value::Number(n)) => n
            .as_i64()
            .map(|i| i as f64)
            .or_else(|| n.as_f64())
            .map_or(Value::Null, number),
        ("boolean", Value::Bool(b)) => Value::Bool(*b),
        ("date", Value::String(text)) => Value::from(age(text, now)),
        _ => Value::Null,
    }
}

/// The column Kubernetes serves for a version without printer columns: the age of
/// `metadata.creationTimestamp`, described as that field (`created`).
fn age_column(created: Option<&ColumnDefinition>) -> Value {
    serde_json::json!({
        "name": "Age",
        "type": "date",
        "jsonPath": ".metadata.creationTimestamp",
        "description": created.map(|c| c.description.as_str()).unwrap_or_default(),
    })
}

/// A float as Go converts it to an integer (toward zero, saturating).
fn truncate(f: f64) -> i64 {
    f.trunc() as i64
}

/// A float cell, written as Go writes it (`3`, not `3.0`, for an integral one).
fn number(f: f64) -> Value {
    const I64_RANGE: f64 = 9_223_372_036_854_775_808.0;
    if f.fract() == 0.0 && f.abs() < I64_RANGE {
        Value::from(f as i64)
    } else {
        serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

/// A `date` cell: `<unknown>` for an empty or zero time, `<invalid>` for a malformed one,
/// else the age at `now`.
fn age(text: &str, now: DateTime<Utc>) -> String {
    if text.is_empty() || text == "null" {
        return "<unknown>".to_owned();
    }
    let Some(time) = rfc3339(text) else {
        return "<invalid>".to_owned();
    };
    if time.timestamp() == ZERO_TIME {
        return "<unknown>".to_owned();
    }
    format::human_duration(now - time)
}

/// Go's zero time (0001-01-01T00:00:00Z) in Unix seconds.
const ZERO_TIME: i64 = -62_135_596_800;

/// A timestamp in Go's `time.RFC3339` layout: `YYYY-MM-DDTHH:MM:SS`, optional fractional
/// seconds, then `Z` or `±HH:MM`.
fn rfc3339(text: &str) -> Option<DateTime<Utc>> {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        bytes
            .get(range)
            .is_some_and(|b| b.iter().all(u8::is_ascii_digit))
    };
    let at = |i: usize, c: u8| bytes.get(i) == Some(&c);
    let shape = digits(0..4)
        && at(4, b'-')
        && digits(5..7)
        && at(7, b'-')
        && digits(8..10)
        && at(10, b'T')
        && digits(11..13)
        && at(13, b':')
        && digits(14..16)
        && at(16, b':')
        && digits(17..19);
    if !shape {
        return None;
    }
    let mut zone = 19;
    if at(19, b'.') || at(19, b',') {
        zone = 20;
        while bytes.get(zone).is_some_and(u8::is_ascii_digit) {
            zone += 1;
        }
        if zone == 20 {
            return None;
        }
    }
    let offset_ok = match bytes.get(zone) {
        Some(b'Z') => zone + 1 == bytes.len(),
        Some(b'+' | b'-') => {
            zone + 6 == bytes.len()
                && digits(zone + 1..zone + 3)
                && at(zone + 3, b':')
                && digits(zone + 4..zone + 6)
        }
        _ => false,
    };
    if !offset_ok || text.get(17..19).is_some_and(|s| s >= "60") {
        return None;
    }
    DateTime::parse_from_rfc3339(&text.replacen(',', ".", 1))
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

#[cfg(test)]
#[path = "custom_tests.rs"]
mod tests;
