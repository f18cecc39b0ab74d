//! Tests of the ABAC policy file: what a file may hold (and the line of what it may not), the
//! legacy conversion, the decisions of Kubernetes' documented and tested policies, and the
//! rules SelfSubjectRulesReview lists.

use super::*;
use crate::auth::UNAUTHENTICATED_GROUP;
use crate::request::Verb;

const V1: &str = r#""apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy""#;

fn policies(text: &str) -> Arc<AbacAuthorizer> {
    AbacAuthorizer::parse(text, Flavor::Kubernetes).expect("the policy file parses")
}

/// A v1beta1 line with `spec`.
fn v1(spec: &str) -> String {
    format!(r#"{{{V1},"spec":{spec}}}"#)
}

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.to_owned(),
        groups: groups.iter().map(|g| (*g).to_owned()).collect(),
        ..UserInfo::default()
    }
}

fn authenticated(name: &str) -> UserInfo {
    user(name, &[SYSTEM_AUTHENTICATED])
}

/// A request as Kubernetes' ABAC tests build it: a resource request when it names a namespace
/// or a resource, a request for `path` otherwise.
fn request(
    verb_name: &str,
    group: &str,
    resource: &str,
    namespace: &str,
    path: &str,
) -> RequestInfo {
    if namespace.is_empty() && resource.is_empty() {
        return RequestInfo::non_resource(path, Verb::Other(verb_name.to_owned()));
    }
    let mut info = RequestInfo::non_resource(path, Verb::named(verb_name));
    info.is_resource_request = true;
    info.api_group = group.to_owned();
    info.resource = resource.to_owned();
    info.namespace = namespace.to_owned();
    info
}

async fn allowed(authorizer: &AbacAuthorizer, who: &UserInfo, request: &RequestInfo) -> bool {
    let attributes = Attributes { user: who, request };
    match authorizer.authorize(&attributes).await {
        Decision::Allow => true,
        Decision::NoOpinion(reason) => {
            assert_eq!(reason, "No policy matched.");
            false
        }
        Decision::Deny(reason) => panic!("ABAC never denies, denied: {reason}"),
    }
}

/// (user, verb, api group, resource, namespace, path, allowed)
type Row<'a> = (
    &'a UserInfo,
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    &'a str,
    bool,
);

async fn check_rows(authorizer: &AbacAuthorizer, rows: &[Row<'_>]) {
    for (who, verb_name, group, resource, namespace, path, expected) in rows {
        let r = request(verb_name, group, resource, namespace, path);
        assert_eq!(
            allowed(authorizer, who, &r).await,
            *expected,
            "{} {verb_name} {group}/{resource} in {namespace:?} path {path:?}",
            who.name
        );
    }
}

// R-ACC-167
#[test]
fn files_hold_policy_lines_blank_lines_and_comments() {
    assert!(AbacAuthorizer::parse("", Flavor::Kubernetes).is_ok());
    let text = format!(
        "\n   # a comment, after a blank line\n{}\r\n\t{}\n{{\"user\":\"scheduler\", \"readonly\": true, \"resource\": \"pods\"}}",
        v1(r#"{"user":"alice","namespace":"*","resource":"*","apiGroup":"*"}"#),
        v1(r#"{"user":"bob","readonly":true,"nonResourcePath":"/api"}"#)
    );
    assert_eq!(policies(&text).policies.len(), 3);
}

// R-ACC-167
#[test]
fn a_line_that_is_not_a_policy_is_refused_with_its_number() {
    let cases = [
        ("{\"user\":\"a\"}\nnot json", 2, "expected"),
        ("\n\n[1, 2]", 3, "must be a JSON object"),
        (r#"{"user": 7}"#, 1, "invalid type"),
        (r#"{"user":"a", "readonly":"yes"}"#, 1, "invalid type"),
        (
            r#"{"apiVersion": 1, "kind":"Policy"}"#,
            1,
            "apiVersion must be a string",
        ),
        (
            r#"{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"resource":["pods"]}}"#,
            1,
            "invalid type",
        ),
        (
            r#"{"apiVersion":"abac.authorization.kubernetes.io/v2","kind":"Policy","spec":{}}"#,
            1,
            "unknown policy",
        ),
        (
            r#"{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Rule","spec":{}}"#,
            1,
            "unknown policy",
        ),
    ];
    for (text, line, wording) in cases {
        let error = AbacAuthorizer::parse(text, Flavor::Kubernetes).expect_err(text);
        assert_eq!(error.line, line, "{text}");
        assert!(error.reason.contains(wording), "{text}: {error}");
        assert!(error.to_string().starts_with(&format!("line {line}: ")));
    }
}

// R-ACC-167: the policy group is spelled per flavor.
#[tokio::test]
async fn the_policy_group_follows_the_flavor() {
    let kubernetes = v1(r#"{"user":"alice","namespace":"*","resource":"*","apiGroup":"*"}"#);
    let platform = kubernetes.replace("kubernetes.io", "platform.io");
    assert!(AbacAuthorizer::parse(&platform, Flavor::Kubernetes).is_err());
    assert!(AbacAuthorizer::parse(&kubernetes, Flavor::Platform).is_err());
    let authorizer = AbacAuthorizer::parse(&platform, Flavor::Platform).expect("parses");
    let r = request("get", "apps", "deployments", "ns", "");
    assert!(allowed(&authorizer, &authenticated("alice"), &r).await);
}

// R-ACC-167: the examples of Kubernetes' ABAC documentation.
#[tokio::test]
async fn the_documented_examples() {
    let text = [
        v1(r#"{"user":"alice","namespace":"*","resource":"*","apiGroup":"*"}"#),
        v1(r#"{"user":"kubelet","namespace":"*","resource":"pods","readonly":true}"#),
        v1(r#"{"user":"kubelet","namespace":"*","resource":"events"}"#),
        v1(r#"{"user":"bob","namespace":"projectCaribou","resource":"pods","readonly":true}"#),
        v1(r#"{"group":"system:authenticated","readonly":true,"nonResourcePath":"*"}"#),
        v1(r#"{"group":"system:unauthenticated","readonly":true,"nonResourcePath":"*"}"#),
    ]
    .join("\n");
    let authorizer = policies(&text);
    let alice = authenticated("alice");
    let kubelet = authenticated("kubelet");
    let bob = authenticated("bob");
    let anonymous = user("system:anonymous", &[UNAUTHENTICATED_GROUP]);
    let rows: Vec<Row> = vec![
        (&alice, "delete", "apps", "deployments", "x", "", true),
        (&alice, "create", "", "namespaces", "", "", true),
        (&kubelet, "list", "", "pods", "", "", true),
        (&kubelet, "watch", "", "pods", "ns", "", true),
        (&kubelet, "create", "", "pods", "ns", "", false),
        (&kubelet, "get", "other.io", "pods", "ns", "", false),
        (&kubelet, "create", "", "events", "ns", "", true),
        (&bob, "get", "", "pods", "projectCaribou", "", true),
        (&bob, "update", "", "pods", "projectCaribou", "", false),
        (&bob, "get", "", "pods", "other", "", false),
        (&bob, "get", "", "secrets", "projectCaribou", "", false),
        (&bob, "get", "", "", "", "/version", true),
        (&bob, "post", "", "", "", "/version", false),
        (&anonymous, "get", "", "", "", "/healthz", true),
        (&anonymous, "get", "", "pods", "projectCaribou", "", false),
    ];
    check_rows(&authorizer, &rows).await;
}

// R-ACC-167: Kubernetes' own v1beta1 table (TestAuthorizeV1beta1).
#[tokio::test]
async fn kubernetes_v1beta1_table() {
    let specs = [
        r#"{"user":"*","readonly":true,"nonResourcePath":"/api"}"#,
        r#"{"user":"*","nonResourcePath":"/custom"}"#,
        r#"{"user":"*","nonResourcePath":"/root/*"}"#,
        r#"{"user":"noresource","nonResourcePath":"*"}"#,
        r#"{"user":"*","readonly":true,"resource":"events","namespace":"*"}"#,
        r#"{"user":"scheduler","readonly":true,"resource":"pods","namespace":"*"}"#,
        r#"{"user":"scheduler","resource":"bindings","namespace":"*"}"#,
        r#"{"user":"kubelet","readonly":true,"resource":"bindings","namespace":"*"}"#,
        r#"{"user":"kubelet","resource":"events","namespace":"*"}"#,
        r#"{"user":"alice","resource":"*","namespace":"projectCaribou"}"#,
        r#"{"user":"bob","readonly":true,"resource":"*","namespace":"projectCaribou"}"#,
        r#"{"user":"debbie","resource":"pods","namespace":"projectCaribou"}"#,
        r#"{"user":"apigroupuser","resource":"*","namespace":"projectAnyGroup","apiGroup":"*"}"#,
        r#"{"user":"apigroupuser","resource":"*","namespace":"projectEmptyGroup","apiGroup":""}"#,
        r#"{"user":"apigroupuser","resource":"*","namespace":"projectXGroup","apiGroup":"x"}"#,
    ];
    let text: Vec<String> = specs.iter().map(|s| v1(s)).collect();
    let authorizer = policies(&format!("# Comment line\n{}", text.join("\n")));
    let scheduler = authenticated("scheduler");
    let alice = authenticated("alice");
    let chuck = authenticated("chuck");
    let debbie = authenticated("debbie");
    let noresource = authenticated("noresource");
    let apigroup = authenticated("apigroupuser");
    let rows: Vec<Row> = vec![
        (&scheduler, "list", "", "pods", "ns1", "", true),
        (&scheduler, "list", "", "pods", "", "", true),
        (&scheduler, "create", "", "pods", "ns1", "", false),
        (&scheduler, "create", "", "pods", "", "", false),
        (&scheduler, "get", "", "bindings", "ns1", "", true),
        (&scheduler, "get", "", "bindings", "", "", true),
        (&alice, "get", "", "pods", "projectCaribou", "", true),
        (&alice, "get", "", "widgets", "projectCaribou", "", true),
        (&alice, "get", "", "", "projectCaribou", "", true),
        (&alice, "update", "", "pods", "projectCaribou", "", true),
        (&alice, "update", "", "widgets", "projectCaribou", "", true),
        (&alice, "update", "", "", "projectCaribou", "", true),
        (&alice, "get", "", "pods", "ns1", "", false),
        (&alice, "get", "", "widgets", "ns1", "", false),
        (&alice, "get", "", "", "ns1", "", false),
        (&debbie, "update", "", "pods", "projectCaribou", "", true),
        (&chuck, "get", "", "events", "ns1", "", true),
        (&chuck, "get", "", "events", "", "", true),
        (&chuck, "update", "", "events", "ns1", "", false),
        (&chuck, "get", "", "pods", "ns1", "", false),
        (&chuck, "get", "", "floop", "ns1", "", false),
        (&chuck, "get", "", "", "", "/", false),
        (&chuck, "get", "", "", "", "/api", true),
        (&chuck, "create", "", "", "", "/api", false),
        (&chuck, "update", "", "", "", "/custom", true),
        (&chuck, "get", "", "", "", "/root", false),
        (&chuck, "get", "", "", "", "/root/", true),
        (&chuck, "get", "", "", "", "/root/test/1/2/3", true),
        (&noresource, "get", "", "", "", "", true),
        (&noresource, "get", "", "", "", "/", true),
        (&noresource, "get", "", "", "", "/foo/bar/baz", true),
        (&noresource, "get", "", "", "bar", "/", false),
        (&noresource, "get", "", "foo", "bar", "/foo/bar/baz", false),
        (&apigroup, "get", "x", "foo", "projectAnyGroup", "", true),
        (&apigroup, "get", "x", "foo", "projectEmptyGroup", "", false),
        (&apigroup, "get", "x", "foo", "projectXGroup", "", true),
    ];
    check_rows(&authorizer, &rows).await;
}

// R-ACC-167: unversioned legacy lines, converted (Kubernetes' TestAuthorizeV0).
#[tokio::test]
async fn legacy_lines_are_converted() {
    let authorizer = policies(
        r#"{                    "readonly": true, "resource": "events"   }
{"user":"scheduler", "readonly": true, "resource": "pods"     }
{"user":"scheduler",                   "resource": "bindings" }
{"user":"kubelet",   "readonly": true, "resource": "bindings" }
{"user":"kubelet",                     "resource": "events"   }
{"user":"alice",                                              "namespace": "projectCaribou"}
{"user":"bob",       "readonly": true,                        "namespace": "projectCaribou"}
{"apiVersion":"abac.authorization.kubernetes.io/v0","kind":"Policy","user":"versioned","resource":"pods"}
"#,
    );
    let scheduler = authenticated("scheduler");
    let alice = authenticated("alice");
    let chuck = authenticated("chuck");
    let versioned = authenticated("versioned");
    let rows: Vec<Row> = vec![
        (&scheduler, "list", "", "pods", "ns1", "", true),
        (&scheduler, "list", "", "pods", "", "", true),
        (&scheduler, "create", "", "pods", "ns1", "", false),
        (&scheduler, "create", "", "pods", "", "", false),
        (&scheduler, "get", "", "bindings", "ns1", "", true),
        (&scheduler, "get", "", "bindings", "", "", true),
        (&alice, "get", "", "pods", "projectCaribou", "", true),
        (&alice, "get", "", "widgets", "projectCaribou", "", true),
        (&alice, "get", "", "", "projectCaribou", "", true),
        (&alice, "update", "", "pods", "projectCaribou", "", true),
        (&alice, "update", "bar", "foo", "projectCaribou", "", true),
        (&alice, "get", "", "pods", "ns1", "", false),
        (&alice, "get", "", "", "ns1", "", false),
        (&chuck, "get", "", "events", "ns1", "", true),
        (&chuck, "get", "", "events", "", "", true),
        (&chuck, "update", "", "events", "ns1", "", false),
        (&chuck, "get", "", "pods", "ns1", "", false),
        (&chuck, "get", "", "", "", "/", false),
        (&versioned, "create", "apps", "pods", "ns1", "", true),
        (&versioned, "get", "", "", "", "/", false),
    ];
    check_rows(&authorizer, &rows).await;
    // A legacy line naming neither namespace nor resource also grants every path.
    let r = request("get", "", "", "", "/healthz");
    let everything = policies(r#"{"user":"root"}"#);
    assert!(allowed(&everything, &authenticated("root"), &r).await);
}

// R-ACC-167: who a policy names (Kubernetes' TestSubjectMatches); `*` never covers anonymous.
#[test]
fn subjects() {
    let anonymous = user("system:anonymous", &[UNAUTHENTICATED_GROUP]);
    let foo = authenticated("Foo");
    let foo_in_abc = user("Foo", &["A", "B", "C", SYSTEM_AUTHENTICATED]);
    let bar_in_abc = user("Bar", &["A", "B", "C", SYSTEM_AUTHENTICATED]);
    let foo_in_bbb = user("Foo", &["A", "BBB", "C", SYSTEM_AUTHENTICATED]);
    let cases: Vec<(&str, UserInfo, bool)> = vec![
        (r#"{}"#, anonymous.clone(), false),
        (r#"{"user":"*"}"#, anonymous.clone(), false),
        (r#"{"group":"*"}"#, anonymous.clone(), false),
        (r#"{"user":"Foo"}"#, anonymous.clone(), false),
        (r#"{"group":"Foo"}"#, anonymous.clone(), false),
        (r#"{}"#, foo.clone(), false),
        (r#"{"user":"*"}"#, foo.clone(), true),
        (r#"{"group":"*"}"#, foo.clone(), true),
        (r#"{"user":"Foo"}"#, foo.clone(), true),
        (r#"{"user":"foo"}"#, foo.clone(), false),
        (r#"{"user":"Foo"}"#, authenticated("FooBar"), false),
        (
            r#"{"group":"A"}"#,
            user("FooBar", &["B", SYSTEM_AUTHENTICATED]),
            false,
        ),
        (r#"{"group":"b"}"#, foo_in_abc.clone(), false),
        (r#"{"group":"B"}"#, foo_in_bbb.clone(), false),
        (r#"{"group":"B"}"#, foo_in_abc.clone(), true),
        (r#"{"user":"Foo","group":"B"}"#, bar_in_abc.clone(), false),
        (r#"{"user":"Foo","group":"D"}"#, foo_in_abc.clone(), false),
        (r#"{"user":"Foo","group":"B"}"#, foo_in_abc.clone(), true),
        (
            r#"{"group":"system:unauthenticated"}"#,
            anonymous.clone(),
            true,
        ),
    ];
    for (spec, who, expected) in cases {
        let policy = &policies(&v1(spec)).policies[0];
        assert_eq!(
            policy.subject_matches(&who),
            expected,
            "v1beta1 {spec} {who:?}"
        );
    }
    let legacy: Vec<(&str, UserInfo, bool)> = vec![
        (r#"{}"#, anonymous.clone(), false),
        (r#"{"user":"*"}"#, anonymous.clone(), false),
        (r#"{"group":"*"}"#, anonymous.clone(), false),
        (r#"{}"#, foo.clone(), true),
        (
            r#"{}"#,
            user("Foo", &["a", "b", SYSTEM_AUTHENTICATED]),
            true,
        ),
        (r#"{"user":"Foo"}"#, anonymous.clone(), false),
        (r#"{"user":"Foo"}"#, foo.clone(), true),
        (r#"{"group":"B"}"#, foo_in_abc.clone(), true),
        (r#"{"user":"Foo","group":"D"}"#, foo_in_abc.clone(), false),
    ];
    for (line, who, expected) in legacy {
        let policy = &policies(line).policies[0];
        assert_eq!(
            policy.subject_matches(&who),
            expected,
            "legacy {line} {who:?}"
        );
    }
}

fn resource_rule(verbs: &[&str], group: &str, resource: &str) -> ResourceRule {
    ResourceRule {
        verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
        api_groups: Some(vec![group.to_owned()]),
        resources: Some(vec![resource.to_owned()]),
        resource_names: None,
    }
}

fn path_rule(verbs: &[&str], path: &str) -> NonResourceRule {
    NonResourceRule {
        verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
        non_resource_urls: Some(vec![path.to_owned()]),
    }
}

// R-ACC-167: SelfSubjectRulesReview lists the policies naming the user, as Kubernetes'
// RulesFor does (TestRulesFor).
#[tokio::test]
async fn rules_list_the_matching_policies() {
    let authorizer = policies(
        r#"
{                    "readonly": true, "resource": "events"   }
{"user":"scheduler", "readonly": true, "resource": "pods"     }
{"user":"scheduler",                   "resource": "bindings" }
{"user":"kubelet",   "readonly": true, "resource": "pods"     }
{"user":"kubelet",                     "resource": "events"   }
{"user":"alice",                                              "namespace": "projectCaribou"}
{"user":"bob",       "readonly": true,                        "namespace": "projectCaribou"}
{"user":"bob",       "readonly": true,                                                     "nonResourcePath": "*"}
{"group":"a",                          "resource": "bindings" }
{"group":"b",        "readonly": true,                                                     "nonResourcePath": "*"}
"#,
    );
    let read = ["get", "list", "watch"];
    let all = ["*"];
    let cases = [
        (
            authenticated("scheduler"),
            "ns1",
            vec![
                resource_rule(&read, "*", "events"),
                resource_rule(&read, "*", "pods"),
                resource_rule(&all, "*", "bindings"),
            ],
            vec![],
        ),
        (
            user("kubelet", &["a", "b"]),
            "ns1",
            vec![
                resource_rule(&read, "*", "pods"),
                resource_rule(&all, "*", "events"),
                resource_rule(&all, "*", "bindings"),
                resource_rule(&read, "*", "*"),
            ],
            vec![path_rule(&read, "*")],
        ),
        (
            authenticated("alice"),
            "projectCaribou",
            vec![
                resource_rule(&read, "*", "events"),
                resource_rule(&all, "*", "*"),
            ],
            vec![],
        ),
        (
            authenticated("bob"),
            "projectCaribou",
            vec![
                resource_rule(&read, "*", "events"),
                resource_rule(&read, "*", "*"),
                resource_rule(&read, "*", "*"),
            ],
            vec![path_rule(&read, "*")],
        ),
        (
            user("chuck", &["a", "b"]),
            "ns1",
            vec![
                resource_rule(&all, "*", "bindings"),
                resource_rule(&read, "*", "*"),
            ],
            vec![path_rule(&read, "*")],
        ),
    ];
    for (who, namespace, resource, non_resource) in cases {
        let rules = authorizer.rules(&who, namespace).await.expect("complete");
        assert_eq!(rules.resource, resource, "{}", who.name);
        assert_eq!(rules.non_resource, non_resource, "{}", who.name);
        assert!(!rules.incomplete);
    }
    let v1beta1 = policies(&v1(
        r#"{"user":"dana","readonly":true,"resource":"pods","namespace":"a"}"#,
    ));
    let dana = authenticated("dana");
    let rules = v1beta1.rules(&dana, "a").await.expect("complete");
    assert_eq!(rules.resource, vec![resource_rule(&read, "", "pods")]);
    let elsewhere = v1beta1.rules(&dana, "b").await.expect("complete");
    assert!(elsewhere.resource.is_empty());
}
