//! Tables (`Accept: application/json;as=Table;g=meta.<domain>;v=v1|v1beta1`): the rows
//! kube-apiserver prints for the built-in kinds, column by column and cell by cell, and the
//! default two columns (Name, Created At) for every other kind (spec 000 "Table
//! representation", R-RES-040, R-RES-041); custom resources print the columns their CRD
//! version declares.
//!
//! # Layout
//! - [`TablePrinters`]: the printer of each group and resource, chosen once at start-up.
//! - `document`: the Table itself, its metadata, column definitions and row objects.
//! - `columns`: column definitions and their descriptions.
//! - `format`: cell formats (ages, labels, selectors, short lists).
//! - `watch`: the Tables of a watch's events.
//! - [`CustomColumns`] (`custom`): the printer columns of a custom resource version;
//!   `jsonpath` and `jsonpath_eval` parse and evaluate their client-go JSONPaths, `go_text`
//!   prints the values found as Go does.
//! - one file per family of printers: `pods`, `workloads`, `autoscaling`, `network`,
//!   `storage`, `access` (RBAC, certificates, admission, flow control), `events`, `cluster`
//!   (nodes, namespaces, config and the rest).

mod access;
mod autoscaling;
mod cluster;
mod columns;
mod custom;
mod document;
mod events;
mod format;
mod go_text;
mod jsonpath;
mod jsonpath_eval;
mod network;
mod pods;
mod printer;
mod storage;
mod watch;
mod workloads;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::OnceLock;

use chrono::DateTime;
use chrono::Utc;

pub use columns::ColumnDefinition;
pub use custom::CustomColumns;
pub use document::IncludeObject;
pub use document::TableOptions;
pub use printer::PrintContext;
use serde_json::Map;
use serde_json::Value;
pub(super) use watch::TableEvents;

use self::columns::Resolver;
use self::document::Frame;
use self::document::PrintedRow;
use self::format::text;
use self::printer::Printer;
use self::printer::Row;
use self::printer::RowFn;
use super::Context;
use super::MetaVersion;
use crate::error::ApiError;
use crate::flavor::Flavor;

/// `value` (an object or a list, as the handler answered it) as a Table of `version`, with
/// the rows' objects as the request's `includeObject` asks (400 for an unknown value).
pub(super) fn document(
    value: &Value,
    version: MetaVersion,
    context: &Context,
) -> Result<Value, ApiError> {
    let options = TableOptions {
        version,
        include: IncludeObject::from_query(context.include_object.as_deref())?,
        headers: true,
    };
    let printer = RequestPrinter::of(context);
    Ok(if printer.is_list(value) {
        printer.list(value, options, context.now)
    } else {
        printer.object(value, options, context.now)
    })
}

/// The printer of one request: the built-in printer of its resource, or the columns of the
/// custom resource it serves.
#[derive(Clone)]
enum RequestPrinter {
    BuiltIn(TablePrinter),
    Custom(Arc<CustomColumns>, Flavor),
}

impl RequestPrinter {
    /// The printer `context`'s request prints with.
    fn of(context: &Context) -> Self {
        match &context.custom_columns {
            Some(columns) => Self::Custom(columns.clone(), context.flavor),
            None => Self::BuiltIn(
                TablePrinters::of(context.flavor).printer(&context.group, &context.resource),
            ),
        }
    }

    /// Whether `value` is a list of what the printer prints.
    fn is_list(&self, value: &Value) -> bool {
        match self {
            Self::BuiltIn(_) => super::is_list(value),
            Self::Custom(..) => custom::is_list(value),
        }
    }

    fn object(&self, object: &Value, options: TableOptions, now: DateTime<Utc>) -> Value {
        match self {
            Self::BuiltIn(printer) => printer.object(object, options, now),
            Self::Custom(columns, flavor) => columns.object(object, options, now, *flavor),
        }
    }

    fn list(&self, list: &Value, options: TableOptions, now: DateTime<Utc>) -> Value {
        match self {
            Self::BuiltIn(printer) => printer.list(list, options, now),
            Self::Custom(columns, flavor) => columns.list(list, options, now, *flavor),
        }
    }
}

/// Every printer, by family.
const FAMILIES: [&[Printer]; 8] = [
    pods::PRINTERS,
    workloads::PRINTERS,
    autoscaling::PRINTERS,
    network::PRINTERS,
    storage::PRINTERS,
    access::PRINTERS,
    cluster::PRINTERS,
    events::PRINTERS,
];

/// One printer with its column definitions resolved.
#[derive(Clone, Copy)]
struct Resolved {
    columns: &'static [ColumnDefinition],
    /// `None`: the default row (name, creation time).
    row: Option<RowFn>,
    /// The order of a list's rows, when it is not the list's.
    order: Option<fn(&Value, &Value) -> std::cmp::Ordering>,
}

/// The column definitions of every printer (in [`FAMILIES`] order) and of the default
/// printer, resolved once per process: generating the documented types' schemas is the
/// costly part, and the definitions do not depend on the flavor.
fn definitions() -> &'static (Vec<Vec<ColumnDefinition>>, Vec<ColumnDefinition>) {
    static DEFINITIONS: OnceLock<(Vec<Vec<ColumnDefinition>>, Vec<ColumnDefinition>)> =
        OnceLock::new();
    DEFINITIONS.get_or_init(|| {
        let mut resolver = Resolver::default();
        let printers = FAMILIES
            .iter()
            .flat_map(|f| f.iter())
            .map(|p| resolver.definitions(p.columns))
            .collect();
        (printers, resolver.definitions(columns::DEFAULT_COLUMNS))
    })
}

/// The printers of the server's flavor, by group and resource, built once at start-up.
pub struct TablePrinters {
    flavor: Flavor,
    by_resource: HashMap<(String, String), Resolved>,
    default: Resolved,
}

impl TablePrinters {
    /// The printers of `flavor`, built the first time they are asked for.
    pub fn of(flavor: Flavor) -> &'static Self {
        static PLATFORM: OnceLock<TablePrinters> = OnceLock::new();
        static KUBERNETES: OnceLock<TablePrinters> = OnceLock::new();
        let printers = match flavor {
            Flavor::Platform => &PLATFORM,
            Flavor::Kubernetes => &KUBERNETES,
        };
        printers.get_or_init(|| Self::new(flavor))
    }

    /// The printers of every built-in kind Kubernetes prints, in `flavor`'s group names.
    pub fn new(flavor: Flavor) -> Self {
        let (printer_columns, default_columns) = definitions();
        let mut by_resource = HashMap::new();
        let printers = FAMILIES.iter().flat_map(|f| f.iter());
        for (printer, columns) in printers.zip(printer_columns) {
            for resource in printer.resources {
                let key = (printer.group.name(flavor), (*resource).to_owned());
                let resolved = Resolved {
                    columns,
                    row: Some(printer.row),
                    order: printer.order,
                };
                by_resource.insert(key, resolved);
            }
        }
        let default = Resolved {
            columns: default_columns,
            row: None,
            order: None,
        };
        Self {
            flavor,
            by_resource,
            default,
        }
    }

    /// The printer of `resource` in `group` (the default printer for a kind without one).
    pub fn printer(&self, group: &str, resource: &str) -> TablePrinter {
        let resolved = *self
            .by_resource
            .get(&(group.to_owned(), resource.to_owned()))
            .unwrap_or(&self.default);
        TablePrinter {
            flavor: self.flavor,
            resolved,
        }
    }
}

/// The printer of one resource, ready to print objects and lists of it (and small enough
/// to be copied into a watch).
#[derive(Clone, Copy)]
pub struct TablePrinter {
    flavor: Flavor,
    resolved: Resolved,
}

impl TablePrinter {
    /// The Table of one object: one row, the object's `resourceVersion`.
    pub fn object(&self, object: &Value, options: TableOptions, now: DateTime<Utc>) -> Value {
        let meta = object
            .get("metadata")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let rows = vec![self.print(object, now)];
        let what = (text(object, "/apiVersion"), text(object, "/kind"));
        document::table(&self.frame(what, options), &meta, Some(rows))
    }

    /// The Table of a list: one row per item, the list's `resourceVersion`, `continue` and
    /// `remainingItemCount`.
    pub fn list(&self, list: &Value, options: TableOptions, now: DateTime<Utc>) -> Value {
        let meta = list
            .get("metadata")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_else(Map::new);
        let mut items: Vec<&Value> = format::items(list, "/items").iter().collect();
        if let Some(order) = self.resolved.order {
            items.sort_by(|a, b| order(a, b));
        }
        let rows = if items.is_empty() && self.resolved.row.is_none() {
            None
        } else {
            Some(
                items
                    .into_iter()
                    .map(|item| self.print(item, now))
                    .collect(),
            )
        };
        let kind = text(list, "/kind");
        let what = (
            text(list, "/apiVersion"),
            kind.strip_suffix("List").unwrap_or(kind),
        );
        document::table(&self.frame(what, options), &meta, rows)
    }

    fn frame<'b>(&self, type_meta: (&'b str, &'b str), options: TableOptions) -> Frame<'b> {
        Frame {
            flavor: self.flavor,
            options,
            columns: self.resolved.columns,
            type_meta,
        }
    }

    fn print<'o>(&self, object: &'o Value, now: DateTime<Utc>) -> PrintedRow<'o> {
        let ctx = PrintContext {
            now,
            flavor: self.flavor,
        };
        let Row { cells, conditions } = match self.resolved.row {
            Some(row) => row(object, &ctx),
            None => default_row(object),
        };
        PrintedRow {
            cells,
            conditions,
            object,
        }
    }
}

/// The default row: the name and the creation time in RFC 3339 (UTC, seconds).
fn default_row(object: &Value) -> Row {
    let created = format::time(object, "/metadata/creationTimestamp").map_or_else(
        || "0001-01-01T00:00:00Z".to_owned(),
        |t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
    );
    vec![
        Value::from(format::text(object, "/metadata/name")),
        Value::from(created),
    ]
    .into()
}

#[cfg(test)]
mod tests;
