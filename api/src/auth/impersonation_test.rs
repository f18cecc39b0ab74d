//! Tests of the impersonation step: the headers read, the checks asked of the authorizer
//! chain in each mode and their order, the user acted as, and the refusals' wording.

use std::sync::Arc;
use std::sync::Mutex;

use http::Method;

use super::*;
use crate::auth::Authorizer;
use crate::auth::Decision;
use crate::auth::SystemMastersAuthorizer;
use crate::request::QueryParams;

/// Allows exactly the checks it was given (written as [`key`] writes them); no opinion, with
/// "deny by default", on everything else. Remembers every check it was asked.
#[derive(Default)]
struct Granted {
    grants: Vec<String>,
    asked: Mutex<Vec<String>>,
    askers: Mutex<Vec<UserInfo>>,
}

/// A check as `<verb> <group>/<resource>[/<subresource>] <namespace>/<name>`.
fn key(r: &RequestInfo) -> String {
    let subresource = if r.subresource.is_empty() {
        String::new()
    } else {
        format!("/{}", r.subresource)
    };
    format!(
        "{} {}/{}{subresource} {}/{}",
        r.verb.as_str(),
        r.api_group,
        r.resource,
        r.namespace,
        r.name
    )
}

#[async_trait::async_trait]
impl Authorizer for Granted {
    async fn authorize(&self, attributes: &Attributes<'_>) -> Decision {
        let key = key(attributes.request);
        self.asked.lock().expect("lock").push(key.clone());
        self.askers
            .lock()
            .expect("lock")
            .push(attributes.user.clone());
        if self.grants.contains(&key) {
            Decision::Allow
        } else {
            Decision::NoOpinion("deny by default".to_owned())
        }
    }
}

fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.append(
            http::HeaderName::from_bytes(name.as_bytes()).expect("name"),
            http::HeaderValue::from_str(value).expect("value"),
        );
    }
    map
}

fn user(name: &str) -> UserInfo {
    UserInfo {
        name: name.to_owned(),
        groups: vec![SYSTEM_AUTHENTICATED.to_owned()],
        ..UserInfo::default()
    }
}

fn step(constrained: bool) -> Impersonation {
    Impersonation::new(AuthorizerChain::default(), Flavor::Kubernetes, constrained)
}

/// `GET pods/foo` in namespace `bar`.
fn get_pod() -> RequestInfo {
    RequestInfo::parse(
        &Method::GET,
        "/api/v1/namespaces/bar/pods/foo",
        &QueryParams::default(),
    )
}

/// What impersonating with `asked` answers for `requestor` when the chain grants `grants`,
/// the checks asked, in order, and who asked each.
async fn outcome(
    constrained: bool,
    grants: &[&str],
    requestor: UserInfo,
    asked: &[(&str, &str)],
) -> (Result<UserInfo, ApiError>, Vec<String>, Vec<UserInfo>) {
    let granted = Arc::new(Granted {
        grants: grants.iter().map(|g| (*g).to_owned()).collect(),
        ..Granted::default()
    });
    let chain = AuthorizerChain::new(vec![granted.clone()]);
    let step = Impersonation::new(chain, Flavor::Kubernetes, constrained);
    let result = step
        .impersonate(&mut headers(asked), requestor, &get_pod())
        .await;
    let checks = granted.asked.lock().expect("lock").clone();
    let askers = granted.askers.lock().expect("lock").clone();
    (result, checks, askers)
}

fn groups(user: &UserInfo) -> Vec<&str> {
    user.groups.iter().map(String::as_str).collect()
}

fn refusal(result: Result<UserInfo, ApiError>) -> String {
    match result {
        Err(error @ ApiError::Forbidden { .. }) => error.to_string(),
        other => panic!("not a 403: {other:?}"),
    }
}

// R-ACC-149, R-ACC-150, R-ACC-151, R-ACC-152: the user, every group header, the uid and the
// extras (key lower-cased and percent-decoded, one value per header) are read.
#[test]
fn headers_name_the_wanted_user() {
    let wanted = step(true)
        .wanted(&headers(&[
            ("Impersonate-User", "alice"),
            ("Impersonate-Group", "g1"),
            ("Impersonate-Group", "g2"),
            ("Impersonate-Uid", "u-1"),
            ("Impersonate-Extra-Acme.io%2fScopes", "a"),
            ("Impersonate-Extra-acme.io%2fscopes", "b"),
            ("Impersonate-Extra-Bad%zzKey", "c"),
        ]))
        .expect("well formed")
        .expect("impersonating");
    assert_eq!(wanted.name, "alice");
    assert_eq!(wanted.uid, "u-1");
    assert_eq!(wanted.groups, ["g1", "g2"]);
    assert_eq!(
        wanted.extra,
        BTreeMap::from([
            (
                "acme.io/scopes".to_owned(),
                vec!["a".to_owned(), "b".to_owned()]
            ),
            ("bad%zzkey".to_owned(), vec!["c".to_owned()]),
        ])
    );
    assert_eq!(step(true).wanted(&headers(&[])).expect("none"), None);
}

// R-ACC-153: a group, uid or extra without a user is a 400 worded as kube-apiserver words it,
// with and without constrained impersonation.
#[test]
fn parts_without_a_user_are_bad_requests() {
    let asked = headers(&[
        ("Impersonate-Group", "g"),
        ("Impersonate-Uid", "u"),
        ("Impersonate-Extra-Acme.io%2fx", "v"),
    ]);
    let message = |constrained| match step(constrained).wanted(&asked) {
        Err(ApiError::BadRequest(message)) => message,
        other => panic!("not a bad request: {other:?}"),
    };
    assert_eq!(
        message(true),
        r#"requested &user.DefaultInfo{Name:"", UID:"u", Groups:[]string{"g"}, Extra:map[string][]string{"acme.io/x":[]string{"v"}}} without impersonating a user name"#
    );
    assert_eq!(
        message(false),
        "requested [{Group  g    } {UserExtra  v  authentication.k8s.io/v1  acme.io/x} \
         {UID  u  authentication.k8s.io/v1  }] without impersonating a user"
    );
}

// R-ACC-154: service account and node user names are recognised only when well formed.
#[test]
fn service_account_and_node_names_are_parsed_strictly() {
    assert_eq!(
        service_account("system:serviceaccount:ns:robot"),
        Some(("ns", "robot"))
    );
    assert_eq!(service_account("system:serviceaccount:ns:a:b"), None);
    assert_eq!(service_account("system:serviceaccount:NS:robot"), None);
    assert_eq!(node_name("system:node:n1.example"), Some("n1.example"));
    assert_eq!(node_name("system:node:"), None);
}

// Constrained impersonation refuses extra keys that are not lower-case domain-prefixed paths,
// and empty values.
#[test]
fn constrained_extras_must_be_well_formed() {
    let extra = |key: &str, value: &str| BTreeMap::from([(key.to_owned(), vec![value.to_owned()])]);
    assert_eq!(validate_extra(&extra("acme.io/scopes", "a")), Ok(()));
    assert_eq!(
        validate_extra(&extra("scopes", "a")),
        Err(r#"impersonating an invalid key in extra is not allowed: extra.key: Invalid value: "scopes": must be a domain-prefixed path (such as "acme.io/foo")"#.to_owned())
    );
    assert_eq!(
        validate_extra(&extra("acme.io/Scopes", "a")),
        Err(
            r#"impersonating a non-lowercase key in extra is not allowed: "acme.io/Scopes""#
                .to_owned()
        )
    );
    assert_eq!(
        validate_extra(&extra("acme.io/scopes", "")),
        Err("impersonating the empty string value in extra is not allowed".to_owned())
    );
}

// R-ACC-107, R-ACC-154, R-ACC-155: without constrained impersonation, each part is checked
// with `impersonate` (users and groups in the core group, uids and userextras/<key> in
// authentication.k8s.io) on its own name, in kube-apiserver's order; the impersonated user gets
// `system:authenticated`.
#[tokio::test]
async fn legacy_impersonation_checks_every_part_by_name() {
    let grants = [
        "impersonate /users /alice",
        "impersonate /groups /g1",
        "impersonate authentication.k8s.io/userextras/acme.io/scopes /a",
        "impersonate authentication.k8s.io/uids /u1",
    ];
    let asked = [
        ("Impersonate-User", "alice"),
        ("Impersonate-Group", "g1"),
        ("Impersonate-Extra-Acme.io%2fscopes", "a"),
        ("Impersonate-Uid", "u1"),
    ];
    let (result, checks, _) = outcome(false, &grants, user("bob"), &asked).await;
    let alice = result.expect("allowed");
    assert_eq!(alice.name, "alice");
    assert_eq!(alice.uid, "u1");
    assert_eq!(groups(&alice), ["g1", SYSTEM_AUTHENTICATED]);
    assert_eq!(alice.extra["acme.io/scopes"], ["a"]);
    assert_eq!(checks, grants);

    // Another group than the one granted: refused on that group, worded as Kubernetes.
    let other = [("Impersonate-User", "alice"), ("Impersonate-Group", "g2")];
    let (result, _, _) = outcome(false, &grants, user("bob"), &other).await;
    assert_eq!(
        refusal(result),
        r#"groups "g2" is forbidden: User "bob" cannot impersonate resource "groups" in API group "" at the cluster scope: deny by default"#
    );
    let (result, _, _) = outcome(
        false,
        &grants,
        user("bob"),
        &[("Impersonate-User", "carol")],
    )
    .await;
    assert_eq!(
        refusal(result),
        r#"users "carol" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope: deny by default"#
    );
}

// R-ACC-154: a service account is checked as the serviceaccounts resource in its namespace and
// gets its groups; anonymous gets system:unauthenticated, not system:authenticated.
#[tokio::test]
async fn service_accounts_and_anonymous_get_their_groups() {
    let grants = [
        "impersonate /serviceaccounts ns1/robot",
        "impersonate /users /system:anonymous",
    ];
    let asked = [("Impersonate-User", "system:serviceaccount:ns1:robot")];
    let (result, checks, _) = outcome(false, &grants, user("bob"), &asked).await;
    let robot = result.expect("allowed");
    assert_eq!(
        groups(&robot),
        [
            "system:serviceaccounts",
            "system:serviceaccounts:ns1",
            SYSTEM_AUTHENTICATED
        ]
    );
    assert_eq!(checks, ["impersonate /serviceaccounts ns1/robot"]);
    let asked = [("Impersonate-User", "system:anonymous")];
    let (result, _, _) = outcome(false, &grants, user("bob"), &asked).await;
    assert_eq!(
        groups(&result.expect("allowed")),
        ["system:unauthenticated"]
    );
}

// R-ACC-154: constrained impersonation of a plain user needs impersonate-on:user-info:<verb>
// on the request and impersonate:user-info on the user in authentication.k8s.io; without
// them the legacy check decides, and when everything is refused the first refusal answers.
#[tokio::test]
async fn constrained_user_info_falls_back_to_legacy() {
    let on = "impersonate-on:user-info:get /pods bar/foo";
    let user_info = "impersonate:user-info authentication.k8s.io/users /alice";
    let legacy = "impersonate /users /alice";
    let asked = [("Impersonate-User", "alice")];

    let (result, checks, _) = outcome(true, &[on, user_info], user("bob"), &asked).await;
    assert_eq!(groups(&result.expect("allowed")), [SYSTEM_AUTHENTICATED]);
    assert_eq!(checks, [on, user_info]);

    let (result, checks, _) = outcome(true, &[legacy], user("bob"), &asked).await;
    assert_eq!(result.expect("allowed").name, "alice");
    assert_eq!(checks, [on, legacy]);

    let (result, _, _) = outcome(true, &[], user("bob"), &asked).await;
    assert_eq!(
        refusal(result),
        r#"pods "foo" is forbidden: User "bob" cannot impersonate-on:user-info:get resource "pods" in API group "" in the namespace "bar": deny by default"#
    );
    let (result, checks, _) = outcome(true, &[on], user("bob"), &asked).await;
    assert_eq!(
        refusal(result),
        r#"users.authentication.k8s.io "alice" is forbidden: User "bob" cannot impersonate:user-info resource "users" in API group "authentication.k8s.io" at the cluster scope: deny by default"#
    );
    assert_eq!(checks, [on, user_info, legacy]);

    // The legacy gate off: only the legacy check runs.
    let (result, checks, _) = outcome(false, &[on, user_info], user("bob"), &asked).await;
    assert!(result.is_err());
    assert_eq!(checks, [legacy]);
}

// Constrained impersonation never grants system:masters, and asks for many groups at once.
#[tokio::test]
async fn constrained_groups_are_checked_with_care() {
    let on = "impersonate-on:user-info:get /pods bar/foo";
    let alice = "impersonate:user-info authentication.k8s.io/users /alice";
    let all_groups = "impersonate:user-info authentication.k8s.io/groups /*";
    let asked = [
        ("Impersonate-User", "alice"),
        ("Impersonate-Group", "system:masters"),
    ];
    let (result, _, _) = outcome(true, &[on, alice], user("bob"), &asked).await;
    assert_eq!(
        refusal(result),
        r#"groups.authentication.k8s.io "system:masters" is forbidden: User "bob" cannot impersonate:user-info resource "groups" in API group "authentication.k8s.io" at the cluster scope: impersonating the system:masters group is not allowed"#
    );
    let asked = [
        ("Impersonate-User", "alice"),
        ("Impersonate-Group", "a"),
        ("Impersonate-Group", "b"),
        ("Impersonate-Group", "c"),
        ("Impersonate-Group", "d"),
    ];
    let (result, checks, _) = outcome(true, &[on, alice, all_groups], user("bob"), &asked).await;
    assert_eq!(
        groups(&result.expect("allowed")),
        ["a", "b", "c", "d", SYSTEM_AUTHENTICATED]
    );
    assert_eq!(checks, [on, alice, all_groups]);
}

// Constrained impersonation of service accounts and nodes: only the user name may be given,
// the groups are fixed, and each kind has its own verbs.
#[tokio::test]
async fn constrained_service_accounts_and_nodes() {
    let grants = [
        "impersonate-on:serviceaccount:get /pods bar/foo",
        "impersonate:serviceaccount authentication.k8s.io/serviceaccounts default/robot",
    ];
    let asked = [("Impersonate-User", "system:serviceaccount:default:robot")];
    let (result, checks, _) = outcome(true, &grants, user("bob"), &asked).await;
    assert_eq!(
        groups(&result.expect("allowed")),
        [
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            SYSTEM_AUTHENTICATED
        ]
    );
    assert_eq!(checks, grants);

    let grants = [
        "impersonate-on:arbitrary-node:get /pods bar/foo",
        "impersonate:arbitrary-node authentication.k8s.io/nodes /node1",
    ];
    let asked = [("Impersonate-User", "system:node:node1")];
    let (result, checks, _) = outcome(true, &grants, user("bob"), &asked).await;
    assert_eq!(
        groups(&result.expect("allowed")),
        ["system:nodes", SYSTEM_AUTHENTICATED]
    );
    assert_eq!(checks, grants);
}

// A service account may act as the node its pod runs on (its node-name extra) with
// impersonate:associated-node on every node name; the checks see only its extra keys.
#[tokio::test]
async fn service_accounts_may_act_as_their_own_node() {
    let grants = [
        "impersonate-on:associated-node:get /pods bar/foo",
        "impersonate:associated-node authentication.k8s.io/nodes /*",
    ];
    let agent = |node: &str| UserInfo {
        extra: BTreeMap::from([(
            "authentication.kubernetes.io/node-name".to_owned(),
            vec![node.to_owned()],
        )]),
        ..user("system:serviceaccount:default:agent")
    };
    let asked = [("Impersonate-User", "system:node:node1")];
    let (result, checks, askers) = outcome(true, &grants, agent("node1"), &asked).await;
    let node = result.expect("allowed");
    assert_eq!(node.name, "system:node:node1");
    assert_eq!(groups(&node), ["system:nodes", SYSTEM_AUTHENTICATED]);
    assert_eq!(checks, grants);
    assert_eq!(
        askers[0].extra["authentication.kubernetes.io/associated-node-keys"],
        ["authentication.kubernetes.io/node-name"]
    );

    // Another node is not its own: only the arbitrary-node and legacy checks apply.
    let (result, checks, _) = outcome(true, &grants, agent("node2"), &asked).await;
    assert!(result.is_err());
    assert_eq!(
        checks,
        [
            "impersonate-on:arbitrary-node:get /pods bar/foo",
            "impersonate /users /system:node:node1"
        ]
    );
}

// Item 4: the impersonation headers are removed before the request goes on; other headers
// stay.
#[tokio::test]
async fn impersonation_headers_are_removed() {
    let chain = AuthorizerChain::new(vec![Arc::new(SystemMastersAuthorizer)]);
    let step = Impersonation::new(chain, Flavor::Kubernetes, true);
    let mut asked = headers(&[
        ("Impersonate-User", "alice"),
        ("Impersonate-Group", "g"),
        ("Impersonate-Uid", "u"),
        ("Impersonate-Extra-Acme.io%2fx", "v"),
        ("Accept", "application/json"),
    ]);
    let admin = UserInfo {
        groups: vec![SYSTEM_MASTERS.to_owned()],
        ..user("admin")
    };
    let alice = step
        .impersonate(&mut asked, admin, &get_pod())
        .await
        .expect("allowed");
    assert_eq!(alice.name, "alice");
    let left: Vec<&str> = asked.keys().map(http::HeaderName::as_str).collect();
    assert_eq!(left, ["accept"]);
}
