//! Which changes a watch sends, and as what (spec 000 "Events"; R-RES-227..230).
//!
//! Without selectors nothing is parsed: a change is ADDED, MODIFIED or DELETED by what the
//! store did, and the object is the stored bytes with the resourceVersion spliced in (the hot
//! path). With selectors the old and the new version are both evaluated, as Kubernetes'
//! watch cache does: an object that starts to match is ADDED, one that stops matching is
//! DELETED (its previous state at the change's resourceVersion), one that matches before and
//! after is MODIFIED, and one that matches neither is not sent.
//!
//! A watch of a version that is not the storage version sends converted objects; selectors
//! are evaluated on the stored objects. A conversion that calls out (a custom resource's
//! webhook) is awaited: such a watch converts through [`Filter::converted_event`].

use std::sync::Arc;

use bytes::Bytes;

use super::encoded::EncodedEvents;
use super::event::EventType;
use super::event::event;
use super::event::object_event;
use crate::error::ApiError;
use crate::registry::CorruptObjects;
use crate::registry::ReadConversion;
use crate::registry::StoredJson;
use crate::request::Selectors;
use crate::storage::Change;
use crate::storage::ChangeKind;
use crate::storage::StoredObject;

/// What a watch selects: optionally one object by name, and the request's selectors.
#[derive(Debug, Clone)]
pub(crate) struct Filter {
    /// The one object watched (from the path), compared with the key's last segment.
    name: Option<String>,
    selectors: Selectors,
    /// Events other watches of this replica already encoded.
    encoded: Arc<EncodedEvents>,
    /// The served `apiVersion` (events are shared per group-version).
    api_version: String,
    /// How objects are converted for a version that is not the storage version.
    conversion: Option<ReadConversion>,
}

fn decode(object: &StoredObject) -> Result<StoredJson, ApiError> {
    StoredJson::from_stored(object.value.clone())
        .map_err(|e| ApiError::Corrupt(CorruptObjects::one(&object.key, e)))
}

impl Filter {
    /// Selects the object `name` (if not empty) among those `selectors` select; change
    /// events are shared through `encoded` with the other watches of `api_version`, whose
    /// objects `conversion` converts (`None`: the storage version, spliced as stored).
    pub(crate) fn new(
        name: &str,
        selectors: Selectors,
        encoded: Arc<EncodedEvents>,
        api_version: String,
        conversion: Option<ReadConversion>,
    ) -> Self {
        Self {
            name: (!name.is_empty()).then(|| name.to_owned()),
            selectors,
            encoded,
            api_version,
            conversion,
        }
    }

    /// The event `kind` of `object`'s version, with `revision` as its resourceVersion.
    fn encode(
        &self,
        kind: EventType,
        object: &StoredObject,
        revision: u64,
    ) -> Result<Bytes, ApiError> {
        let stored = decode(object)?;
        let Some(conversion) = &self.conversion else {
            return Ok(object_event(kind, &stored, revision));
        };
        // The previous version sent at a later revision (a DELETED for an object that stops
        // matching) is not what the cache holds for that revision: convert it apart.
        let converted = if object.mod_revision == revision {
            conversion.object(&object.key, &stored, revision)?
        } else {
            conversion.convert(&object.key, &stored, revision)?
        };
        Ok(event(kind, &converted))
    }

    /// The event `kind` of `object`'s stored version at `revision`, encoded once for every
    /// watch that sends it.
    fn shared_event(
        &self,
        kind: EventType,
        object: &StoredObject,
        revision: u64,
    ) -> Result<Bytes, ApiError> {
        self.encoded
            .get_or_encode(kind, &self.api_version, &object.key, revision, || {
                self.encode(kind, object, revision)
            })
    }

    /// Whether `key` can be of a selected object. Names cannot contain `/`, so the key's last
    /// segment is the name.
    fn key_selected(&self, key: &str) -> bool {
        self.name
            .as_deref()
            .is_none_or(|name| key.rsplit('/').next() == Some(name))
    }

    /// Whether the decoded `stored` version is selected (parses it only with selectors).
    fn selects(&self, stored: &StoredJson, key: &str) -> Result<bool, ApiError> {
        if self.selectors.is_empty() {
            return Ok(true);
        }
        let obj = stored
            .to_value()
            .map_err(|e| ApiError::Corrupt(CorruptObjects::one(key, e)))?;
        Ok(self.selectors.matches(&obj))
    }

    /// Whether this watch's objects are converted by calling out, so its events come from
    /// [`Self::converted_initial`] and [`Self::converted_event`].
    pub(crate) fn calls_out(&self) -> bool {
        self.conversion
            .as_ref()
            .is_some_and(ReadConversion::calls_out)
    }

    /// Whether the existing `object` is selected (its synthetic ADDED event is sent).
    fn selects_initial(&self, object: &StoredObject) -> Result<bool, ApiError> {
        Ok(self.key_selected(&object.key) && self.selects(&decode(object)?, &object.key)?)
    }

    /// The synthetic ADDED event of an existing object, if selected.
    pub(crate) fn initial(&self, object: &StoredObject) -> Result<Option<Bytes>, ApiError> {
        if !self.selects_initial(object)? {
            return Ok(None);
        }
        self.encode(EventType::Added, object, object.mod_revision)
            .map(Some)
    }

    /// The event `change` is to this watch, if any.
    pub(crate) fn event(&self, change: &Change) -> Result<Option<Bytes>, ApiError> {
        let revision = change.object.mod_revision;
        (self.decide(change)?)
            .map(|(kind, version)| self.shared_event(kind, version, revision))
            .transpose()
    }

    /// As [`Self::initial`], converting by calling out.
    pub(crate) async fn converted_initial(
        self,
        object: StoredObject,
    ) -> Result<Option<Bytes>, ApiError> {
        if !self.selects_initial(&object)? {
            return Ok(None);
        }
        let revision = object.mod_revision;
        (self
            .encode_converted(EventType::Added, &object, revision)
            .await)
            .map(Some)
    }

    /// As [`Self::event`], converting by calling out. The event is this watch's own; the
    /// converted object is kept for the other watches of the version.
    pub(crate) async fn converted_event(self, change: Change) -> Result<Option<Bytes>, ApiError> {
        let Some((kind, version)) = self.decide(&change)? else {
            return Ok(None);
        };
        let revision = change.object.mod_revision;
        (self.encode_converted(kind, version, revision).await).map(Some)
    }

    /// The event `kind` of `object`'s version at `revision`, converted by calling out.
    async fn encode_converted(
        &self,
        kind: EventType,
        object: &StoredObject,
        revision: u64,
    ) -> Result<Bytes, ApiError> {
        let stored = decode(object)?;
        let Some(conversion) = &self.conversion else {
            return Ok(object_event(kind, &stored, revision));
        };
        // A previous version sent at a later revision is not kept: it is not that
        // revision's object.
        let keep = object.mod_revision == revision;
        let converted = conversion
            .converted(&object.key, &stored, revision, keep)
            .await?;
        Ok(event(kind, &converted))
    }

    /// What `change` is to this watch: the event and the version it carries, if any.
    fn decide<'c>(
        &self,
        change: &'c Change,
    ) -> Result<Option<(EventType, &'c StoredObject)>, ApiError> {
        let object = &change.object;
        if !self.key_selected(&object.key) {
            return Ok(None);
        }
        if self.selectors.is_empty() {
            let kind = match (change.kind, &change.previous) {
                (ChangeKind::Put, None) => EventType::Added,
                (ChangeKind::Put, Some(_)) => EventType::Modified,
                (ChangeKind::Delete, _) => EventType::Deleted,
            };
            return Ok(Some((kind, object)));
        }
        // A deleted object matches nothing now; its last state is the "old" version.
        let (now, before) = match change.kind {
            ChangeKind::Put => (
                self.selects(&decode(object)?, &object.key)?,
                change.previous.as_ref(),
            ),
            ChangeKind::Delete => (false, Some(change.previous.as_ref().unwrap_or(object))),
        };
        let before = match before {
            Some(prev) => self.selects(&decode(prev)?, &prev.key)?.then_some(prev),
            None => None,
        };
        Ok(match (now, before) {
            (true, None) => Some((EventType::Added, object)),
            (true, Some(_)) => Some((EventType::Modified, object)),
            (false, Some(prev)) => Some((EventType::Deleted, prev)),
            (false, None) => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;
    use serde_json::json;

    use super::*;
    use crate::request::QueryParams;

    fn version(name: &str, label: &str, revision: u64) -> StoredObject {
        let obj = json!({"kind":"ConfigMap","metadata":{"name":name,"labels":{"l":label}}});
        StoredObject {
            key: format!("/registry/core/configmaps/default/{name}"),
            value: StoredJson::to_stored(&obj).expect("encodes"),
            mod_revision: revision,
            create_revision: 1,
        }
    }

    fn put(name: &str, old: Option<&str>, new: &str, revision: u64) -> Change {
        Change {
            kind: ChangeKind::Put,
            object: version(name, new, revision),
            previous: old.map(|l| version(name, l, revision - 1)),
        }
    }

    fn delete(name: &str, last: &str, revision: u64) -> Change {
        let prev = version(name, last, revision - 1);
        Change {
            kind: ChangeKind::Delete,
            object: StoredObject {
                mod_revision: revision,
                ..prev.clone()
            },
            previous: Some(prev),
        }
    }

    fn filter(name: &str, labels: &str) -> Filter {
        let query = format!("labelSelector={labels}");
        let selectors = Selectors::from_query(&QueryParams::parse(Some(&query))).expect("parses");
        Filter::new(name, selectors, Arc::default(), "v1".into(), None)
    }

    fn seen(f: &Filter, change: &Change) -> Option<(String, Value, Value)> {
        f.event(change).expect("decodes").map(|b| {
            let e: Value = serde_json::from_slice(&b).expect("json");
            let o = &e["object"]["metadata"];
            (
                e["type"].as_str().unwrap_or_default().to_owned(),
                o["labels"]["l"].clone(),
                o["resourceVersion"].clone(),
            )
        })
    }

    // R-RES-227, R-RES-228, R-RES-230
    #[test]
    fn without_selectors_the_store_decides() {
        let all = filter("", "");
        assert_eq!(
            seen(&all, &put("a", None, "x", 2)),
            Some(("ADDED".into(), json!("x"), json!("2")))
        );
        assert_eq!(
            seen(&all, &put("a", Some("x"), "y", 3)),
            Some(("MODIFIED".into(), json!("y"), json!("3")))
        );
        assert_eq!(
            seen(&all, &delete("a", "y", 4)),
            Some(("DELETED".into(), json!("y"), json!("4")))
        );
    }

    // R-RES-110, R-RES-227, R-RES-230: selectors turn updates into ADDED and DELETED.
    #[test]
    fn selectors_evaluate_old_and_new() {
        let f = filter("", "l%3Dx");
        assert_eq!(
            seen(&f, &put("a", Some("y"), "x", 3)),
            Some(("ADDED".into(), json!("x"), json!("3")))
        );
        assert_eq!(
            seen(&f, &put("a", Some("x"), "x", 4)),
            Some(("MODIFIED".into(), json!("x"), json!("4")))
        );
        // The previous state, at the change's resourceVersion.
        assert_eq!(
            seen(&f, &put("a", Some("x"), "y", 5)),
            Some(("DELETED".into(), json!("x"), json!("5")))
        );
        assert_eq!(seen(&f, &put("a", Some("y"), "z", 6)), None);
        assert_eq!(seen(&f, &put("a", None, "y", 6)), None);
        assert_eq!(
            seen(&f, &delete("a", "x", 7)),
            Some(("DELETED".into(), json!("x"), json!("7")))
        );
        assert_eq!(seen(&f, &delete("a", "y", 7)), None);
    }

    // R-RES-086
    #[test]
    fn a_name_selects_one_key() {
        let f = filter("a", "");
        assert!(seen(&f, &put("a", None, "x", 2)).is_some());
        assert_eq!(seen(&f, &put("ab", None, "x", 2)), None);
        assert_eq!(seen(&f, &put("b", None, "x", 2)), None);
        assert!(f.initial(&version("a", "x", 2)).expect("ok").is_some());
        assert!(f.initial(&version("ba", "x", 2)).expect("ok").is_none());
    }
}
