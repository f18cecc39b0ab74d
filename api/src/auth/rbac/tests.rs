//! Table-driven tests of RBAC evaluation over an index fed as a reflector feeds it, and of the
//! escalation rule coverage.

use std::sync::Arc;

use http::Method;
use serde_json::Value;
use serde_json::json;

use super::*;
use crate::reflector::Cache;
use crate::reflector::CacheEvent;
use crate::request::QueryParams;
use crate::request::RequestInfo;
use crate::request::Verb;

const GROUP: &str = "rbac.authorization.k8s.io";

fn key(kind: &str, namespace: &str, name: &str) -> String {
    let types = index::rbac_types(Flavor::Kubernetes);
    let rt = types.iter().find(|t| t.kind == kind).expect("an RBAC kind");
    rt.object_key(namespace, name)
}

fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Value {
    json!({"apiGroups": groups, "resources": resources, "verbs": verbs})
}

fn cluster_role(name: &str, rules: Vec<Value>) -> (String, Arc<Value>) {
    let obj = json!({"kind": "ClusterRole", "metadata": {"name": name}, "rules": rules});
    (key("ClusterRole", "", name), Arc::new(obj))
}

fn role(ns: &str, name: &str, rules: Vec<Value>) -> (String, Arc<Value>) {
    let obj = json!({"kind": "Role", "metadata": {"name": name, "namespace": ns}, "rules": rules});
    (key("Role", ns, name), Arc::new(obj))
}

fn subject(kind: &str, name: &str) -> Value {
    match kind {
        "ServiceAccount" => json!({"kind": kind, "name": name}),
        _ => json!({"kind": kind, "name": name, "apiGroup": GROUP}),
    }
}

fn binding(
    ns: &str,
    name: &str,
    role_kind: &str,
    role: &str,
    subjects: Vec<Value>,
) -> (String, Arc<Value>) {
    let (kind, meta) = if ns.is_empty() {
        ("ClusterRoleBinding", json!({"name": name}))
    } else {
        ("RoleBinding", json!({"name": name, "namespace": ns}))
    };
    let obj = json!({
        "kind": kind,
        "metadata": meta,
        "roleRef": {"apiGroup": GROUP, "kind": role_kind, "name": role},
        "subjects": subjects,
    });
    (key(kind, ns, name), Arc::new(obj))
}

/// The objects every case below is decided against.
fn world() -> Vec<(String, Arc<Value>)> {
    vec![
        cluster_role(
            "pod-reader",
            vec![rule(&[""], &["pods"], &["get", "list", "watch"])],
        ),
        cluster_role(
            "everything",
            vec![
                rule(&["*"], &["*"], &["*"]),
                json!({"nonResourceURLs": ["*"], "verbs": ["*"]}),
            ],
        ),
        cluster_role(
            "subresources",
            vec![rule(
                &["", "apps"],
                &["pods/log", "*/scale", "deployments/*"],
                &["get"],
            )],
        ),
        cluster_role(
            "named",
            vec![json!({
                "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["cm1"],
                "verbs": ["get", "list", "watch", "update", "create", "deletecollection", "delete"],
            })],
        ),
        cluster_role(
            "urls",
            vec![json!({"nonResourceURLs": ["/healthz", "/logs/*"], "verbs": ["get"]})],
        ),
        cluster_role("secret-reader", vec![rule(&[""], &["secrets"], &["get"])]),
        cluster_role(
            "anonymous-info",
            vec![json!({"nonResourceURLs": ["/info"], "verbs": ["get"]})],
        ),
        cluster_role(
            "impersonator",
            vec![
                json!({"apiGroups": [""], "resources": ["users"], "resourceNames": ["jane"], "verbs": ["impersonate"]}),
                rule(&[GROUP], &["roles", "clusterroles"], &["bind", "escalate"]),
                rule(
                    &["apps"],
                    &["deployments"],
                    &["unsafe-delete-ignore-read-errors"],
                ),
            ],
        ),
        role(
            "a",
            "cm-editor",
            vec![rule(
                &[""],
                &["configmaps"],
                &["create", "update", "delete"],
            )],
        ),
        binding(
            "",
            "alice-reads-pods",
            "ClusterRole",
            "pod-reader",
            vec![subject("User", "alice")],
        ),
        binding(
            "",
            "devs-subresources",
            "ClusterRole",
            "subresources",
            vec![subject("Group", "devs")],
        ),
        binding(
            "a",
            "bob-edits",
            "Role",
            "cm-editor",
            vec![subject("User", "bob")],
        ),
        binding(
            "a",
            "bob-named",
            "ClusterRole",
            "named",
            vec![subject("User", "bob")],
        ),
        binding(
            "b",
            "robot-reads",
            "ClusterRole",
            "pod-reader",
            vec![subject("ServiceAccount", "robot")],
        ),
        binding(
            "",
            "ci-urls",
            "ClusterRole",
            "urls",
            vec![json!({"kind": "ServiceAccount", "name": "ci", "namespace": "c"})],
        ),
        binding(
            "",
            "star",
            "ClusterRole",
            "secret-reader",
            vec![subject("User", "*")],
        ),
        binding(
            "",
            "unauthenticated-info",
            "ClusterRole",
            "anonymous-info",
            vec![subject("Group", "system:unauthenticated")],
        ),
        binding(
            "",
            "admins",
            "ClusterRole",
            "everything",
            vec![subject("Group", "admins")],
        ),
        binding(
            "",
            "ops-impersonate",
            "ClusterRole",
            "impersonator",
            vec![subject("User", "ops")],
        ),
        binding(
            "a",
            "carol-ghost",
            "ClusterRole",
            "ghost",
            vec![subject("User", "carol")],
        ),
        binding(
            "a",
            "dave-nope",
            "Role",
            "nope",
            vec![subject("User", "dave")],
        ),
        binding("", "bad-kind", "Policy", "x", vec![subject("User", "erin")]),
    ]
}

fn fed(objects: Vec<(String, Arc<Value>)>) -> Index {
    let index = Index::new(Flavor::Kubernetes);
    index.replace(&index.group_prefix(), objects);
    index
}

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.to_owned(),
        groups: groups.iter().map(|g| (*g).to_owned()).collect(),
        ..UserInfo::default()
    }
}

/// A user by the short names the table uses.
fn who(name: &str) -> UserInfo {
    match name {
        "dev" => user("dev", &["devs", "system:authenticated"]),
        "robot" => user(
            "system:serviceaccount:b:robot",
            &[
                "system:serviceaccounts",
                "system:serviceaccounts:b",
                "system:authenticated",
            ],
        ),
        "ci" => user("system:serviceaccount:c:ci", &["system:serviceaccounts"]),
        "anonymous" => user("system:anonymous", &["system:unauthenticated"]),
        "root" => user("root", &["admins"]),
        other => user(other, &["system:authenticated"]),
    }
}

fn request(method: &str, path_and_query: &str) -> RequestInfo {
    let (path, query) = match path_and_query.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (path_and_query, None),
    };
    let method = Method::from_bytes(method.as_bytes()).expect("method");
    RequestInfo::parse(&method, path, &QueryParams::parse(query))
}

/// A request with a verb no HTTP method gives (`impersonate`, `bind`, ...).
fn special(verb: &str, group: &str, resource: &str, namespace: &str, name: &str) -> RequestInfo {
    let mut info = RequestInfo::non_resource("", Verb::Other(verb.to_owned()));
    info.is_resource_request = true;
    info.api_group = group.to_owned();
    info.resource = resource.to_owned();
    info.namespace = namespace.to_owned();
    info.name = name.to_owned();
    info
}

fn decided(index: &Index, who_: &str, info: &RequestInfo) -> Decision {
    let u = who(who_);
    decide(
        index,
        GROUP,
        &Attributes {
            user: &u,
            request: info,
        },
    )
}

// R-ACC-177, R-ACC-178, R-ACC-107, R-ACC-108, R-ACC-109, R-ACC-110, R-ACC-148, R-ACC-098,
// R-ACC-099, R-ACC-100, R-ACC-101, R-ACC-102, R-ACC-103, R-ACC-104, R-ACC-105, R-ACC-106
#[test]
fn requests_are_allowed_exactly_as_the_rules_say() {
    let index = fed(world());
    let table: &[(&str, &str, &str, bool)] = &[
        // A ClusterRoleBinding grants everywhere.
        ("alice", "GET", "/api/v1/namespaces/x/pods/p", true),
        ("alice", "GET", "/api/v1/pods", true),
        ("alice", "GET", "/api/v1/namespaces/x/pods?watch=1", true),
        ("alice", "GET", "/api/v1/watch/namespaces/x/pods", true),
        ("alice", "HEAD", "/api/v1/namespaces/x/pods/p", true),
        ("alice", "DELETE", "/api/v1/namespaces/x/pods/p", false),
        ("alice", "DELETE", "/api/v1/namespaces/x/pods", false),
        ("alice", "POST", "/api/v1/namespaces/x/pods", false),
        ("alice", "PATCH", "/api/v1/namespaces/x/pods/p", false),
        ("alice", "PUT", "/api/v1/namespaces/x/pods/p", false),
        ("alice", "GET", "/api/v1/namespaces/x/pods/p/log", false),
        ("alice", "GET", "/api/v1/namespaces/x/configmaps/c", false),
        ("alice", "GET", "/apis/apps/v1/namespaces/x/pods/p", false),
        ("alice", "GET", "/healthz", false),
        // Groups; subresources exact, `*/sub`, never `resource/*`.
        ("dev", "GET", "/api/v1/namespaces/x/pods/p/log", true),
        ("dev", "GET", "/api/v1/namespaces/x/pods/p", false),
        (
            "dev",
            "GET",
            "/apis/apps/v1/namespaces/x/deployments/d/scale",
            true,
        ),
        (
            "dev",
            "GET",
            "/apis/apps/v1/namespaces/x/statefulsets/s/scale",
            true,
        ),
        (
            "dev",
            "GET",
            "/api/v1/namespaces/x/replicationcontrollers/r/scale",
            true,
        ),
        (
            "dev",
            "PUT",
            "/apis/apps/v1/namespaces/x/deployments/d/scale",
            false,
        ),
        (
            "dev",
            "GET",
            "/apis/apps/v1/namespaces/x/deployments/d/status",
            false,
        ),
        (
            "dev",
            "GET",
            "/apis/apps/v1/namespaces/x/deployments/d",
            false,
        ),
        (
            "dev",
            "GET",
            "/apis/batch/v1/namespaces/x/jobs/j/scale",
            false,
        ),
        // A RoleBinding grants only in its namespace, its Role or a ClusterRole.
        ("bob", "POST", "/api/v1/namespaces/a/configmaps", true),
        ("bob", "PUT", "/api/v1/namespaces/a/configmaps/any", true),
        ("bob", "POST", "/api/v1/namespaces/b/configmaps", false),
        ("bob", "POST", "/api/v1/configmaps", false),
        ("bob", "GET", "/api/v1/namespaces/a/configmaps/any", false),
        // resourceNames: the named object only; never create or deletecollection; list and
        // watch only with the name's field selector.
        ("bob", "GET", "/api/v1/namespaces/a/configmaps/cm1", true),
        ("bob", "GET", "/api/v1/namespaces/b/configmaps/cm1", false),
        ("bob", "GET", "/api/v1/namespaces/a/configmaps/cm2", false),
        ("bob", "DELETE", "/api/v1/namespaces/a/configmaps/cm1", true),
        ("bob", "DELETE", "/api/v1/namespaces/a/configmaps", false),
        ("bob", "GET", "/api/v1/namespaces/a/configmaps", false),
        (
            "bob",
            "GET",
            "/api/v1/namespaces/a/configmaps?fieldSelector=metadata.name%3Dcm1",
            true,
        ),
        (
            "bob",
            "GET",
            "/api/v1/namespaces/a/configmaps?fieldSelector=metadata.name%3D%3Dcm1",
            true,
        ),
        (
            "bob",
            "GET",
            "/api/v1/namespaces/a/configmaps?fieldSelector=metadata.name%3Dcm2",
            false,
        ),
        (
            "bob",
            "GET",
            "/api/v1/namespaces/a/configmaps?watch=true&fieldSelector=metadata.name%3Dcm1",
            true,
        ),
        (
            "bob",
            "GET",
            "/api/v1/namespaces/a/configmaps?watch=true",
            false,
        ),
        (
            "bob",
            "GET",
            "/api/v1/namespaces/a/configmaps?labelSelector=name%3Dcm1",
            false,
        ),
        // Service accounts: a RoleBinding's subject without namespace is in its own.
        ("robot", "GET", "/api/v1/namespaces/b/pods/p", true),
        ("robot", "GET", "/api/v1/namespaces/a/pods/p", false),
        ("robot", "GET", "/api/v1/pods", false),
        ("ci", "GET", "/healthz", true),
        ("ci", "GET", "/healthz/etcd", false),
        ("ci", "GET", "/logs/kube.log", true),
        ("ci", "GET", "/logs", false),
        ("ci", "GET", "/logs/", true),
        ("ci", "POST", "/healthz", false),
        // `*` is a name like any other: it covers neither users nor anonymous.
        ("*", "GET", "/api/v1/namespaces/x/secrets/s", true),
        ("alice", "GET", "/api/v1/namespaces/x/secrets/s", false),
        ("anonymous", "GET", "/api/v1/namespaces/x/secrets/s", false),
        ("anonymous", "GET", "/info", true),
        ("alice", "GET", "/info", false),
        // Wildcards everywhere.
        (
            "root",
            "DELETE",
            "/apis/apps/v1/namespaces/x/deployments",
            true,
        ),
        ("root", "GET", "/anything/at/all", true),
        (
            "root",
            "PATCH",
            "/apis/example.com/v1/widgets/w/status",
            true,
        ),
        // Nobody else.
        ("mallory", "GET", "/api/v1/namespaces/x/pods/p", false),
    ];
    for (who_, method, path, allowed) in table {
        let info = request(method, path);
        let decision = decided(&index, who_, &info);
        assert_eq!(
            decision == Decision::Allow,
            *allowed,
            "{who_} {method} {path} ({}): {decision:?}",
            info.verb.as_str()
        );
        assert!(!matches!(decision, Decision::Deny(_)), "RBAC never denies");
    }
}

// R-ACC-107, R-ACC-108, R-ACC-155, R-ACC-156
#[test]
fn special_verbs_reach_rbac_as_verbs() {
    let index = fed(world());
    let table: &[(&str, RequestInfo, bool)] = &[
        ("ops", special("impersonate", "", "users", "", "jane"), true),
        (
            "ops",
            special("impersonate", "", "users", "", "john"),
            false,
        ),
        (
            "ops",
            special("impersonate", "", "groups", "", "jane"),
            false,
        ),
        (
            "ops",
            special("bind", GROUP, "clusterroles", "", "admin"),
            true,
        ),
        ("ops", special("escalate", GROUP, "roles", "a", "r"), true),
        ("ops", special("escalate", "", "roles", "a", "r"), false),
        (
            "ops",
            special(
                "unsafe-delete-ignore-read-errors",
                "apps",
                "deployments",
                "a",
                "d",
            ),
            true,
        ),
        (
            "ops",
            special("delete", "apps", "deployments", "a", "d"),
            false,
        ),
        (
            "alice",
            special("bind", GROUP, "clusterroles", "", "admin"),
            false,
        ),
    ];
    for (who_, info, allowed) in table {
        let decision = decided(&index, who_, info);
        assert_eq!(
            decision == Decision::Allow,
            *allowed,
            "{who_} {info:?}: {decision:?}"
        );
    }
}

// R-ACC-177
#[test]
fn broken_references_grant_nothing_and_say_why() {
    let index = fed(world());
    let info = request("GET", "/api/v1/namespaces/a/pods/p");
    assert_eq!(
        decided(&index, "carol", &info),
        Decision::NoOpinion(format!("RBAC: clusterrole.{GROUP} \"ghost\" not found"))
    );
    assert_eq!(
        decided(&index, "dave", &info),
        Decision::NoOpinion(format!("RBAC: role.{GROUP} \"nope\" not found"))
    );
    assert_eq!(
        decided(&index, "erin", &info),
        Decision::NoOpinion("RBAC: unsupported role reference kind: \"Policy\"".to_owned())
    );
    assert_eq!(
        decided(&index, "mallory", &info),
        Decision::NoOpinion(String::new())
    );
    // Outside the binding's namespace the broken binding is not even met.
    let elsewhere = request("GET", "/api/v1/namespaces/z/pods/p");
    assert_eq!(
        decided(&index, "carol", &elsewhere),
        Decision::NoOpinion(String::new())
    );
}

// R-ACC-177, R-ACC-178: every change a reflector hands over is in force at once: new roles,
// changed rules, removed bindings, a relist that drops what was deleted meanwhile.
#[test]
fn the_index_follows_changes() {
    let index = fed(Vec::new());
    let info = request("GET", "/api/v1/namespaces/a/pods/p");
    assert_ne!(decided(&index, "zed", &info), Decision::Allow);
    let (bkey, b) = binding("a", "zed", "Role", "reader", vec![subject("User", "zed")]);
    index.apply(
        "",
        vec![CacheEvent::Upsert {
            key: bkey.clone(),
            object: b,
        }],
    );
    assert_eq!(
        decided(&index, "zed", &info),
        Decision::NoOpinion(format!("RBAC: role.{GROUP} \"reader\" not found"))
    );
    let (rkey, r) = role("a", "reader", vec![rule(&[""], &["pods"], &["get"])]);
    index.apply(
        "",
        vec![CacheEvent::Upsert {
            key: rkey.clone(),
            object: r,
        }],
    );
    assert_eq!(decided(&index, "zed", &info), Decision::Allow);
    let (_, narrower) = role("a", "reader", vec![rule(&[""], &["pods"], &["list"])]);
    index.apply(
        "",
        vec![CacheEvent::Upsert {
            key: rkey.clone(),
            object: narrower,
        }],
    );
    assert_ne!(decided(&index, "zed", &info), Decision::Allow);
    let (_, r) = role("a", "reader", vec![rule(&[""], &["pods"], &["get"])]);
    index.apply(
        "",
        vec![CacheEvent::Upsert {
            key: rkey.clone(),
            object: r,
        }],
    );
    let (_, other) = binding("a", "zed", "Role", "reader", vec![subject("User", "yan")]);
    index.apply(
        "",
        vec![CacheEvent::Upsert {
            key: bkey.clone(),
            object: other,
        }],
    );
    assert_ne!(decided(&index, "zed", &info), Decision::Allow);
    assert_eq!(decided(&index, "yan", &info), Decision::Allow);
    index.apply("", vec![CacheEvent::Delete { key: bkey }]);
    assert_ne!(decided(&index, "yan", &info), Decision::Allow);
    index.replace(&index.group_prefix(), world());
    assert_eq!(decided(&index, "alice", &info), Decision::Allow);
    index.replace(&index.group_prefix(), Vec::new());
    assert_ne!(decided(&index, "alice", &info), Decision::Allow);
}

// R-ACC-177, R-ACC-178: objects as the store holds them, with their flavor's `apiVersion`,
// grant in either flavor.
#[test]
fn stored_objects_grant_in_every_flavor() {
    for flavor in [Flavor::Kubernetes, Flavor::Platform] {
        let group = format!("rbac.authorization.{}", flavor.group_domain());
        let api_version = format!("{group}/v1");
        let types = index::rbac_types(flavor);
        let key = |kind: &str, ns: &str, name: &str| {
            let rt = types.iter().find(|t| t.kind == kind).expect("an RBAC kind");
            rt.object_key(ns, name)
        };
        let role = json!({
            "apiVersion": api_version, "kind": "ClusterRole",
            "metadata": {"name": "reader"},
            "rules": [rule(&[""], &["pods"], &["get"])],
        });
        let binding = json!({
            "apiVersion": api_version, "kind": "RoleBinding",
            "metadata": {"name": "readers", "namespace": "a"},
            "roleRef": {"apiGroup": group, "kind": "ClusterRole", "name": "reader"},
            "subjects": [{"apiGroup": group, "kind": "User", "name": "zed"}],
        });
        let index = Index::new(flavor);
        index.replace(
            &index.group_prefix(),
            vec![
                (key("ClusterRole", "", "reader"), Arc::new(role)),
                (key("RoleBinding", "a", "readers"), Arc::new(binding)),
            ],
        );
        let u = who("zed");
        let info = request("GET", "/api/v1/namespaces/a/pods/p");
        let attributes = Attributes {
            user: &u,
            request: &info,
        };
        assert_eq!(
            decide(&index, &group, &attributes),
            Decision::Allow,
            "{flavor:?}"
        );
    }
}

// R-ACC-177, R-ACC-178: the rules review lists cluster-wide rules, then the namespace's.
#[test]
fn rules_list_what_is_granted_where() {
    let index = fed(world());
    let (rules, errors) = rules_in(&index, GROUP, &who("bob"), "a");
    assert!(errors.is_empty());
    let resources: Vec<&str> = rules.iter().map(|r| r.resources[0].as_str()).collect();
    assert_eq!(resources, ["configmaps", "configmaps"]);
    assert!(rules_in(&index, GROUP, &who("bob"), "b").0.is_empty());
    assert!(rules_in(&index, GROUP, &who("bob"), "").0.is_empty());
    let (rules, _) = rules_in(&index, GROUP, &who("ci"), "x");
    let (resource, non_resource) = rules[0].review_rules();
    assert!(resource.is_none());
    assert_eq!(
        non_resource.and_then(|n| n.non_resource_urls),
        Some(vec!["/healthz".to_owned(), "/logs/*".to_owned()])
    );
    let (_, errors) = rules_in(&index, GROUP, &who("carol"), "a");
    assert_eq!(errors, [format!("clusterrole.{GROUP} \"ghost\" not found")]);
}

fn rules(values: Vec<Value>) -> Vec<Rule> {
    values
        .iter()
        .map(|v| Rule::from(&serde_json::from_value(v.clone()).expect("a policy rule")))
        .collect()
}

// R-ACC-180, R-ACC-181: a user may grant what they hold, at least as broadly, and no more.
#[test]
fn escalation_needs_every_permission_granted() {
    let u = user("u", &["g1", "system:authenticated"]);
    let owner = rules(vec![
        rule(&[""], &["pods", "configmaps"], &["get", "list"]),
        rule(&["apps"], &["*/scale"], &["*"]),
        json!({"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["s1", "s2"], "verbs": ["get"]}),
        json!({"nonResourceURLs": ["/logs/*"], "verbs": ["get"]}),
    ]);
    let covered = [
        rule(&[""], &["pods"], &["get"]),
        rule(&[""], &["pods", "configmaps"], &["list", "get"]),
        rule(&["apps"], &["deployments/scale"], &["update"]),
        json!({"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["s1"], "verbs": ["get"]}),
        json!({"nonResourceURLs": ["/logs/a", "/logs/*"], "verbs": ["get"]}),
    ];
    for r in covered {
        assert_eq!(
            confirm_no_escalation(&u, &owner, &rules(vec![r.clone()])),
            Ok(()),
            "{r}"
        );
    }
    let not_covered = [
        (
            rule(&[""], &["pods"], &["delete"]),
            r#"{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}"#,
        ),
        (
            rule(&["*"], &["pods"], &["get"]),
            r#"{APIGroups:["*"], Resources:["pods"], Verbs:["get"]}"#,
        ),
        (
            rule(&[""], &["*"], &["get"]),
            r#"{APIGroups:[""], Resources:["*"], Verbs:["get"]}"#,
        ),
        (
            rule(&["apps"], &["deployments"], &["get"]),
            r#"{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}"#,
        ),
        (
            rule(&[""], &["secrets"], &["get"]),
            r#"{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}"#,
        ),
        (
            json!({"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["s3"], "verbs": ["get"]}),
            r#"{APIGroups:[""], Resources:["secrets"], ResourceNames:["s3"], Verbs:["get"]}"#,
        ),
        (
            json!({"nonResourceURLs": ["/logs"], "verbs": ["get"]}),
            r#"{NonResourceURLs:["/logs"], Verbs:["get"]}"#,
        ),
        (
            json!({"nonResourceURLs": ["/logs/*"], "verbs": ["post"]}),
            r#"{NonResourceURLs:["/logs/*"], Verbs:["post"]}"#,
        ),
    ];
    for (r, missing) in not_covered {
        let refused = confirm_no_escalation(&u, &owner, &rules(vec![r.clone()]));
        assert_eq!(
            refused,
            Err(format!(
                "user \"u\" (groups=[\"g1\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{missing}"
            )),
            "{r}"
        );
    }
    // Missing permissions are compacted per resource and sorted.
    let refused = confirm_no_escalation(
        &u,
        &[],
        &rules(vec![
            rule(&["", "apps"], &["pods"], &["get", "delete"]),
            json!({"nonResourceURLs": ["/b", "/a"], "verbs": ["get"]}),
        ]),
    );
    let text = refused.expect_err("nothing is held");
    let lines: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(
        lines,
        [
            r#"{APIGroups:[""], Resources:["pods"], Verbs:["get" "delete"]}"#,
            r#"{APIGroups:["apps"], Resources:["pods"], Verbs:["get" "delete"]}"#,
            r#"{NonResourceURLs:["/a"], Verbs:["get"]}"#,
            r#"{NonResourceURLs:["/b"], Verbs:["get"]}"#,
        ]
    );
    let everything = rules(vec![
        rule(&["*"], &["*"], &["*"]),
        json!({"nonResourceURLs": ["*"], "verbs": ["*"]}),
    ]);
    let anything = rules(vec![
        rule(&["x"], &["y/z"], &["w"]),
        json!({"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["s"], "verbs": ["get"]}),
        json!({"nonResourceURLs": ["/any/path"], "verbs": ["get"]}),
    ]);
    assert_eq!(confirm_no_escalation(&u, &everything, &anything), Ok(()));
}
