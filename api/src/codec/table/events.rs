//! Events, core `v1` and `events.<domain>/v1` alike: the same columns, read from each
//! version's fields (`involvedObject` or `regarding`, `message` or `note`, ...), with the
//! series' count and last time when the event has one.

use k8s_openapi::api::core::v1 as core;
use serde_json::Value;

use super::columns::Column;
use super::columns::Doc;
use super::columns::meta;
use super::columns::schema_of;
use super::format;
use super::format::int;
use super::format::text;
use super::printer::Group;
use super::printer::PrintContext;
use super::printer::Printer;
use super::printer::Row;

const EVENT_COLUMNS: &[Column] = &[
    Column::string(
        "Last Seen",
        Doc::Field(schema_of::<core::Event>, "lastTimestamp"),
    ),
    Column::string("Type", Doc::Field(schema_of::<core::Event>, "type")),
    Column::string("Reason", Doc::Field(schema_of::<core::Event>, "reason")),
    Column::string(
        "Object",
        Doc::Field(schema_of::<core::Event>, "involvedObject"),
    ),
    Column::string(
        "Subobject",
        Doc::Field(schema_of::<core::ObjectReference>, "fieldPath"),
    )
    .wide(),
    Column::string("Source", Doc::Field(schema_of::<core::Event>, "source")).wide(),
    Column::string("Message", Doc::Field(schema_of::<core::Event>, "message")),
    Column::string(
        "First Seen",
        Doc::Field(schema_of::<core::Event>, "firstTimestamp"),
    )
    .wide(),
    Column::string("Count", Doc::Field(schema_of::<core::Event>, "count")).wide(),
    Column::string("Name", meta("name")).named().wide(),
];

/// The printers of this family.
pub(super) const PRINTERS: &[Printer] = &[
    Printer {
        group: Group::Core,
        resources: &["events"],
        columns: EVENT_COLUMNS,
        row: core_event_row,
        order: None,
    },
    Printer {
        group: Group::Domain("events"),
        resources: &["events"],
        columns: EVENT_COLUMNS,
        row: events_event_row,
        order: None,
    },
];

/// Where an event version keeps the fields the event columns show.
struct EventFields {
    regarding: &'static str,
    message: &'static str,
    source: &'static str,
    first: &'static str,
    last: &'static str,
    count: &'static str,
}

fn event_row(event: &Value, ctx: &PrintContext, fields: &EventFields) -> Row {
    let set = |pointer: &str| event.pointer(pointer).is_some_and(|t| !t.is_null());
    let first = if set(fields.first) {
        format::since(event, fields.first, ctx.now)
    } else {
        format::since(event, "/eventTime", ctx.now)
    };
    let mut last = if set(fields.last) {
        format::since(event, fields.last, ctx.now)
    } else {
        first.clone()
    };
    let mut count = int(event, fields.count);
    if event.get("series").is_some_and(|s| s.is_object()) {
        last = format::since(event, "/series/lastObservedTime", ctx.now);
        count = int(event, "/series/count");
    } else if count == 0 {
        count = 1;
    }
    let kind = text(event, &format!("{}/kind", fields.regarding)).to_lowercase();
    let target = match text(event, &format!("{}/name", fields.regarding)) {
        "" => kind,
        object => format!("{kind}/{object}"),
    };
    let component = format::or(
        text(event, &format!("{}/component", fields.source)),
        text(event, "/reportingController"),
    );
    let host = format::or(
        text(event, &format!("{}/host", fields.source)),
        text(event, "/reportingInstance"),
    );
    let source = if host.is_empty() {
        component
    } else {
        format!("{component}, {host}")
    };
    vec![
        last.into(),
        text(event, "/type").into(),
        text(event, "/reason").into(),
        target.into(),
        text(event, &format!("{}/fieldPath", fields.regarding)).into(),
        source.into(),
        text(event, fields.message).trim().into(),
        first.into(),
        count.into(),
        text(event, "/metadata/name").into(),
    ]
    .into()
}

fn core_event_row(event: &Value, ctx: &PrintContext) -> Row {
    let fields = EventFields {
        regarding: "/involvedObject",
        message: "/message",
        source: "/source",
        first: "/firstTimestamp",
        last: "/lastTimestamp",
        count: "/count",
    };
    event_row(event, ctx, &fields)
}

fn events_event_row(event: &Value, ctx: &PrintContext) -> Row {
    let fields = EventFields {
        regarding: "/regarding",
        message: "/note",
        source: "/deprecatedSource",
        first: "/deprecatedFirstTimestamp",
        last: "/deprecatedLastTimestamp",
        count: "/deprecatedCount",
    };
    event_row(event, ctx, &fields)
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;
