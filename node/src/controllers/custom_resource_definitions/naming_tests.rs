//! Tests of the naming step: names accepted, conflicts within a group, names kept.

use serde_json::Value;
use serde_json::json;

use super::*;

/// A CRD of `group` asking for `names`, with `accepted` names already accepted.
fn crd(group: &str, names: Value, accepted: Value) -> Value {
    json!({
        "metadata": {"name": format!("{}.{group}", names["plural"].as_str().unwrap())},
        "spec": {"group": group, "names": names},
        "status": {"acceptedNames": accepted, "storedVersions": ["v1"]},
    })
}

fn fresh_crd(group: &str, names: Value) -> Value {
    crd(group, names, json!({"plural": "", "kind": ""}))
}

fn condition<'a>(crd: &'a Value, kind: &str) -> &'a Value {
    lifecycle::find(crd, kind).expect("condition")
}

// A new CRD's names are accepted (empty ones left out), NamesAccepted is True and
// Established False "Installing" until the establishing step; a second pass changes nothing.
#[test]
fn a_new_crd_gets_its_names() {
    let widgets = fresh_crd(
        "example.com",
        json!({"plural": "widgets", "singular": "widget", "kind": "Widget",
            "listKind": "WidgetList", "shortNames": ["wd"], "categories": ["all"]}),
    );
    let named = name(&widgets, std::slice::from_ref(&widgets), "t1").expect("named");
    assert_eq!(
        named["status"]["acceptedNames"],
        json!({"plural": "widgets", "singular": "widget", "shortNames": ["wd"],
            "kind": "Widget", "listKind": "WidgetList", "categories": ["all"]})
    );
    assert_eq!(
        condition(&named, "NamesAccepted"),
        &json!({"type": "NamesAccepted", "status": "True", "lastTransitionTime": "t1",
            "reason": "NoConflicts", "message": "no conflicts found"})
    );
    assert_eq!(
        condition(&named, "Established"),
        &json!({"type": "Established", "status": "False", "lastTransitionTime": "t1",
            "reason": "Installing", "message": "the initial names have been accepted"})
    );
    assert_eq!(named["status"]["storedVersions"], json!(["v1"]));
    assert_eq!(name(&named, std::slice::from_ref(&named), "t2"), None);
}

// Names another CRD of the group accepted conflict, each with Kubernetes' reason and
// message (the last conflict found is reported); the free names are still accepted; a CRD
// of another group is no conflict.
#[test]
fn names_taken_in_the_group_conflict() {
    let widgets = crd(
        "example.com",
        json!({"plural": "widgets", "singular": "widget", "kind": "Widget",
            "listKind": "WidgetList", "shortNames": ["wd"]}),
        json!({"plural": "widgets", "singular": "widget", "kind": "Widget",
            "listKind": "WidgetList", "shortNames": ["wd"]}),
    );
    let elsewhere = crd(
        "other.com",
        json!({"plural": "gadgets", "kind": "Gadget"}),
        json!({"plural": "gadgets", "kind": "Gadget", "listKind": "GadgetList"}),
    );
    let plural = fresh_crd(
        "example.com",
        json!({"plural": "widget", "singular": "gizmo", "kind": "Gizmo", "listKind": "GizmoList"}),
    );
    let all = [widgets.clone(), elsewhere.clone(), plural.clone()];
    let named = name(&plural, &all, "t").expect("named");
    let accepted = condition(&named, "NamesAccepted");
    assert_eq!(accepted["status"], "False");
    assert_eq!(accepted["reason"], "PluralConflict");
    assert_eq!(accepted["message"], "\"widget\" is already in use");
    assert_eq!(
        named["status"]["acceptedNames"],
        json!({"plural": "", "singular": "gizmo", "kind": "Gizmo", "listKind": "GizmoList"})
    );
    assert_eq!(condition(&named, "Established")["reason"], "NotAccepted");
    assert_eq!(
        condition(&named, "Established")["message"],
        "not all names are accepted"
    );

    let cases = [
        (
            json!({"plural": "gizmos", "kind": "Gizmo", "shortNames": ["wd", "widgets"]}),
            "ShortNamesConflict",
            "[\"wd\" is already in use, \"widgets\" is already in use]",
        ),
        (
            json!({"plural": "gizmos", "kind": "Gizmo", "shortNames": ["gz", "wd"]}),
            "ShortNamesConflict",
            "\"wd\" is already in use",
        ),
        (
            json!({"plural": "gizmos", "kind": "Widget", "listKind": "GizmoList"}),
            "KindConflict",
            "\"Widget\" is already in use",
        ),
        (
            json!({"plural": "gizmos", "kind": "Gizmo", "listKind": "WidgetList"}),
            "ListKindConflict",
            "\"WidgetList\" is already in use",
        ),
        (
            json!({"plural": "gizmos", "singular": "wd", "kind": "Gizmo", "shortNames": ["widget"]}),
            "ShortNamesConflict",
            "\"widget\" is already in use",
        ),
    ];
    for (names, reason, message) in cases {
        let asking = fresh_crd("example.com", names.clone());
        let all = [widgets.clone(), asking.clone()];
        let named = name(&asking, &all, "t").expect("named");
        let accepted = condition(&named, "NamesAccepted");
        assert_eq!(accepted["reason"], reason, "{names}");
        assert_eq!(accepted["message"], message, "{names}");
    }

    let gadgets = fresh_crd(
        "example.com",
        json!({"plural": "gadgets", "kind": "Gadget"}),
    );
    let named = name(&gadgets, &[elsewhere, gadgets.clone()], "t").expect("named");
    assert_eq!(condition(&named, "NamesAccepted")["status"], "True");
}

// Names a CRD already accepted stay accepted when another CRD wants them; a changed name
// that conflicts keeps the accepted one; Established, once True, stays.
#[test]
fn accepted_names_stay() {
    let mut widgets = crd(
        "example.com",
        json!({"plural": "widgets", "kind": "Widget", "listKind": "WidgetList", "shortNames": ["gz"]}),
        json!({"plural": "widgets", "kind": "Widget", "listKind": "WidgetList"}),
    );
    widgets["status"]["conditions"] = json!([
        {"type": "NamesAccepted", "status": "True", "lastTransitionTime": "t0",
            "reason": "NoConflicts", "message": "no conflicts found"},
        {"type": "Established", "status": "True", "lastTransitionTime": "t0",
            "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"},
    ]);
    let gizmos = crd(
        "example.com",
        json!({"plural": "gizmos", "kind": "Gizmo", "listKind": "GizmoList", "shortNames": ["gz"]}),
        json!({"plural": "gizmos", "kind": "Gizmo", "listKind": "GizmoList", "shortNames": ["gz"]}),
    );
    let all = [widgets.clone(), gizmos.clone()];
    assert_eq!(name(&gizmos, &all, "t1"), None, "its names are its own");
    let named = name(&widgets, &all, "t1").expect("conflict reported");
    assert_eq!(
        condition(&named, "NamesAccepted")["reason"],
        "ShortNamesConflict"
    );
    assert_eq!(
        named["status"]["acceptedNames"],
        json!({"plural": "widgets", "kind": "Widget", "listKind": "WidgetList"})
    );
    assert_eq!(
        condition(&named, "Established"),
        condition(&widgets, "Established")
    );
}
