use serde_json::Value;
use serde_json::json;

use super::*;
use crate::auth::UserInfo;
use crate::flavor::Flavor;
use crate::registry::ResourceType;
use crate::registry::builtin::rows;

fn resource(group: &str, version: &str, plural: &str) -> ResourceType {
    rows()
        .iter()
        .map(|row| row.resource_type(Flavor::Kubernetes))
        .find(|r| r.group.ends_with(group) && r.version == version && r.plural == plural)
        .expect("a served resource")
}

fn attributes<'a>(
    resource: &'a ResourceType,
    operation: Operation,
    namespace: &'a str,
    subresource: &'a str,
    user: &'a UserInfo,
) -> Attributes<'a> {
    Attributes {
        operation,
        resource,
        subresource,
        object_kind: None,
        namespace,
        name: "web",
        user,
        dry_run: false,
        field_manager: None,
        force: false,
        delete: None,
        shape: crate::patch::Shape::untyped(),
    }
}

fn rule(value: Value) -> Rule {
    Rule::from_value(&value)
}

#[test]
fn resources_subresources_and_wildcards_match_as_kubernetes() {
    let user = UserInfo::default();
    let pods = resource("", "v1", "pods");
    let create = attributes(&pods, Operation::Create, "ns", "", &user);
    let status = attributes(&pods, Operation::Update, "ns", "status", &user);
    let all = |resources: Value| {
        rule(
            json!({"operations":["*"],"apiGroups":["*"],"apiVersions":["*"],"resources":resources}),
        )
    };
    assert!(all(json!(["pods"])).matches(&create));
    assert!(!all(json!(["pods"])).matches(&status));
    assert!(all(json!(["*"])).matches(&create));
    assert!(
        !all(json!(["*"])).matches(&status),
        "`*` covers no subresource"
    );
    assert!(
        all(json!(["pods/*"])).matches(&create),
        "`pods/*` covers pods too"
    );
    assert!(all(json!(["pods/*"])).matches(&status));
    assert!(all(json!(["*/status"])).matches(&status));
    assert!(all(json!(["*/*"])).matches(&status));
    assert!(!all(json!(["deployments"])).matches(&create));
}

#[test]
fn operations_groups_versions_and_names() {
    let user = UserInfo::default();
    let deployments = resource("apps", "v1", "deployments");
    let update = attributes(&deployments, Operation::Update, "ns", "", &user);
    let with = |ops: Value, groups: Value, versions: Value| {
        rule(
            json!({"operations":ops,"apiGroups":groups,"apiVersions":versions,"resources":["deployments"]}),
        )
    };
    assert!(with(json!(["UPDATE"]), json!(["apps"]), json!(["v1"])).matches(&update));
    assert!(!with(json!(["CREATE"]), json!(["apps"]), json!(["v1"])).matches(&update));
    assert!(!with(json!(["*"]), json!([""]), json!(["v1"])).matches(&update));
    assert!(!with(json!(["*"]), json!(["apps"]), json!(["v1beta1"])).matches(&update));
    let named = |names: Value| {
        rule(
            json!({"operations":["*"],"apiGroups":["*"],"apiVersions":["*"],
            "resources":["deployments"],"resourceNames":names}),
        )
    };
    assert!(named(json!(["web"])).matches(&update));
    assert!(!named(json!(["api"])).matches(&update));
}

#[test]
fn scopes_treat_namespaces_as_cluster_scoped() {
    let user = UserInfo::default();
    let pods = resource("", "v1", "pods");
    let namespaces = resource("", "v1", "namespaces");
    let nodes = resource("", "v1", "nodes");
    let scoped = |scope: &str| {
        rule(
            json!({"operations":["*"],"apiGroups":["*"],"apiVersions":["*"],
            "resources":["*"],"scope":scope}),
        )
    };
    let pod = attributes(&pods, Operation::Create, "ns", "", &user);
    let namespace = attributes(&namespaces, Operation::Delete, "web", "", &user);
    let node = attributes(&nodes, Operation::Create, "", "", &user);
    assert!(scoped("Namespaced").matches(&pod));
    assert!(!scoped("Namespaced").matches(&namespace));
    assert!(!scoped("Namespaced").matches(&node));
    assert!(scoped("Cluster").matches(&namespace));
    assert!(scoped("Cluster").matches(&node));
    assert!(!scoped("Cluster").matches(&pod));
    assert!(scoped("*").matches(&pod) && scoped("*").matches(&node));
}

#[test]
fn selectors_read_the_object_the_old_object_and_the_namespace() {
    let user = UserInfo::default();
    let pods = resource("", "v1", "pods");
    let nodes = resource("", "v1", "nodes");
    let namespaces = resource("", "v1", "namespaces");
    let selectors = Selectors::from_value(&json!({
        "namespaceSelector": {"matchLabels": {"env": "prod"}},
        "objectSelector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
    }));
    let labelled = json!({"metadata": {"labels": {"app": "web"}}});
    let bare = json!({"metadata": {}});
    assert!(selectors.matches_object(Some(&labelled), None));
    assert!(
        selectors.matches_object(Some(&bare), Some(&labelled)),
        "the old object counts"
    );
    assert!(!selectors.matches_object(Some(&bare), None));

    let prod = std::sync::Arc::new(json!({"metadata": {"name": "ns", "labels": {"env": "prod"}}}));
    let pod = attributes(&pods, Operation::Create, "ns", "", &user);
    assert!(selectors.matches_namespace(&pod, None, None, |_| Some(prod.clone())));
    let dev = std::sync::Arc::new(json!({"metadata": {"name": "ns", "labels": {"env": "dev"}}}));
    assert!(!selectors.matches_namespace(&pod, None, None, |_| Some(dev.clone())));
    assert!(!selectors.matches_namespace(&pod, None, None, |_| None));
    let node = attributes(&nodes, Operation::Create, "", "", &user);
    assert!(
        selectors.matches_namespace(&node, None, None, |_| None),
        "cluster-scoped: covered"
    );
    let namespace = attributes(&namespaces, Operation::Create, "", "", &user);
    let own = json!({"metadata": {"labels": {"env": "prod"}}});
    assert!(selectors.matches_namespace(&namespace, Some(&own), None, |_| None));

    let everything = Selectors::from_value(&json!({"namespaceSelector": {}}));
    assert!(everything.matches_namespace(&pod, None, None, |_| None));
    assert!(everything.matches_object(None, None));
}
