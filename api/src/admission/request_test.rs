use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::flavor::Flavor;
use crate::registry::DeleteOptions;
use crate::registry::PropagationPolicy;
use crate::registry::builtin::rows;

#[test]
fn a_create_and_a_delete_as_admission_reviews_carry_them() {
    let deployments = rows()
        .iter()
        .map(|row| row.resource_type(Flavor::Kubernetes))
        .find(|r| r.group == "apps" && r.version == "v1" && r.plural == "deployments")
        .expect("deployments");
    let user = UserInfo {
        name: "alice".into(),
        uid: "u-1".into(),
        groups: vec!["dev".into()],
        extra: BTreeMap::from([("scopes".to_owned(), vec!["a".to_owned()])]),
    };
    let mut attributes = Attributes {
        operation: Operation::Create,
        resource: &deployments,
        subresource: "",
        object_kind: None,
        namespace: "ns",
        name: "web",
        user: &user,
        dry_run: true,
        field_manager: Some("kubectl"),
        force: false,
        delete: None,
        shape: crate::patch::Shape::untyped(),
    };
    let object = json!({"kind": "Deployment"});
    let request = admission_request(&attributes, "id-1", Some(&object), None);
    assert_eq!(
        request,
        json!({
            "uid": "id-1",
            "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "requestKind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "requestResource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "name": "web",
            "namespace": "ns",
            "operation": "CREATE",
            "userInfo": {"username": "alice", "uid": "u-1", "groups": ["dev"], "extra": {"scopes": ["a"]}},
            "object": {"kind": "Deployment"},
            "oldObject": null,
            "dryRun": true,
            "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1",
                "dryRun": ["All"], "fieldManager": "kubectl"},
        })
    );

    let delete = DeleteOptions {
        grace_period_seconds: Some(0),
        propagation_policy: Some(PropagationPolicy::Foreground),
        ..DeleteOptions::default()
    };
    attributes.operation = Operation::Delete;
    attributes.dry_run = false;
    attributes.delete = Some(&delete);
    attributes.subresource = "status";
    let request = admission_request(&attributes, "id-2", None, Some(&object));
    assert_eq!(request["operation"], "DELETE");
    assert_eq!(request["subResource"], "status");
    assert_eq!(request["object"], json!(null));
    assert_eq!(request["oldObject"], object);
    assert_eq!(
        request["options"],
        json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1",
            "gracePeriodSeconds": 0, "propagationPolicy": "Foreground"})
    );
}

#[test]
fn a_subresource_with_its_own_kind_is_sent_as_that_kind() {
    let deployments = rows()
        .iter()
        .map(|row| row.resource_type(Flavor::Kubernetes))
        .find(|r| r.group == "apps" && r.version == "v1" && r.plural == "deployments")
        .expect("deployments");
    let user = UserInfo::default();
    let attributes = Attributes {
        operation: Operation::Update,
        resource: &deployments,
        subresource: "scale",
        object_kind: Some(crate::admission::ObjectKind {
            group: "autoscaling",
            version: "v1",
            kind: "Scale",
        }),
        namespace: "ns",
        name: "web",
        user: &user,
        dry_run: false,
        field_manager: None,
        force: false,
        delete: None,
        shape: crate::patch::Shape::untyped(),
    };
    let request = admission_request(&attributes, "id", None, None);
    let scale = json!({"group": "autoscaling", "version": "v1", "kind": "Scale"});
    assert_eq!(request["kind"], scale);
    assert_eq!(request["requestKind"], scale);
    assert_eq!(
        request["resource"],
        json!({"group": "apps", "version": "v1", "resource": "deployments"})
    );
    assert_eq!(request["subResource"], "scale");
    assert_eq!(request["options"]["kind"], "UpdateOptions");
}
