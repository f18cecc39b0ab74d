//! Tests of the authorization configuration file: every validation rule kube-apiserver
//! applies, in its wording, and the modes a valid file gives.

use std::io::Write;

use super::*;

const HEAD: &str = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\n";

fn kubeconfig() -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().expect("temp file");
    file.write_all(b"apiVersion: v1\nkind: Config\n")
        .expect("written");
    file
}

/// A configuration of one webhook whose settings are `fields` (YAML lines under `webhook:`).
fn webhook(fields: &str) -> String {
    let indented: String = fields.lines().map(|l| format!("    {l}\n")).collect();
    format!("{HEAD}authorizers:\n- type: Webhook\n  name: hook\n  webhook:\n{indented}")
}

/// The settings every webhook needs, plus `extra`, with the kubeconfig at `path`.
fn complete(path: &Path, extra: &str) -> String {
    format!(
        "timeout: 3s\nsubjectAccessReviewVersion: v1\nfailurePolicy: Deny\nconnectionInfo:\n  type: KubeConfigFile\n  kubeConfigFile: {}\n{extra}",
        path.display()
    )
}

fn errors(text: &str) -> Vec<String> {
    parse(text, Flavor::Kubernetes).expect_err("invalid")
}

// R-ACC-162, R-ACC-199: a complete file gives its modes in order, the TTLs defaulted to 5m and
// 30s; JSON and every version kube-apiserver reads are accepted.
#[test]
fn a_valid_file_gives_its_modes() {
    let file = kubeconfig();
    let text = format!(
        "{}- type: RBAC\n  name: rbac\n- type: Node\n  name: node\n",
        webhook(&complete(
            file.path(),
            "matchConditionSubjectAccessReviewVersion: v1\nmatchConditions:\n- expression: has(request.resourceAttributes)\n"
        ))
    );
    let modes = parse(&text, Flavor::Kubernetes).expect("valid");
    let Mode::Webhook(hook) = &modes[0] else {
        panic!("a webhook first");
    };
    assert_eq!(hook.name, "hook");
    assert_eq!(hook.timeout, Duration::from_secs(3));
    assert_eq!(hook.authorized_ttl, Duration::from_secs(300));
    assert_eq!(hook.unauthorized_ttl, Duration::from_secs(30));
    assert_eq!(hook.failure_policy, FailurePolicy::Deny);
    assert_eq!(hook.version, SarVersion::V1);
    assert_eq!(hook.match_conditions, ["has(request.resourceAttributes)"]);
    assert_eq!(
        modes[1..],
        [Mode::Fixed(ModeType::Rbac), Mode::Fixed(ModeType::Node)]
    );
    for version in ["v1beta1", "v1alpha1"] {
        let json = format!(
            r#"{{"apiVersion":"apiserver.config.k8s.io/{version}","kind":"AuthorizationConfiguration","authorizers":[{{"type":"AlwaysDeny","name":"alwaysdeny"}}]}}"#
        );
        assert_eq!(
            parse(&json, Flavor::Kubernetes).expect("valid"),
            [Mode::Fixed(ModeType::AlwaysDeny)]
        );
    }
    assert!(
        parse(&text, Flavor::Platform).is_err(),
        "the flavor's group"
    );
}

// R-ACC-199: the authorizers' rules: at least one, type known and not repeated (but Webhook),
// name required, unique, a DNS subdomain, the mode's lower-case name unless a webhook, and
// `webhook` only with type Webhook.
#[test]
fn authorizer_rules() {
    assert_eq!(
        errors(&format!("{HEAD}authorizers: []\n")),
        ["authorizers: Required value: at least one authorization mode must be defined"]
    );
    let cases = [
        ("- name: x\n", "authorizers[0].type: Required value"),
        (
            "- type: Magic\n  name: x\n",
            r#"authorizers[0].type: Unsupported value: "Magic": supported values: "ABAC", "AlwaysAllow", "AlwaysDeny", "Node", "RBAC", "Webhook""#,
        ),
        (
            "- type: RBAC\n  name: rbac\n- type: RBAC\n  name: rbac\n",
            r#"authorizers[1].type: Duplicate value: "RBAC""#,
        ),
        ("- type: RBAC\n", "authorizers[0].name: Required value"),
        (
            "- type: RBAC\n  name: rbac\n- type: Node\n  name: rbac\n",
            r#"authorizers[1].name: Duplicate value: "rbac""#,
        ),
        (
            "- type: RBAC\n  name: Rbac\n",
            "expected name rbac for authorizer RBAC instead of Rbac",
        ),
        (
            "- type: Webhook\n  name: hook\n",
            "authorizers[0].webhook: Required value: required when type=Webhook",
        ),
        (
            "- type: RBAC\n  name: rbac\n  webhook: {}\n",
            r#"authorizers[0].webhook: Invalid value: "non-null": may only be specified when type=Webhook"#,
        ),
    ];
    for (authorizers, expected) in cases {
        let found = errors(&format!("{HEAD}authorizers:\n{authorizers}"));
        assert!(
            found.iter().any(|e| e == expected),
            "{authorizers}: {found:?}"
        );
    }
    let bad_name = errors(&format!(
        "{HEAD}authorizers:\n- type: Webhook\n  name: Not_A_Name\n  webhook: {{}}\n"
    ));
    assert!(
        bad_name[0].starts_with(
            r#"authorizers[0].name: Invalid value: "Not_A_Name": authorizer name is invalid"#
        ),
        "{bad_name:?}"
    );
    let two_webhooks = kubeconfig();
    let one = webhook(&complete(two_webhooks.path(), ""));
    let text = format!(
        "{one}- type: Webhook\n  name: other\n  webhook:\n{}",
        complete(two_webhooks.path(), "")
            .lines()
            .map(|l| format!("    {l}\n"))
            .collect::<String>()
    );
    assert_eq!(parse(&text, Flavor::Kubernetes).expect("valid").len(), 2);
}

// R-ACC-199: a webhook's own rules: timeout required and at most 30s, TTLs positive, the
// review versions, the failure policy, the connection (a kubeconfig at an absolute path that is
// a file; in-cluster refused here).
#[test]
fn webhook_rules() {
    let file = kubeconfig();
    let path = file.path().display().to_string();
    let connection = format!("connectionInfo:\n  type: KubeConfigFile\n  kubeConfigFile: {path}\n");
    let base = |skip: &str| {
        [
            "timeout: 3s\n".to_owned(),
            "subjectAccessReviewVersion: v1\n".to_owned(),
            "failurePolicy: Deny\n".to_owned(),
            connection.clone(),
        ]
        .into_iter()
        .filter(|l| !l.starts_with(skip))
        .collect::<String>()
    };
    let cases = [
        (base("timeout"), "authorizers[0].timeout: Required value"),
        (
            base("timeout") + "timeout: 31s\n",
            r#"authorizers[0].timeout: Invalid value: "31s": must be > 0s and <= 30s"#,
        ),
        (
            base("timeout") + "timeout: -1s\n",
            r#"authorizers[0].timeout: Invalid value: "-1s": must be > 0s and <= 30s"#,
        ),
        (
            base("") + "authorizedTTL: -5s\n",
            r#"authorizers[0].authorizedTTL: Invalid value: "-5s": must be > 0s"#,
        ),
        (
            base("") + "unauthorizedTTL: soon\n",
            r#"authorizers[0].unauthorizedTTL: Invalid value: "soon": time: invalid duration "soon""#,
        ),
        (
            base("subjectAccessReviewVersion"),
            "authorizers[0].subjectAccessReviewVersion: Required value",
        ),
        (
            base("subjectAccessReviewVersion") + "subjectAccessReviewVersion: v2\n",
            r#"authorizers[0].subjectAccessReviewVersion: Unsupported value: "v2": supported values: "v1", "v1beta1""#,
        ),
        (
            base("") + "matchConditions:\n- expression: 'true'\n",
            "authorizers[0].matchConditionSubjectAccessReviewVersion: Required value: required if match conditions are specified",
        ),
        (
            base("") + "matchConditionSubjectAccessReviewVersion: v1beta1\n",
            r#"authorizers[0].matchConditionSubjectAccessReviewVersion: Unsupported value: "v1beta1": supported values: "v1""#,
        ),
        (
            base("failurePolicy"),
            "authorizers[0].failurePolicy: Required value",
        ),
        (
            base("failurePolicy") + "failurePolicy: Allow\n",
            r#"authorizers[0].failurePolicy: Unsupported value: "Allow": supported values: "NoOpinion", "Deny""#,
        ),
        (
            base("connectionInfo"),
            "authorizers[0].connectionInfo.type: Required value",
        ),
        (
            base("connectionInfo") + "connectionInfo:\n  type: KubeConfigFile\n",
            "authorizers[0].connectionInfo.kubeConfigFile: Required value",
        ),
        (
            base("connectionInfo")
                + "connectionInfo:\n  type: KubeConfigFile\n  kubeConfigFile: rel.yaml\n",
            r#"authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "rel.yaml": must be an absolute path"#,
        ),
        (
            base("connectionInfo")
                + "connectionInfo:\n  type: KubeConfigFile\n  kubeConfigFile: /\n",
            r#"authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "/": must be a regular file"#,
        ),
        (
            base("connectionInfo") + "connectionInfo:\n  type: InClusterConfig\n",
            r#"authorizers[0].connectionInfo.type: Unsupported value: "InClusterConfig": this API server has no in-cluster configuration; supported values: "KubeConfigFile""#,
        ),
        (
            base("connectionInfo") + "connectionInfo:\n  type: Remote\n",
            r#"authorizers[0].connectionInfo.type: Unsupported value: "Remote": supported values: "InClusterConfig", "KubeConfigFile""#,
        ),
    ];
    for (fields, expected) in cases {
        let found = errors(&webhook(&fields));
        assert!(found.iter().any(|e| e == expected), "{fields}: {found:?}");
    }
    let missing = errors(&webhook(
        &(base("connectionInfo")
            + "connectionInfo:\n  type: KubeConfigFile\n  kubeConfigFile: /nonexistent/k.yaml\n"),
    ));
    assert!(missing[0].contains("error loading file"), "{missing:?}");
}

// R-ACC-091, R-ACC-199: at most 64 match conditions, each present, not repeated and compiling
// over `request` only.
#[test]
fn match_condition_rules() {
    let file = kubeconfig();
    let with = |conditions: &str| {
        webhook(&complete(
            file.path(),
            &format!(
                "matchConditionSubjectAccessReviewVersion: v1\nmatchConditions:\n{conditions}"
            ),
        ))
    };
    let many: String = (0..=MAX_MATCH_CONDITIONS)
        .map(|i| format!("- expression: 'request.user != \"u{i}\"'\n"))
        .collect();
    assert_eq!(
        errors(&with(&many)),
        ["authorizers[0].matchConditions: Too many: 65: must have at most 64 items"]
    );
    let cases = [
        (
            "- expression: ' '\n",
            "authorizers[0].matchConditions[0].expression: Required value",
        ),
        (
            "- expression: 'true'\n- expression: 'true'\n",
            r#"authorizers[0].matchConditions[1].expression: Duplicate value: "true""#,
        ),
        (
            "- expression: 'object.x == 1'\n",
            r#"authorizers[0].matchConditions[0].expression: Invalid value: "object.x == 1": compilation failed: undeclared reference to 'object'"#,
        ),
    ];
    for (conditions, expected) in cases {
        let found = errors(&with(conditions));
        assert!(
            found.iter().any(|e| e == expected),
            "{conditions}: {found:?}"
        );
    }
    let sixty_four: String = (0..MAX_MATCH_CONDITIONS)
        .map(|i| format!("- expression: 'request.user != \"u{i}\"'\n"))
        .collect();
    assert!(parse(&with(&sixty_four), Flavor::Kubernetes).is_ok());
}

#[test]
fn go_durations_parse() {
    assert_eq!(parse_go_duration("1m30s"), Ok(90_000_000_000));
    assert_eq!(parse_go_duration("1.5s"), Ok(1_500_000_000));
    assert_eq!(parse_go_duration("250ms"), Ok(250_000_000));
    assert_eq!(parse_go_duration("-2s"), Ok(-2_000_000_000));
    assert_eq!(parse_go_duration("0"), Ok(0));
    assert!(parse_go_duration("5").is_err());
    assert!(parse_go_duration("5d").is_err());
}
