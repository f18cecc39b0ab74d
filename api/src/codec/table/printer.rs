//! What a printer is: the group and resource it prints, its columns, and the function that
//! turns one object (as served, held as JSON) into one row's cells.

use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;

use super::columns::Column;
use crate::flavor::Flavor;

/// What a row is computed against: the request's time (ages are relative to it, the
/// printer never reads a clock) and the naming flavor (label domains).
#[derive(Debug, Clone, Copy)]
pub struct PrintContext {
    /// The request's time.
    pub now: DateTime<Utc>,
    /// The naming flavor.
    pub flavor: Flavor,
}

/// One row's cells and, for finished pods, its `Completed` condition.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Row {
    /// One cell per column, in column order.
    pub cells: Vec<Value>,
    /// The row's conditions (`TableRowCondition`).
    pub conditions: Vec<Value>,
}

impl From<Vec<Value>> for Row {
    fn from(cells: Vec<Value>) -> Self {
        Self {
            cells,
            conditions: Vec::new(),
        }
    }
}

/// Computes one object's row.
pub(super) type RowFn = fn(&Value, &PrintContext) -> Row;

/// The API group a printer is registered for.
#[derive(Debug, Clone, Copy)]
pub(super) enum Group {
    /// The core group (empty).
    Core,
    /// A group spelled the same in every flavor (`apps`, `batch`, `policy`).
    Plain(&'static str),
    /// A group under the flavor's domain (`networking` -> `networking.<domain>`).
    Domain(&'static str),
}

impl Group {
    /// The group's name in `flavor`.
    pub(super) fn name(self, flavor: Flavor) -> String {
        match self {
            Self::Core => String::new(),
            Self::Plain(name) => name.to_owned(),
            Self::Domain(prefix) => format!("{prefix}.{}", flavor.group_domain()),
        }
    }
}

/// The printer of the resources named `resources` in `group`.
pub(super) struct Printer {
    /// The group.
    pub group: Group,
    /// The resources (plural names) printed alike.
    pub resources: &'static [&'static str],
    /// The columns.
    pub columns: &'static [Column],
    /// The row of one object.
    pub row: RowFn,
    /// The order of a list's rows, when it is not the list's (flow schemas: by precedence).
    pub order: Option<fn(&Value, &Value) -> std::cmp::Ordering>,
}
