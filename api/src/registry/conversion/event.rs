//! `events.k8s.io/v1` Event ↔ core `v1` Event (stored as core v1), upstream's field map: the
//! events API renames the core fields and keeps the rest.

use serde_json::Value;

use super::Conversion;
use super::ConversionError;
use super::rename_keys;
use crate::flavor::Flavor;

/// (core v1 field, events.k8s.io/v1 field) for every field the two spell differently.
const RENAMES: &[(&str, &str)] = &[
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("reportingComponent", "reportingController"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
];

/// The conversion of `events.k8s.io/v1` Events.
#[derive(Debug, Clone, Copy)]
pub struct EventsV1;

/// The one [`EventsV1`] conversion the table refers to.
pub static EVENTS_V1: EventsV1 = EventsV1;

impl Conversion for EventsV1 {
    fn to_storage(&self, obj: Value, _flavor: Flavor) -> Result<Value, ConversionError> {
        let back: Vec<(&str, &str)> = RENAMES.iter().map(|(core, ev)| (*ev, *core)).collect();
        Ok(rename_keys(obj, &back))
    }

    fn to_served(&self, obj: Value, _flavor: Flavor) -> Result<Value, ConversionError> {
        Ok(rename_keys(obj, RENAMES))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    // R-VER-070: the fields map as upstream's events/v1 conversion, both ways, losslessly.
    #[test]
    fn core_fields_map_to_the_events_api() {
        let core = json!({
            "metadata": {"name": "e", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
            "reason": "Started",
            "message": "started container",
            "source": {"component": "kubelet", "host": "n1"},
            "firstTimestamp": "2026-01-01T00:00:00Z",
            "lastTimestamp": "2026-01-01T00:01:00Z",
            "count": 3,
            "type": "Normal",
            "eventTime": "2026-01-01T00:00:00.000000Z",
            "series": {"count": 2, "lastObservedTime": "2026-01-01T00:01:00.000000Z"},
            "action": "Start",
            "related": {"kind": "Node", "name": "n1"},
            "reportingComponent": "kubelet",
            "reportingInstance": "n1",
        });
        let ev = EVENTS_V1
            .to_served(core.clone(), Flavor::Kubernetes)
            .expect("converts");
        assert_eq!(ev["regarding"], core["involvedObject"]);
        assert_eq!(ev["note"], "started container");
        assert_eq!(ev["deprecatedSource"], core["source"]);
        assert_eq!(ev["deprecatedFirstTimestamp"], "2026-01-01T00:00:00Z");
        assert_eq!(ev["deprecatedLastTimestamp"], "2026-01-01T00:01:00Z");
        assert_eq!(ev["deprecatedCount"], 3);
        assert_eq!(ev["reportingController"], "kubelet");
        assert_eq!(ev["reportingInstance"], "n1");
        for same in [
            "reason",
            "type",
            "eventTime",
            "series",
            "action",
            "related",
            "metadata",
        ] {
            assert_eq!(ev[same], core[same], "{same} is kept");
        }
        for gone in [
            "involvedObject",
            "message",
            "source",
            "count",
            "reportingComponent",
        ] {
            assert!(ev.get(gone).is_none(), "{gone} is renamed");
        }
        let back = EVENTS_V1
            .to_storage(ev, Flavor::Kubernetes)
            .expect("converts");
        assert_eq!(back, core);
    }
}
