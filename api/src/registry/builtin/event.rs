//! Event (`v1`): an `involvedObject` in the event's own namespace.

use serde_json::Value;

use crate::registry::Strategy;
use crate::request::FieldLabels;
use crate::request::METADATA_NAME;
use crate::request::METADATA_NAMESPACE;
use crate::request::SelectableField;
use crate::validation::FieldError;

const fn field(label: &'static str, pointers: &'static [&'static str]) -> SelectableField {
    SelectableField { label, pointers }
}

/// The fields Kubernetes' core/v1 Event field label conversion accepts, where its
/// `ToSelectableFields` reads them (`source` falls back to the reporting controller).
const SELECTABLE: &[SelectableField] = &[
    field("involvedObject.kind", &["/involvedObject/kind"]),
    field("involvedObject.namespace", &["/involvedObject/namespace"]),
    field("involvedObject.name", &["/involvedObject/name"]),
    field("involvedObject.uid", &["/involvedObject/uid"]),
    field("involvedObject.apiVersion", &["/involvedObject/apiVersion"]),
    field(
        "involvedObject.resourceVersion",
        &["/involvedObject/resourceVersion"],
    ),
    field("involvedObject.fieldPath", &["/involvedObject/fieldPath"]),
    field("reason", &["/reason"]),
    field("reportingComponent", &["/reportingComponent"]),
    field("source", &["/source/component", "/reportingComponent"]),
    field("type", &["/type"]),
    METADATA_NAMESPACE,
    METADATA_NAME,
];

/// The strategy of `v1` Event.
#[derive(Debug, Default)]
pub struct EventStrategy;

impl Strategy for EventStrategy {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn field_labels(&self) -> FieldLabels {
        FieldLabels::Only(SELECTABLE)
    }

    /// As Kubernetes' `ValidateEventCreate` for the v1 API: an involved object that names a
    /// namespace names the event's own.
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let ns = obj.pointer("/metadata/namespace").and_then(Value::as_str);
        match obj
            .pointer("/involvedObject/namespace")
            .and_then(Value::as_str)
        {
            Some(involved) if !involved.is_empty() && Some(involved) != ns => {
                vec![FieldError::invalid(
                    "involvedObject.namespace",
                    involved,
                    "does not match event.namespace",
                )]
            }
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn involved_object_namespace_must_match() {
        let ok = json!({"metadata":{"namespace":"a"},"involvedObject":{"namespace":"a"}});
        assert!(EventStrategy.validate(&ok).is_empty());
        let cluster = json!({"metadata":{"namespace":"a"},"involvedObject":{"kind":"Node"}});
        assert!(EventStrategy.validate(&cluster).is_empty());
        let bad = json!({"metadata":{"namespace":"a"},"involvedObject":{"namespace":"b"}});
        assert_eq!(
            EventStrategy.validate(&bad)[0].field,
            "involvedObject.namespace"
        );
    }
}
