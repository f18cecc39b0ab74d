//! The `Established` condition (apiextensions-apiserver's establishing controller): a CRD
//! whose names are accepted and that is not established yet becomes established, `True` with
//! the reason `InitialNamesAccepted`. Once true it stays, whatever its names do later.

use apiary_api::registry::builtin::custom_resource_definition_lifecycle as lifecycle;
use lifecycle::Condition;
use serde_json::Value;

/// The condition of an established CRD.
pub const ESTABLISHED: Condition<'static> = Condition {
    kind: lifecycle::ESTABLISHED,
    status: "True",
    reason: "InitialNamesAccepted",
    message: "the initial names have been accepted",
};

/// `crd` established at `now`, or `None` when its names are not accepted or it already is.
pub fn establish(crd: &Value, now: &str) -> Option<Value> {
    if !lifecycle::is_true(crd, lifecycle::NAMES_ACCEPTED)
        || lifecycle::is_true(crd, lifecycle::ESTABLISHED)
    {
        return None;
    }
    let mut established = crd.clone();
    lifecycle::set(&mut established, &ESTABLISHED, now);
    Some(established)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    // A CRD is established once its names are accepted, and only then; once.
    #[test]
    fn established_once_names_are_accepted() {
        let mut crd = json!({"metadata": {"name": "a.b"}, "status": {"conditions": [
            {"type": "NamesAccepted", "status": "False", "reason": "PluralConflict",
                "message": "\"a\" is already in use", "lastTransitionTime": "t0"},
            {"type": "Established", "status": "False", "reason": "NotAccepted",
                "message": "not all names are accepted", "lastTransitionTime": "t0"},
        ]}});
        assert_eq!(establish(&crd, "t1"), None);
        crd["status"]["conditions"][0]["status"] = json!("True");
        let established = establish(&crd, "t1").expect("established");
        assert_eq!(
            lifecycle::find(&established, "Established"),
            Some(&json!({"type": "Established", "status": "True",
                "reason": "InitialNamesAccepted",
                "message": "the initial names have been accepted", "lastTransitionTime": "t1"}))
        );
        assert_eq!(establish(&established, "t2"), None);
    }
}
