//! The Pod Security Standards' checks, with pod-security-admission's reasons and details.

use serde_json::Value;
use serde_json::json;

use super::checks::describe;
use super::checks::evaluate;
use super::policy::Level;
use super::policy::LevelVersion;
use super::policy::Policy;
use super::policy::Version;

fn at(level: &str, version: &str) -> LevelVersion {
    LevelVersion {
        level: Level::parse(level).expect("level"),
        version: Version::parse(version).expect("version"),
    }
}

fn judge(policy: &str, pod: &Value) -> String {
    let (level, version) = policy.split_once(':').expect("level:version");
    describe(&evaluate(
        at(level, version),
        &pod["metadata"],
        &pod["spec"],
    ))
}

fn pod(spec: Value) -> Value {
    json!({"metadata": {"name": "p"}, "spec": spec})
}

fn hardened() -> Value {
    json!({
        "allowPrivilegeEscalation": false,
        "capabilities": {"drop": ["ALL"]},
        "runAsNonRoot": true,
        "seccompProfile": {"type": "RuntimeDefault"},
    })
}

// No CHECKLIST ID (Pod Security Standards): a bare container fails every restricted check
// that needs a setting, in Kubernetes' order and words; it passes baseline and privileged.
#[test]
fn a_bare_container_violates_restricted() {
    let bare = pod(json!({"containers": [{"name": "c", "image": "i"}]}));
    assert_eq!(
        judge("restricted:latest", &bare),
        "allowPrivilegeEscalation != false (container \"c\" must set \
         securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container \
         \"c\" must set securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true (pod \
         or container \"c\" must set securityContext.runAsNonRoot=true), seccompProfile (pod or \
         container \"c\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \
         \"Localhost\")"
    );
    assert_eq!(judge("baseline:latest", &bare), "");
    assert_eq!(judge("privileged:latest", &bare), "");
}

// No CHECKLIST ID: a hardened pod passes restricted; pod-level settings cover containers.
#[test]
fn a_hardened_pod_passes_restricted() {
    let hardened_pod = pod(json!({"containers": [
        {"name": "a", "securityContext": hardened()},
        {"name": "b", "securityContext": {"allowPrivilegeEscalation": false,
            "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}}},
    ], "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "Localhost"}},
       "volumes": [{"name": "v", "configMap": {"name": "x"}}, {"name": "e", "emptyDir": {}}]}));
    assert_eq!(judge("restricted:latest", &hardened_pod), "");
}

// No CHECKLIST ID: every baseline check, with its reason and detail.
#[test]
fn baseline_checks_name_what_fails() {
    let bad = json!({
        "metadata": {"name": "p", "annotations": {
            "container.apparmor.security.beta.kubernetes.io/a": "unconfined"}},
        "spec": {
            "hostNetwork": true, "hostPID": true,
            "securityContext": {
                "sysctls": [{"name": "kernel.msgmax", "value": "1"},
                            {"name": "net.ipv4.tcp_syncookies", "value": "1"}],
                "seLinuxOptions": {"type": "spc_t", "user": "u"},
                "seccompProfile": {"type": "Unconfined"},
                "windowsOptions": {"hostProcess": true},
            },
            "initContainers": [{"name": "i", "securityContext": {"privileged": true}}],
            "containers": [
                {"name": "a", "ports": [{"containerPort": 80, "hostPort": 8080},
                                        {"containerPort": 90, "hostPort": 443}],
                 "securityContext": {"capabilities": {"add": ["SYS_ADMIN", "CHOWN", "NET_RAW"]},
                                     "procMount": "Unmasked", "privileged": true},
                 "livenessProbe": {"httpGet": {"host": "10.0.0.1", "port": 80}}},
            ],
            "volumes": [{"name": "h", "hostPath": {"path": "/"}}],
        },
    });
    let expected = [
        "forbidden AppArmor profile (container.apparmor.security.beta.kubernetes.io/a=\"unconfined\")",
        "non-default capabilities (container \"a\" must not include \"NET_RAW\", \"SYS_ADMIN\" in \
         securityContext.capabilities.add)",
        "host namespaces (hostNetwork=true, hostPID=true)",
        "hostPath volumes (volume \"h\")",
        "hostPort (container \"a\" uses hostPorts 443, 8080)",
        "probe or lifecycle host (container \"a\" uses probe or lifecycle host \"10.0.0.1\")",
        "privileged (containers \"i\", \"a\" must not set securityContext.privileged=true)",
        "procMount (container \"a\" must not set securityContext.procMount to \"Unmasked\")",
        "seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type \"spc_t\"; user \
         may not be set)",
        "forbidden sysctls (kernel.msgmax)",
        "hostProcess (pod must not set securityContext.windowsOptions.hostProcess=true)",
        "seccompProfile (pod must not set securityContext.seccompProfile.type to \"Unconfined\")",
    ];
    assert_eq!(judge("baseline:latest", &bad), expected.join(", "));
}

// No CHECKLIST ID: the restricted checks that judge explicit values.
#[test]
fn restricted_checks_name_explicit_values() {
    let mut sc = hardened();
    sc["runAsNonRoot"] = json!(false);
    sc["runAsUser"] = json!(0);
    sc["capabilities"] = json!({"drop": ["ALL"], "add": ["NET_ADMIN"]});
    sc["seccompProfile"] = json!({"type": "Unconfined"});
    let bad = pod(json!({
        "containers": [{"name": "c", "securityContext": sc}],
        "securityContext": {"runAsUser": 0},
        "volumes": [{"name": "n", "nfs": {"server": "s", "path": "/"}},
                    {"name": "g", "gitRepo": {"repository": "r"}}],
    }));
    let expected = [
        "non-default capabilities (container \"c\" must not include \"NET_ADMIN\" in \
         securityContext.capabilities.add)",
        "unrestricted capabilities (container \"c\" must not include \"NET_ADMIN\" in \
         securityContext.capabilities.add)",
        "restricted volume types (volumes [\"g\" \"n\"] have restricted types)",
        "runAsNonRoot != true (container \"c\" must not set securityContext.runAsNonRoot=false)",
        "runAsUser=0 (pod and container \"c\" must not set runAsUser=0)",
        "seccompProfile (container \"c\" must not set securityContext.seccompProfile.type to \
         \"Unconfined\")",
    ];
    assert_eq!(judge("restricted:latest", &bad), expected.join(", "));
}

// No CHECKLIST ID: checks apply from the version that introduced them.
#[test]
fn versions_choose_the_checks() {
    let p = pod(json!({
        "securityContext": {"sysctls": [{"name": "net.ipv4.tcp_rmem", "value": "1"}],
                            "runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "c", "securityContext": {"runAsUser": 0,
            "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}},
            "readinessProbe": {"tcpSocket": {"host": "h", "port": 1}}}],
    }));
    assert_eq!(
        judge("restricted:latest", &p),
        "probe or lifecycle host (container \"c\" uses probe or lifecycle host \"h\"), \
         runAsUser=0 (container \"c\" must not set runAsUser=0)"
    );
    assert_eq!(
        judge("restricted:v1.31", &p),
        "forbidden sysctls (net.ipv4.tcp_rmem), runAsUser=0 (container \"c\" must not set \
         runAsUser=0)"
    );
    assert_eq!(
        judge("baseline:v1.22", &p),
        "forbidden sysctls (net.ipv4.tcp_rmem)"
    );
    let windows = pod(
        json!({"os": {"name": "windows"}, "securityContext": {"runAsNonRoot": true},
        "containers": [{"name": "w"}]}),
    );
    assert_eq!(judge("restricted:latest", &windows), "");
    assert!(judge("restricted:v1.24", &windows).starts_with("allowPrivilegeEscalation"));
}

// No CHECKLIST ID: versions are `latest` or `v1.<minor>`; levels the three names.
#[test]
fn versions_and_levels_parse_as_kubernetes_does() {
    assert_eq!(Version::parse("v1.0"), Some(Version::Minor(0)));
    assert_eq!(Version::parse("v1.29"), Some(Version::Minor(29)));
    for bad in ["1.29", "v1.029", "v2.1", "v1.", "latest ", "v1.99999999999"] {
        assert_eq!(Version::parse(bad), None, "{bad}");
    }
    assert_eq!(Level::parse("Restricted"), None);
}

// No CHECKLIST ID: a namespace's labels set its policy over the defaults; a malformed level
// counts as restricted, a malformed version as latest, each with its field error.
#[test]
fn labels_set_the_policy() {
    let prefix = "pod-security.kubernetes.io/";
    let labels = json!({
        "pod-security.kubernetes.io/enforce": "baseline",
        "pod-security.kubernetes.io/enforce-version": "v1.30",
        "pod-security.kubernetes.io/warn": "strict",
        "pod-security.kubernetes.io/audit-version": "newest",
    });
    let (policy, errors) = Policy::from_labels(labels.as_object(), prefix, &Policy::default());
    assert_eq!(policy.enforce.to_string(), "baseline:v1.30");
    assert_eq!(policy.warn.to_string(), "restricted:latest");
    assert_eq!(policy.audit.to_string(), "privileged:latest");
    let fields: Vec<_> = errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(
        fields,
        [
            "metadata.labels[pod-security.kubernetes.io/audit-version]",
            "metadata.labels[pod-security.kubernetes.io/warn]",
        ]
    );
}
