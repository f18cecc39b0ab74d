//! Tests of the authorization flags (kube-apiserver's checks, the defaults, what `apiary dev`
//! passes on) and of the order in which the built chain consults its modes.

use std::io::Write;

use apiary_api::auth::Attributes;
use apiary_api::auth::Authorizer;
use apiary_api::auth::Decision;
use apiary_api::auth::UserInfo;
use apiary_api::request::QueryParams;
use apiary_api::request::RequestInfo;
use clap::Parser;
use http::Method;

use super::*;
use crate::backend::ReplicaStorage;
use crate::testing::LocalReplica;

#[derive(Parser)]
struct Flags {
    #[command(flatten)]
    authz: AuthzArgs,
}

fn parse(args: &[&str]) -> AuthzArgs {
    Flags::try_parse_from(std::iter::once("apiary").chain(args.iter().copied()))
        .expect("valid flags")
        .authz
}

fn settings(args: &[&str]) -> Result<AuthorizationSettings, AuthzError> {
    AuthorizationSettings::from_args(&parse(args), Flavor::Kubernetes)
}

fn problems(args: &[&str]) -> Vec<String> {
    match settings(args) {
        Err(AuthzError::Flags(problems)) => problems,
        other => panic!("{args:?}: {other:?}"),
    }
}

fn temp_file(text: &str) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().expect("temp file");
    file.write_all(text.as_bytes()).expect("written");
    file
}

// R-ACC-159, R-ACC-163: the six modes parse, in the order given; Node,RBAC without the flag.
#[test]
fn modes_parse_in_order_with_node_rbac_by_default() {
    assert_eq!(
        settings(&[]).expect("default").modes(),
        [Mode::Fixed(ModeType::Node), Mode::Fixed(ModeType::Rbac)]
    );
    let policy = temp_file("");
    let kubeconfig = temp_file("");
    let policy_flag = format!("--authorization-policy-file={}", policy.path().display());
    let webhook_flag = format!(
        "--authorization-webhook-config-file={}",
        kubeconfig.path().display()
    );
    let all = settings(&[
        "--authorization-mode=AlwaysDeny,Webhook,RBAC,ABAC,Node,AlwaysAllow",
        &policy_flag,
        &webhook_flag,
        "--authorization-webhook-version=v1",
        "--authorization-webhook-cache-authorized-ttl=7s",
    ])
    .expect("valid");
    let kinds: Vec<&str> = all
        .modes()
        .iter()
        .map(|m| match m {
            Mode::Fixed(kind) => kind.as_str(),
            Mode::Webhook(_) => "Webhook",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "AlwaysDeny",
            "Webhook",
            "RBAC",
            "ABAC",
            "Node",
            "AlwaysAllow"
        ]
    );
    let Mode::Webhook(webhook) = &all.modes()[1] else {
        panic!("a webhook");
    };
    assert_eq!(webhook.name, "webhook");
    assert_eq!(webhook.version, SarVersion::V1);
    assert_eq!(webhook.authorized_ttl, Duration::from_secs(7));
    assert_eq!(webhook.unauthorized_ttl, Duration::from_secs(30));
    assert_eq!(webhook.timeout, Duration::from_secs(30));
    assert_eq!(webhook.failure_policy, FailurePolicy::NoOpinion);
}

// R-ACC-199: the webhook flags' defaults are v1beta1, 5m and 30s.
#[test]
fn webhook_flag_defaults() {
    let kubeconfig = temp_file("");
    let flag = format!(
        "--authorization-webhook-config-file={}",
        kubeconfig.path().display()
    );
    let modes = settings(&["--authorization-mode=Webhook", &flag]).expect("valid");
    let Mode::Webhook(webhook) = &modes.modes()[0] else {
        panic!("a webhook");
    };
    assert_eq!(webhook.version, SarVersion::V1beta1);
    assert_eq!(webhook.authorized_ttl, Duration::from_secs(300));
    assert_eq!(webhook.unauthorized_ttl, Duration::from_secs(30));
}

// R-ACC-159, R-ACC-166: unknown and repeated modes, a mode without its file and a file without
// its mode are start-up errors, in kube-apiserver's words.
#[test]
fn bad_mode_flags_are_refused() {
    assert_eq!(
        problems(&["--authorization-mode=RBAC,Magic"]),
        [r#"authorization-mode "Magic" is not a valid mode"#]
    );
    assert_eq!(
        problems(&["--authorization-mode=RBAC,RBAC"]),
        [r#"authorization-mode ["RBAC", "RBAC"] has mode specified more than once"#]
    );
    assert_eq!(
        problems(&["--authorization-mode=ABAC"]),
        ["authorization-mode ABAC's authorization policy file not passed"]
    );
    assert_eq!(
        problems(&["--authorization-mode=Webhook"]),
        ["authorization-mode Webhook's authorization config file not passed"]
    );
    assert_eq!(
        problems(&["--authorization-policy-file=/p.jsonl"]),
        ["cannot specify --authorization-policy-file without mode ABAC"]
    );
    assert_eq!(
        problems(&["--authorization-webhook-config-file=/k.yaml"]),
        ["cannot specify --authorization-webhook-config-file without mode Webhook"]
    );
    assert!(Flags::try_parse_from(["apiary", "--authorization-webhook-version=v2"]).is_err());
}

// R-ACC-162: the configuration file with any of the flags it replaces stops start-up.
#[test]
fn the_file_and_the_mode_flags_are_exclusive() {
    let file = temp_file(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: RBAC\n  name: rbac\n",
    );
    let config = format!("--authorization-config={}", file.path().display());
    assert!(settings(&[&config]).is_ok());
    for flag in [
        "--authorization-mode=RBAC",
        "--authorization-webhook-config-file=/k",
        "--authorization-webhook-version=v1",
        "--authorization-webhook-cache-authorized-ttl=1s",
        "--authorization-webhook-cache-unauthorized-ttl=1s",
    ] {
        assert_eq!(
            problems(&[&config, flag]),
            [
                "--authorization-config can not be specified simultaneously with --authorization-mode, --authorization-webhook-*"
            ],
            "{flag}"
        );
    }
    let abac = temp_file(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: ABAC\n  name: abac\n",
    );
    assert_eq!(
        problems(&[&format!("--authorization-config={}", abac.path().display())]),
        ["authorization-mode ABAC's authorization policy file not passed"]
    );
    let missing = settings(&["--authorization-config=/nonexistent/authz.yaml"]);
    assert!(
        matches!(missing, Err(AuthzError::File { .. })),
        "{missing:?}"
    );
}

// R-ACC-146: anonymous requests are let in unless AlwaysAllow is a mode.
#[test]
fn always_allow_turns_anonymous_off() {
    assert!(settings(&[]).expect("default").anonymous_allowed());
    assert!(
        settings(&["--authorization-mode=AlwaysDeny"])
            .expect("valid")
            .anonymous_allowed()
    );
    assert!(
        !settings(&["--authorization-mode=AlwaysAllow"])
            .expect("valid")
            .anonymous_allowed()
    );
}

#[test]
fn dev_passes_the_flags_on() {
    let args = parse(&[
        "--authorization-mode=Webhook,RBAC",
        "--authorization-webhook-config-file=/k.yaml",
        "--authorization-webhook-version=v1",
        "--authorization-webhook-cache-authorized-ttl=5s",
        "--authorization-webhook-cache-unauthorized-ttl=2s",
    ]);
    let flags: Vec<String> = args
        .replica_flags()
        .into_iter()
        .map(|f| f.to_string_lossy().into_owned())
        .collect();
    let again = parse(&flags.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(again, args);
    assert_eq!(parse(&[]).replica_flags(), Vec::<OsString>::new());
}

async fn decide(chain: &ModeChain, user: &str) -> Decision {
    let user = UserInfo {
        name: user.to_owned(),
        ..UserInfo::default()
    };
    let request = RequestInfo::parse(
        &Method::GET,
        "/api/v1/namespaces/a/pods",
        &QueryParams::default(),
    );
    chain
        .authorize(&Attributes {
            user: &user,
            request: &request,
        })
        .await
}

async fn chain_of(modes: &str) -> Arc<ModeChain> {
    let flag = format!("--authorization-mode={modes}");
    settings(&[&flag])
        .expect("valid")
        .start(StartParts {
            flavor: Flavor::Kubernetes,
            storage: Arc::new(ReplicaStorage::new(Arc::new(LocalReplica::default()))),
            with_selectors: true,
            metrics: &Metrics::default(),
            replica: "r1",
            stop: CancellationToken::new(),
        })
        .expect("started")
}

// R-ACC-160, R-ACC-161, R-ACC-163: the first mode with an opinion ends the chain: AlwaysAllow
// before AlwaysDeny allows, after it denies; RBAC and Node without grants pass on, so
// AlwaysAllow after them still allows and nothing else is no opinion.
#[tokio::test]
async fn the_first_mode_with_an_opinion_decides() {
    assert_eq!(
        decide(&*chain_of("AlwaysAllow,AlwaysDeny").await, "u").await,
        Decision::Allow
    );
    assert!(matches!(
        decide(&*chain_of("AlwaysDeny,AlwaysAllow").await, "u").await,
        Decision::Deny(_)
    ));
    assert_eq!(
        decide(&*chain_of("RBAC,Node,AlwaysAllow").await, "u").await,
        Decision::Allow
    );
    assert!(matches!(
        decide(&*chain_of("Node,RBAC").await, "u").await,
        Decision::NoOpinion(_)
    ));
}
