//! Tests of the CEL authorizer library: each function over chains that allow
//! (`system:masters`), have no opinion and deny; the attributes each check reaches the chain
//! with; the rounds of an evaluation; the cost budget.

use std::sync::Mutex;

use serde_json::json;

use super::*;
use crate::auth::Authorizer;
use crate::auth::SYSTEM_MASTERS;
use crate::auth::SystemMastersAuthorizer;

/// Answers every check with `decision` and remembers each one it was asked.
struct Scripted {
    decision: fn(&UserInfo, &RequestInfo) -> Decision,
    asked: Mutex<Vec<(UserInfo, RequestInfo)>>,
}

impl Scripted {
    fn new(decision: fn(&UserInfo, &RequestInfo) -> Decision) -> Arc<Self> {
        Arc::new(Self {
            decision,
            asked: Mutex::new(Vec::new()),
        })
    }

    fn asked(&self) -> Vec<(UserInfo, RequestInfo)> {
        self.asked.lock().expect("not poisoned").clone()
    }
}

#[async_trait::async_trait]
impl Authorizer for Scripted {
    async fn authorize(&self, attributes: &Attributes<'_>) -> Decision {
        let asked = (attributes.user.clone(), attributes.request.clone());
        self.asked.lock().expect("not poisoned").push(asked);
        (self.decision)(attributes.user, attributes.request)
    }
}

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.to_owned(),
        groups: groups.iter().map(|g| (*g).to_owned()).collect(),
        ..UserInfo::default()
    }
}

fn masters() -> CelAuthorizer {
    let chain = AuthorizerChain::new(vec![Arc::new(SystemMastersAuthorizer)]);
    CelAuthorizer::new(chain, user("admin", &[SYSTEM_MASTERS]))
}

fn no_opinion() -> CelAuthorizer {
    let chain = AuthorizerChain::new(vec![Arc::new(SystemMastersAuthorizer)]);
    CelAuthorizer::new(chain, user("bob", &["system:authenticated"]))
}

fn denying() -> CelAuthorizer {
    let deny = Scripted::new(|_, _| Decision::Deny("nope".to_owned()));
    CelAuthorizer::new(AuthorizerChain::new(vec![deny]), user("bob", &[]))
}

fn scripted(authorizer: &Arc<Scripted>, who: UserInfo) -> CelAuthorizer {
    let chain = AuthorizerChain::new(vec![authorizer.clone()]);
    CelAuthorizer::new(chain, who)
}

async fn run(authorizer: &CelAuthorizer, expression: &str) -> Result<serde_json::Value, EvalError> {
    let program = Program::compile(expression, &[AUTHORIZER_VARIABLE]).expect("compiles");
    authorizer.evaluate(&program, &[]).await
}

async fn value(authorizer: &CelAuthorizer, expression: &str) -> serde_json::Value {
    run(authorizer, expression).await.expect(expression)
}

/// The message of an evaluation that must fail.
async fn failure(authorizer: &CelAuthorizer, expression: &str) -> String {
    match run(authorizer, expression).await {
        Err(EvalError::Execution(message)) => message,
        other => panic!("{expression}: {other:?}"),
    }
}

const POD_CHECK: &str = "authorizer.group('').resource('pods').namespace('ns').check('get')";
const PATH_CHECK: &str = "authorizer.path('/healthz').check('get')";

// R-VER-029, R-VER-030, R-VER-032: what the decision reads over a chain that allows, one with
// no opinion and one that denies.
#[tokio::test]
async fn decisions_over_allowing_silent_and_denying_chains() {
    for check in [POD_CHECK, PATH_CHECK] {
        let read = format!(
            "[{check}.allowed(), {check}.denied(), {check}.reason(), {check}.errored(), {check}.error()]"
        );
        // Five calls of the check, each charged.
        let budget = 5 * CHECK_COST;
        assert_eq!(
            value(&masters().with_budget(budget), &read).await,
            json!([true, false, "", false, ""]),
            "{check}"
        );
        assert_eq!(
            value(&no_opinion().with_budget(budget), &read).await,
            json!([false, false, "", false, ""]),
            "{check}"
        );
        assert_eq!(
            value(&denying().with_budget(budget), &read).await,
            json!([false, true, "nope", false, ""]),
            "{check}"
        );
    }
}

// R-VER-029, R-VER-033: a resource check reaches the chain with every attribute it names,
// selectors included, for any version of the resource.
#[tokio::test]
async fn resource_checks_carry_their_attributes() {
    let recorder = Scripted::new(|_, r| {
        if r.name == "web" {
            Decision::Allow
        } else {
            Decision::NoOpinion("no rule".to_owned())
        }
    });
    let alice = user("alice", &["dev"]);
    let authorizer = scripted(&recorder, alice.clone());
    let expression = "authorizer.group('apps').resource('deployments').subresource('scale')\
        .namespace('ns').name('web').fieldSelector('spec.x=y').labelSelector('app=web')\
        .check('update').allowed()";
    assert_eq!(value(&authorizer, expression).await, json!(true));
    let asked = recorder.asked();
    assert_eq!(asked.len(), 1);
    let (who, request) = &asked[0];
    assert_eq!(who, &alice);
    assert!(request.is_resource_request);
    assert_eq!(request.verb, Verb::Update);
    assert_eq!(
        (
            request.api_group.as_str(),
            request.api_version.as_str(),
            request.resource.as_str(),
            request.subresource.as_str(),
            request.namespace.as_str(),
            request.name.as_str(),
            request.field_selector.as_str(),
            request.label_selector.as_str(),
        ),
        (
            "apps",
            "*",
            "deployments",
            "scale",
            "ns",
            "web",
            "spec.x=y",
            "app=web"
        )
    );
    let cleared = "authorizer.group('').resource('pods').name('web').name('')\
        .subresource('log').subresource('').check('list').reason()";
    assert_eq!(value(&authorizer, cleared).await, json!("no rule"));
    let (_, request) = &recorder.asked()[1];
    assert_eq!(request.verb, Verb::List);
    assert_eq!(
        (
            request.api_group.as_str(),
            request.resource.as_str(),
            request.subresource.as_str(),
            request.name.as_str(),
            request.namespace.as_str(),
        ),
        ("", "pods", "", "", "")
    );
}

// R-VER-030: a path check asks about the path with the HTTP verb as written.
#[tokio::test]
async fn path_checks_ask_about_the_path() {
    let recorder = Scripted::new(|_, r| {
        if r.path == "/healthz" {
            Decision::Allow
        } else {
            Decision::NoOpinion(String::new())
        }
    });
    let authorizer = scripted(&recorder, user("alice", &[]));
    let expression = "[authorizer.path('/healthz').check('get').allowed(), \
        authorizer.path('metrics').check('post').allowed()]";
    assert_eq!(value(&authorizer, expression).await, json!([true, false]));
    let asked: Vec<(bool, String, String)> = recorder
        .asked()
        .into_iter()
        .map(|(_, r)| (r.is_resource_request, r.path, r.verb.as_str().to_owned()))
        .collect();
    assert_eq!(
        asked,
        vec![
            (false, "/healthz".to_owned(), "get".to_owned()),
            (false, "metrics".to_owned(), "post".to_owned()),
        ]
    );
}

// R-VER-031: checks about a service account go to the chain as that account.
#[tokio::test]
async fn service_account_checks_act_as_the_account() {
    let recorder = Scripted::new(|u, _| {
        if u.in_group("system:serviceaccounts:ci") {
            Decision::Allow
        } else {
            Decision::NoOpinion(String::new())
        }
    });
    let authorizer = scripted(&recorder, user("alice", &[]));
    let expression = "authorizer.serviceAccount('ci', 'builder').group('').resource('secrets')\
        .check('get').allowed() && !authorizer.group('').resource('secrets').check('get').allowed()";
    assert_eq!(value(&authorizer, expression).await, json!(true));
    let users: Vec<(String, Vec<String>)> = recorder
        .asked()
        .into_iter()
        .map(|(u, _)| (u.name, u.groups))
        .collect();
    assert_eq!(
        users,
        vec![
            (
                "system:serviceaccount:ci:builder".to_owned(),
                vec![
                    "system:serviceaccounts".to_owned(),
                    "system:serviceaccounts:ci".to_owned()
                ]
            ),
            ("alice".to_owned(), vec![]),
        ]
    );
    for (expression, wording) in [
        (
            "authorizer.serviceAccount('ci', 'Not_Valid').group('').resource('pods').check('get')",
            "Invalid service account name",
        ),
        (
            "authorizer.serviceAccount('not.a.label', 'builder').group('').resource('pods').check('get')",
            "Invalid service account namespace",
        ),
    ] {
        let message = failure(&authorizer, expression).await;
        assert!(message.contains(wording), "{expression}: {message}");
    }
}

// R-VER-029: `authorizer.requestResource` checks the resource of the request admitted.
#[tokio::test]
async fn the_request_resource_is_a_resource_check() {
    let recorder = Scripted::new(|_, _| Decision::Allow);
    let mut request = RequestInfo::non_resource("", Verb::Create);
    request.is_resource_request = true;
    request.api_group = "apps".to_owned();
    request.resource = "deployments".to_owned();
    request.subresource = "status".to_owned();
    request.namespace = "ns".to_owned();
    request.name = "web".to_owned();
    let authorizer = scripted(&recorder, user("alice", &[])).with_request_resource(&request);
    let expression = "has(authorizer.requestResource) && \
        authorizer.requestResource.check('delete').allowed()";
    assert_eq!(value(&authorizer, expression).await, json!(true));
    let (_, asked) = &recorder.asked()[0];
    assert_eq!(asked.verb, Verb::Delete);
    assert_eq!(
        (
            asked.api_group.as_str(),
            asked.resource.as_str(),
            asked.subresource.as_str(),
            asked.namespace.as_str(),
            asked.name.as_str(),
        ),
        ("apps", "deployments", "status", "ns", "web")
    );
    let without = scripted(&recorder, user("alice", &[]));
    assert_eq!(
        value(&without, "has(authorizer.requestResource)").await,
        json!(false)
    );
    assert!(matches!(
        run(&without, "authorizer.requestResource.check('get')").await,
        Err(EvalError::Execution(_))
    ));
}

// R-VER-029, R-VER-030: empty paths and resources, and functions on the wrong values, fail
// the evaluation.
#[tokio::test]
async fn misuse_fails_the_evaluation() {
    for (expression, wording) in [
        ("authorizer.path('').check('get')", "path must not be empty"),
        (
            "authorizer.path('  ').check('get')",
            "path must not be empty",
        ),
        (
            "authorizer.group('apps').resource(' ').check('get')",
            "resource must not be empty",
        ),
        ("authorizer.group('apps').check('get')", "ResourceCheck"),
        ("authorizer.path('/x').resource('pods')", "GroupCheck"),
        (
            "authorizer.path('/x').check('get').check('get')",
            "ResourceCheck",
        ),
        (
            "authorizer.group('').resource('pods').allowed()",
            "Decision",
        ),
        ("'text'.group('apps')", "Authorizer"),
    ] {
        let message = failure(&masters(), expression).await;
        assert!(message.contains(wording), "{expression}: {message}");
    }
}

// R-VER-032: a later check that depends on an earlier answer is asked in a later round;
// a repeated check is asked of the chain once.
#[tokio::test]
async fn answers_steer_later_checks() {
    let recorder = Scripted::new(|_, r| {
        if r.path == "/a" {
            Decision::Allow
        } else {
            Decision::NoOpinion(format!("not {}", r.path))
        }
    });
    let authorizer = scripted(&recorder, user("alice", &[]));
    let expression = "authorizer.path('/a').check('get').allowed() ? \
        authorizer.path('/b').check('get').reason() : 'unreachable'";
    assert_eq!(value(&authorizer, expression).await, json!("not /b"));
    let paths: Vec<String> = recorder.asked().into_iter().map(|(_, r)| r.path).collect();
    assert_eq!(paths, vec!["/a", "/b"]);

    let repeated = Scripted::new(|_, _| Decision::Allow);
    let authorizer = scripted(&repeated, user("alice", &[]));
    let expression = format!("{PATH_CHECK}.allowed() && {PATH_CHECK}.allowed()");
    assert_eq!(value(&authorizer, &expression).await, json!(true));
    assert_eq!(repeated.asked().len(), 1);

    let either = "authorizer.path('/b').check('get').allowed() || \
        authorizer.path('/a').check('get').allowed()";
    assert_eq!(
        value(&scripted(&recorder, user("alice", &[])), either).await,
        json!(true)
    );
}

// R-VER-029: each check is charged; the default budget allows two, like Kubernetes'.
#[tokio::test]
async fn checks_are_budgeted() {
    let two = format!("{PATH_CHECK}.allowed() && {POD_CHECK}.allowed()");
    assert_eq!(value(&masters(), &two).await, json!(true));
    let three = format!("{two} && authorizer.path('/livez').check('get').allowed()");
    assert_eq!(
        run(&masters(), &three).await,
        Err(EvalError::CostLimitExceeded)
    );
    let looped = "['a', 'b', 'c'].all(r, authorizer.group('').resource(r).check('get').allowed())";
    assert_eq!(
        run(&masters(), looped).await,
        Err(EvalError::CostLimitExceeded)
    );
    let roomy = masters().with_budget(3 * CHECK_COST);
    assert_eq!(value(&roomy, &three).await, json!(true));
    assert_eq!(value(&roomy, looped).await, json!(true));
    let one = masters().with_budget(CHECK_COST);
    assert_eq!(run(&one, &two).await, Err(EvalError::CostLimitExceeded));
    assert_eq!(
        value(&one, &format!("{PATH_CHECK}.allowed()")).await,
        json!(true)
    );
}

// R-VER-029: checks made in the order of a map's keys (which rounds may visit differently)
// still come to the answer.
#[tokio::test]
async fn checks_in_the_order_of_map_keys() {
    let only_c = Scripted::new(|_, r| {
        if r.path == "/c" {
            Decision::Allow
        } else {
            Decision::NoOpinion(String::new())
        }
    });
    let authorizer = scripted(&only_c, user("alice", &[])).with_budget(3 * CHECK_COST);
    let program = Program::compile(
        "labels.exists(k, authorizer.path('/' + k).check('get').allowed())",
        &["labels", AUTHORIZER_VARIABLE],
    )
    .expect("compiles");
    let labels = json!({"a": "1", "b": "2", "c": "3"});
    for _ in 0..20 {
        let before = only_c.asked().len();
        let result = authorizer.evaluate(&program, &[("labels", &labels)]).await;
        assert_eq!(result, Ok(json!(true)));
        // No check is asked of the chain twice in one evaluation.
        assert!(only_c.asked().len() - before <= 3);
    }
}

// The library needs the evaluation's authorizer: plain evaluation has none to offer.
#[test]
fn plain_evaluation_has_no_authorizer() {
    let program = Program::compile(
        "authorizer.path('/x').check('get').allowed()",
        &["authorizer"],
    )
    .expect("compiles");
    let result = super::super::evaluate(&program, &[("authorizer", &json!({}))]);
    assert!(
        matches!(&result, Err(EvalError::Execution(m)) if m.contains("no authorizer")),
        "{result:?}"
    );
}
