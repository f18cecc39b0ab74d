//! A watch answered with Tables: each event's object is a Table of one row; the first event
//! carries the column definitions and the others none, as kube-apiserver streams them.
//! BOOKMARKs are printed like any object (a Table whose row shows the bookmark's almost
//! empty object, its `metadata.resourceVersion` the bookmark's), ERROR Statuses stay Statuses.

use bytes::Bytes;
use serde_json::Value;
use serde_json::json;

use super::IncludeObject;
use super::RequestPrinter;
use super::TableOptions;
use crate::codec::Context;
use crate::codec::EventEncoder;
use crate::codec::MetaVersion;
use crate::error::ApiError;

/// The JSON events of a Table watch.
pub(in crate::codec) struct TableEvents {
    printer: RequestPrinter,
    options: TableOptions,
    context: Context,
}

impl TableEvents {
    /// The encoder of a watch asking for Tables of `version`; 400 for an unknown
    /// `includeObject`, before the watch starts.
    pub(in crate::codec) fn new(version: MetaVersion, context: Context) -> Result<Self, ApiError> {
        let options = TableOptions {
            version,
            include: IncludeObject::from_query(context.include_object.as_deref())?,
            headers: true,
        };
        let printer = RequestPrinter::of(&context);
        Ok(Self {
            printer,
            options,
            context,
        })
    }
}

impl EventEncoder for TableEvents {
    fn content_type(&self) -> String {
        "application/json".to_owned()
    }

    fn event(&mut self, kind: &str, object: Value) -> Result<Bytes, ApiError> {
        let object = if crate::codec::is_status(&object) {
            object
        } else {
            let table = self.printer.object(&object, self.options, self.context.now);
            self.options.headers = false;
            table
        };
        let mut line = json!({"type": kind, "object": object}).to_string();
        line.push('\n');
        Ok(Bytes::from(line))
    }
}
