//! One line of a Kubernetes watch stream, decoded: `{"type": ..., "object": {...}}` with the
//! change's revision in `object.metadata.resourceVersion`, a `BOOKMARK`'s object carrying only
//! that, and an `ERROR`'s object a `Status` (code 410 when the start revision is compacted).

use bytes::Bytes;
use serde_json::Value;

use crate::client::VALUE_KEY;
use crate::watch_history::ChangeKind;
use crate::watch_history::ObservedChange;

/// A decoded watch event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchLine {
    /// `ADDED`, `MODIFIED` or `DELETED`.
    Change(ObservedChange),
    /// `BOOKMARK` at a revision.
    Bookmark(u64),
    /// `ERROR` with a 410 Status: the start revision is compacted.
    Gone,
    /// `ERROR` with any other Status: the stream is over.
    Error(String),
}

/// Decodes one line of a watch stream; `Err` says what is malformed.
pub fn parse_watch_line(line: &[u8]) -> Result<WatchLine, String> {
    let event: Value =
        serde_json::from_slice(line).map_err(|e| format!("not JSON ({e}): {:?}", lossy(line)))?;
    let object = &event["object"];
    let revision = || {
        object["metadata"]["resourceVersion"]
            .as_str()
            .and_then(|rv| rv.parse::<u64>().ok())
            .ok_or_else(|| format!("no numeric object.metadata.resourceVersion: {event}"))
    };
    let kind = match event["type"].as_str() {
        Some("ADDED") => ChangeKind::Added,
        Some("MODIFIED") => ChangeKind::Modified,
        Some("DELETED") => ChangeKind::Deleted,
        Some("BOOKMARK") => return revision().map(WatchLine::Bookmark),
        Some("ERROR") if object["code"].as_u64() == Some(410) => return Ok(WatchLine::Gone),
        Some("ERROR") => return Ok(WatchLine::Error(object.to_string())),
        _ => return Err(format!("unknown event type: {event}")),
    };
    let key = object["metadata"]["name"]
        .as_str()
        .ok_or_else(|| format!("no object.metadata.name: {event}"))?;
    // An object without the value key (not written by the clients) has an empty value.
    let value = object["data"][VALUE_KEY].as_str().unwrap_or_default();
    Ok(WatchLine::Change(ObservedChange {
        kind,
        key: key.to_owned(),
        revision: revision()?,
        value: Bytes::copy_from_slice(value.as_bytes()),
    }))
}

fn lossy(line: &[u8]) -> String {
    String::from_utf8_lossy(line).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(kind: ChangeKind, key: &str, revision: u64, value: &str) -> WatchLine {
        WatchLine::Change(ObservedChange {
            kind,
            key: key.to_owned(),
            revision,
            value: Bytes::copy_from_slice(value.as_bytes()),
        })
    }

    // R-RES-232: every change kind, with its revision from object.metadata.resourceVersion.
    #[test]
    fn changes_carry_kind_key_revision_and_value() {
        let added = br#"{"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"7"},"data":{"value":"x"}}}"#;
        assert_eq!(
            parse_watch_line(added),
            Ok(change(ChangeKind::Added, "a", 7, "x"))
        );
        let modified = br#"{"type":"MODIFIED","object":{"metadata":{"name":"a","resourceVersion":"9"},"data":{"value":"y"}}}"#;
        assert_eq!(
            parse_watch_line(modified),
            Ok(change(ChangeKind::Modified, "a", 9, "y"))
        );
        let deleted =
            br#"{"type":"DELETED","object":{"metadata":{"name":"a","resourceVersion":"12"}}}"#;
        assert_eq!(
            parse_watch_line(deleted),
            Ok(change(ChangeKind::Deleted, "a", 12, ""))
        );
    }

    // R-RES-229: a bookmark is its revision; an ERROR with 410 asks for a relist.
    #[test]
    fn bookmarks_and_errors() {
        let bookmark = br#"{"type":"BOOKMARK","object":{"kind":"ConfigMap","metadata":{"resourceVersion":"15"}}}"#;
        assert_eq!(parse_watch_line(bookmark), Ok(WatchLine::Bookmark(15)));
        let gone = br#"{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}}"#;
        assert_eq!(parse_watch_line(gone), Ok(WatchLine::Gone));
        let other = br#"{"type":"ERROR","object":{"kind":"Status","code":500}}"#;
        assert!(matches!(parse_watch_line(other), Ok(WatchLine::Error(_))));
    }

    #[test]
    fn malformed_lines_are_errors() {
        for line in [
            &b"not json"[..],
            br#"{"type":"SOMETHING","object":{}}"#,
            br#"{"type":"ADDED","object":{"metadata":{"name":"a"}}}"#,
            br#"{"type":"ADDED","object":{"metadata":{"resourceVersion":"3"}}}"#,
            br#"{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"x"}}}"#,
        ] {
            assert!(parse_watch_line(line).is_err(), "{}", lossy(line));
        }
    }
}
