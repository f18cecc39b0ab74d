//! Policy parsing, validation and first-match evaluation.

use http::Method;

use super::*;
use crate::request::QueryParams;

fn policy(yaml: &str) -> Policy {
    Policy::parse(yaml, Flavor::Kubernetes).unwrap_or_else(|e| panic!("{e}: {yaml}"))
}

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.into(),
        groups: groups.iter().map(|g| (*g).to_owned()).collect(),
        ..UserInfo::default()
    }
}

fn request(method: &str, path: &str) -> RequestInfo {
    let (path, query) = path.split_once('?').unwrap_or((path, ""));
    let method = Method::from_bytes(method.as_bytes()).expect("method");
    RequestInfo::parse(&method, path, &QueryParams::parse(Some(query)))
}

fn level(policy: &Policy, who: &UserInfo, method: &str, path: &str) -> Level {
    policy.decide(who, &request(method, path)).level
}

const RULES: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    users: ["system:kube-proxy"]
  - level: None
    userGroups: ["system:nodes"]
    verbs: ["get"]
  - level: Metadata
    resources:
      - group: ""
        resources: ["secrets", "configmaps"]
  - level: Request
    resources:
      - group: ""
        resources: ["pods/log", "*/status"]
  - level: RequestResponse
    resources:
      - group: "apps"
        resources: ["deployments/*"]
        resourceNames: ["web"]
    omitStages: [ResponseStarted]
  - level: Metadata
    namespaces: ["kube-system"]
  - level: Request
    nonResourceURLs: ["/healthz*", "/version"]
  - level: None
    resources:
      - group: ""
  - level: RequestResponse
    omitManagedFields: true
"#;

#[test]
fn the_first_matching_rule_decides() {
    let p = policy(RULES);
    let alice = user("alice", &["dev"]);
    let proxy = user("system:kube-proxy", &[]);
    let node = user("system:node:n1", &["system:nodes"]);
    let secret = "/api/v1/namespaces/default/secrets/s";
    assert_eq!(level(&p, &proxy, "GET", secret), Level::None);
    assert_eq!(level(&p, &node, "GET", secret), Level::None);
    // The node's list is not a get: the secrets rule matches.
    assert_eq!(level(&p, &node, "GET", "/api/v1/secrets"), Level::Metadata);
    assert_eq!(level(&p, &alice, "GET", secret), Level::Metadata);
    assert_eq!(
        level(&p, &alice, "PUT", "/api/v1/namespaces/default/configmaps/c"),
        Level::Metadata
    );
    // Subresources: exact, and `*/status` for any resource's status.
    assert_eq!(
        level(&p, &alice, "GET", "/api/v1/namespaces/default/pods/p/log"),
        Level::Request
    );
    assert_eq!(
        level(
            &p,
            &alice,
            "PUT",
            "/api/v1/namespaces/default/services/s/status"
        ),
        Level::Request
    );
    // `deployments/*` covers the resource and its subresources, but only the named object.
    let web = "/apis/apps/v1/namespaces/default/deployments/web";
    assert_eq!(level(&p, &alice, "GET", web), Level::RequestResponse);
    assert_eq!(
        level(&p, &alice, "GET", &format!("{web}/scale")),
        Level::RequestResponse
    );
    // Other deployments fall through to the catch-all.
    assert_eq!(
        level(
            &p,
            &alice,
            "GET",
            "/apis/apps/v1/namespaces/default/deployments/db"
        ),
        Level::RequestResponse
    );
    // Namespaces: any resource there.
    assert_eq!(
        level(
            &p,
            &alice,
            "GET",
            "/apis/apps/v1/namespaces/kube-system/deployments/db"
        ),
        Level::Metadata
    );
    // Other core resources: None by the group-only rule.
    assert_eq!(
        level(&p, &alice, "GET", "/api/v1/namespaces/default/pods/p"),
        Level::None
    );
    // Non-resource URLs: exact and trailing `*`; resource rules never match them.
    assert_eq!(level(&p, &alice, "GET", "/healthz/etcd"), Level::Request);
    assert_eq!(level(&p, &alice, "GET", "/version"), Level::Request);
    assert_eq!(
        level(&p, &alice, "GET", "/versions"),
        Level::RequestResponse
    );
}

#[test]
fn omitted_stages_and_managed_fields_combine_policy_and_rule() {
    let p = policy(RULES);
    let alice = user("alice", &[]);
    let web = p.decide(
        &alice,
        &request("GET", "/apis/apps/v1/namespaces/default/deployments/web"),
    );
    assert_eq!(
        web.omit_stages,
        [Stage::RequestReceived, Stage::ResponseStarted]
    );
    assert!(!web.omit_managed_fields);
    let other = p.decide(&alice, &request("GET", "/apis/batch/v1/jobs"));
    assert_eq!(other.omit_stages, [Stage::RequestReceived]);
    assert!(other.omit_managed_fields);
}

#[test]
fn no_matching_rule_is_level_none() {
    let p = policy(
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  users: [bob]\n",
    );
    assert_eq!(
        level(&p, &user("alice", &[]), "GET", "/api/v1/pods"),
        Level::None
    );
    assert_eq!(
        level(&p, &user("bob", &[]), "GET", "/api/v1/pods"),
        Level::Metadata
    );
}

#[test]
fn json_policies_parse_too() {
    let p = policy(
        r#"{"apiVersion":"audit.k8s.io/v1","kind":"Policy","rules":[{"level":"Request","verbs":["create"]}]}"#,
    );
    assert_eq!(
        level(
            &p,
            &user("a", &[]),
            "POST",
            "/api/v1/namespaces/default/pods"
        ),
        Level::Request
    );
    assert_eq!(
        level(
            &p,
            &user("a", &[]),
            "GET",
            "/api/v1/namespaces/default/pods"
        ),
        Level::None
    );
}

#[test]
fn invalid_policies_name_the_problem() {
    let head = "apiVersion: audit.k8s.io/v1\nkind: Policy\n";
    let invalid = |body: &str, flavor: Flavor| {
        Policy::parse(&format!("{head}{body}"), flavor)
            .expect_err(body)
            .to_string()
    };
    let k = Flavor::Kubernetes;
    assert!(invalid("rules: []\n", k).contains("at least one rule"));
    assert!(invalid("rules:\n- level: Loud\n", k).contains("does not parse"));
    assert!(invalid("rules:\n- users: [a]\n", k).contains("does not parse"));
    assert!(invalid("rules:\n- level: None\n  colour: red\n", k).contains("does not parse"));
    assert!(
        invalid(
            "rules:\n- level: None\n  nonResourceURLs: [/a]\n  namespaces: [x]\n",
            k
        )
        .contains("rules[0]: rules cannot apply to both")
    );
    assert!(
        invalid("rules:\n- level: None\n  nonResourceURLs: [a*]\n", k)
            .contains("must start with /")
    );
    assert!(
        invalid("rules:\n- level: None\n  nonResourceURLs: [/a*b]\n", k).contains("only end in *")
    );
    assert!(
        invalid(
            "rules:\n- level: None\n  resources: [{resourceNames: [x]}]\n",
            k
        )
        .contains("resourceNames need")
    );
    assert!(
        invalid("rules:\n- level: None\n  omitStages: [Sometimes]\n", k).contains("does not parse")
    );
    // The group follows the flavor.
    assert!(invalid("rules:\n- level: None\n", Flavor::Platform).contains("audit.platform.io/v1"));
    let platform = "apiVersion: audit.platform.io/v1\nkind: Policy\nrules:\n- level: None\n";
    assert!(Policy::parse(platform, Flavor::Platform).is_ok());
}
