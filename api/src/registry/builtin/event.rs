//! Event (`v1`): Kubernetes' legacy event rules. An `involvedObject` in the event's own
//! namespace; an event with `eventTime` (a "new" event) also names its reporter, action and
//! reason, within upstream's length limits.

use serde_json::Value;

use crate::flavor::Flavor;
use crate::registry::Strategy;
use crate::request::FieldLabels;
use crate::request::METADATA_NAME;
use crate::request::METADATA_NAMESPACE;
use crate::request::SelectableField;
use crate::validation::FieldError;
use crate::validation::validate_qualified_name;

/// The longest `reportingInstance`, `action` and `reason`, in characters.
const SHORT_FIELD_LIMIT: usize = 128;
/// The longest `message` of a new event, in characters.
const NOTE_LIMIT: usize = 1024;
const NAMESPACE_MISMATCH: &str = "does not match event.namespace";

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
#[derive(Debug)]
pub struct EventStrategy {
    flavor: Flavor,
}

impl EventStrategy {
    /// The Event strategy of `flavor` (whose system namespace may hold cluster events).
    pub fn new(flavor: Flavor) -> Self {
        Self { flavor }
    }
}

fn text<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj.get(field).and_then(Value::as_str).unwrap_or_default()
}

/// `field` must be set and at most `limit` characters (upstream reports the length as an
/// invalid empty value).
fn required_within(obj: &Value, field: &str, limit: usize, errs: &mut Vec<FieldError>) {
    let value = text(obj, field);
    if value.is_empty() {
        errs.push(FieldError::required(field, ""));
    }
    if value.len() > limit {
        errs.push(FieldError::invalid(
            field,
            "",
            format!("can have at most {limit} characters"),
        ));
    }
}

impl Strategy for EventStrategy {
    fn tracks_generation(&self) -> bool {
        false
    }

    fn field_labels(&self) -> FieldLabels {
        FieldLabels::Only(SELECTABLE)
    }

    /// Kubernetes' `legacyValidateEvent`, which the v1 API applies on create and update.
    fn validate(&self, obj: &Value) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let ns = obj
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let involved = obj
            .pointer("/involvedObject/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let mismatch =
            || FieldError::invalid("involvedObject.namespace", involved, NAMESPACE_MISMATCH);
        if text(obj, "eventTime").is_empty() {
            // An old-style event: a cluster-scoped involved object may be reported in
            // `default`, for old clients.
            let cluster_ok = involved.is_empty() && (ns.is_empty() || ns == "default");
            if !cluster_ok && involved != ns {
                errs.push(mismatch());
            }
            return errs;
        }
        if involved.is_empty() && ns != "default" && ns != self.flavor.system_namespace() {
            errs.push(mismatch());
        }
        let component = text(obj, "reportingComponent");
        if component.is_empty() {
            errs.push(FieldError::required("reportingComponent", ""));
        }
        for msg in validate_qualified_name(component) {
            errs.push(FieldError::invalid("reportingComponent", component, msg));
        }
        required_within(obj, "reportingInstance", SHORT_FIELD_LIMIT, &mut errs);
        required_within(obj, "action", SHORT_FIELD_LIMIT, &mut errs);
        required_within(obj, "reason", SHORT_FIELD_LIMIT, &mut errs);
        if text(obj, "message").len() > NOTE_LIMIT {
            errs.push(FieldError::invalid(
                "message",
                "",
                format!("can have at most {NOTE_LIMIT} characters"),
            ));
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rendered(obj: Value) -> Vec<String> {
        EventStrategy::new(Flavor::Kubernetes)
            .validate(&obj)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn involved_object_namespace_must_match() {
        let ok = json!({"metadata":{"namespace":"a"},"involvedObject":{"namespace":"a"}});
        assert!(rendered(ok).is_empty());
        let cluster = json!({"metadata":{"namespace":"default"},"involvedObject":{"kind":"Node"}});
        assert!(rendered(cluster).is_empty());
        let elsewhere = json!({"metadata":{"namespace":"a"},"involvedObject":{"kind":"Node"}});
        assert_eq!(
            rendered(elsewhere),
            vec![r#"involvedObject.namespace: Invalid value: "": does not match event.namespace"#]
        );
        let bad = json!({"metadata":{"namespace":"a"},"involvedObject":{"namespace":"b"}});
        assert_eq!(
            rendered(bad),
            vec![r#"involvedObject.namespace: Invalid value: "b": does not match event.namespace"#]
        );
    }

    // R-RES-030: a new-style event without reporter, action or reason is refused.
    #[test]
    fn new_events_name_reporter_action_and_reason() {
        let base = json!({"metadata":{"namespace":"a"},"involvedObject":{"namespace":"a"},"eventTime":"2026-01-01T00:00:00.000000Z"});
        assert_eq!(
            rendered(base.clone()),
            vec![
                "reportingComponent: Required value".to_owned(),
                format!(r#"reportingComponent: Invalid value: "": name part must be non-empty"#),
                r#"reportingComponent: Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"#.to_owned(),
                "reportingInstance: Required value".to_owned(),
                "action: Required value".to_owned(),
                "reason: Required value".to_owned(),
            ]
        );
        let mut full = base;
        full["reportingComponent"] = json!("example.com/ctl");
        full["reportingInstance"] = json!("i");
        full["action"] = json!("Act");
        full["reason"] = json!("r".repeat(129));
        full["message"] = json!("m".repeat(1025));
        assert_eq!(
            rendered(full),
            vec![
                r#"reason: Invalid value: "": can have at most 128 characters"#,
                r#"message: Invalid value: "": can have at most 1024 characters"#,
            ]
        );
        let system = json!({"metadata":{"namespace":"kube-system"},"eventTime":"t","reportingComponent":"c","reportingInstance":"i","action":"a","reason":"r"});
        assert!(rendered(system).is_empty());
    }
}
