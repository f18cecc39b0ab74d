//! The encoding of watch events (spec 000 "Watch event", "Events"; R-RES-038, R-RES-234): in
//! JSON, each event is one document `{"type":<T>,"object":<object>}` followed by a newline, so
//! a client can decode the body as a stream of documents.
//!
//! Objects go out as the stored bytes with their `resourceVersion` spliced in (never
//! re-encoded); BOOKMARK and ERROR objects are built here.

use bytes::Bytes;
use serde_json::json;

use crate::error::ApiError;
use crate::flavor::Flavor;
use crate::registry::StoredJson;
use crate::storage::Revision;

/// The `type` of a watch event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventType {
    /// The object was created after the start version, or exists at a start with initial
    /// events (R-RES-227).
    Added,
    /// The object was updated (R-RES-228).
    Modified,
    /// The object was deleted, or no longer matches the watch's selectors (R-RES-230).
    Deleted,
    /// Every change up to the object's `resourceVersion` has been sent (R-RES-229).
    Bookmark,
    /// The watch failed; the object is a `Status` and the stream ends (R-RES-231).
    Error,
}

impl EventType {
    fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
            Self::Bookmark => "BOOKMARK",
            Self::Error => "ERROR",
        }
    }
}

/// Writes the event's head, `{"type":"<T>","object":`, to `out`.
fn head(kind: EventType, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_str().as_bytes());
    out.extend_from_slice(b"\",\"object\":");
}

/// The event `kind` of a JSON `object` (a converted object, or one built here).
pub(crate) fn event(kind: EventType, object: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(object.len().saturating_add(32));
    head(kind, &mut out);
    out.extend_from_slice(object);
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

/// The event `kind` of a stored object at `revision` (its `resourceVersion`), spliced
/// without parsing.
pub(crate) fn object_event(kind: EventType, stored: &StoredJson, revision: Revision) -> Bytes {
    let mut out = Vec::with_capacity(stored.json.len().saturating_add(64));
    head(kind, &mut out);
    stored.write_with_resource_version(revision, &mut out);
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

/// The object of a BOOKMARK of `kind`/`api_version` objects.
pub(crate) struct BookmarkObject {
    /// The watched kind.
    pub kind: String,
    /// The watched kind's `apiVersion`.
    pub api_version: String,
    /// The flavor, which spells the initial-events-end annotation.
    pub flavor: Flavor,
}

impl BookmarkObject {
    /// A BOOKMARK at `revision`: an object of the watched kind with only
    /// `metadata.resourceVersion` set, as Kubernetes sends it (an unset `creationTimestamp`
    /// encodes as null). `initial_events_end` adds the annotation
    /// `<domain>/initial-events-end: "true"` that ends a streaming list's initial events
    /// (R-RES-039 with the CHECKLIST's Kubernetes row, R-RES-179).
    pub(crate) fn event(&self, revision: Revision, initial_events_end: bool) -> Bytes {
        let mut metadata = json!({
            "resourceVersion": revision.to_string(),
            "creationTimestamp": null,
        });
        if initial_events_end {
            let key = format!("{}/initial-events-end", self.flavor.group_domain());
            metadata["annotations"] = json!({ key: "true" });
        }
        let object = json!({
            "kind": self.kind,
            "apiVersion": self.api_version,
            "metadata": metadata,
        });
        event(EventType::Bookmark, object.to_string().as_bytes())
    }
}

/// The ERROR event of `error`: its `Status` (R-RES-231).
pub(crate) fn error_event(error: &ApiError) -> Bytes {
    event(EventType::Error, error.status().to_string().as_bytes())
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn parse(frame: &Bytes) -> Value {
        assert_eq!(frame.last(), Some(&b'\n'), "an event ends with a newline");
        serde_json::from_slice(frame).expect("one JSON document")
    }

    // R-RES-038, R-RES-234
    #[test]
    fn object_events_splice_the_resource_version() {
        let stored = StoredJson::from_stored(
            StoredJson::to_stored(&json!({"kind":"ConfigMap","metadata":{"name":"a"}}))
                .expect("encodes"),
        )
        .expect("decodes");
        let e = parse(&object_event(EventType::Modified, &stored, 7));
        assert_eq!(
            e,
            json!({"type":"MODIFIED","object":{"kind":"ConfigMap","metadata":{"resourceVersion":"7","name":"a"}}})
        );
    }

    // R-RES-039, R-RES-179
    #[test]
    fn bookmarks_carry_only_the_resource_version() {
        let b = BookmarkObject {
            kind: "ConfigMap".into(),
            api_version: "v1".into(),
            flavor: Flavor::Kubernetes,
        };
        assert_eq!(
            parse(&b.event(9, false)),
            json!({"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1",
                "metadata":{"resourceVersion":"9","creationTimestamp":null}}})
        );
        let end = parse(&b.event(9, true));
        assert_eq!(
            end["object"]["metadata"]["annotations"],
            json!({"k8s.io/initial-events-end":"true"})
        );
        let platform = BookmarkObject {
            flavor: Flavor::Platform,
            ..b
        };
        assert_eq!(
            parse(&platform.event(9, true))["object"]["metadata"]["annotations"],
            json!({"platform.io/initial-events-end":"true"})
        );
    }

    // R-RES-231
    #[test]
    fn errors_carry_a_status() {
        let e = parse(&error_event(&ApiError::Gone {
            requested: 3,
            compacted: 5,
        }));
        assert_eq!(e["type"], "ERROR");
        assert_eq!(e["object"]["kind"], "Status");
        assert_eq!(e["object"]["code"], 410);
        assert_eq!(e["object"]["reason"], "Expired");
        assert_eq!(e["object"]["message"], "too old resource version: 3 (5)");
    }
}
