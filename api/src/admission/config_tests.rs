use std::path::PathBuf;

use serde_json::json;

use super::*;
use crate::admission::PodSecurityConfig;

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("apiary-admission-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

const POD_SECURITY: &str = "
apiVersion: pod-security.admission.config.k8s.io/v1
kind: PodSecurityConfiguration
defaults:
  enforce: baseline
  warn: restricted
  warn-version: v1.30
exemptions:
  usernames: [ci]
";

// No CHECKLIST ID (kube-apiserver's --admission-control-config-file): a plugin's
// configuration given inline (YAML) or by a path relative to the file (JSON) reads back as
// the document it is; plugins the file does not name have none.
#[test]
fn inline_and_path_configurations_are_read() {
    let dir = scratch();
    std::fs::write(dir.join("other.json"), r#"{"limit": 3}"#).expect("write");
    let indented = POD_SECURITY.replace('\n', "\n      ");
    let file = dir.join("admission.yaml");
    let text = format!(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n\
         - name: PodSecurity\n  configuration:{indented}\n- name: EventRateLimit\n  path: other.json\n"
    );
    std::fs::write(&file, text).expect("write");
    let config = AdmissionConfig::read(&file).expect("valid file");
    assert_eq!(config.plugin("EventRateLimit"), Some(&json!({"limit": 3})));
    let pod_security = config.plugin("PodSecurity").expect("given");
    assert_eq!(pod_security["defaults"]["warn-version"], "v1.30");
    assert_eq!(config.plugin("ResourceQuota"), None);
    std::fs::remove_dir_all(dir).ok();
}

// No CHECKLIST ID: v1alpha1 is read too, in JSON.
#[test]
fn the_alpha_version_and_json_are_accepted() {
    let text = r#"{"apiVersion":"apiserver.config.k8s.io/v1alpha1","kind":"AdmissionConfiguration","plugins":[{"name":"X","configuration":{"a":1}}]}"#;
    let config = AdmissionConfig::parse(text, Path::new(".")).expect("valid");
    assert_eq!(config.plugin("X"), Some(&json!({"a": 1})));
}

// No CHECKLIST ID: an unreadable file, another kind, a plugin without a name, an unreadable
// path and an invalid PodSecurity configuration each refuse the file, saying why.
#[test]
fn invalid_files_are_refused_with_the_reason() {
    let missing = AdmissionConfig::read(Path::new("/nonexistent/admission.yaml")).unwrap_err();
    assert!(
        missing.to_string().starts_with(
            "unable to read admission control configuration from \"/nonexistent/admission.yaml\""
        ),
        "{missing}"
    );
    let head = "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n";
    let cases = [
        (
            "apiVersion: v1\nkind: AdmissionConfiguration\n",
            "apiVersion \"v1\"",
        ),
        (
            "apiVersion: apiserver.config.k8s.io/v1\nkind: Other\n",
            "must be AdmissionConfiguration",
        ),
        (
            &format!("{head}plugins:\n- path: x\n"),
            "plugins[0].name: Required value",
        ),
        (
            &format!("{head}plugins:\n- name: A\n  path: /nonexistent/a.yaml\n"),
            "/nonexistent/a.yaml",
        ),
        (
            &format!(
                "{head}plugins:\n- name: PodSecurity\n  configuration:\n    apiVersion: \
                 pod-security.admission.config.k8s.io/v1\n    kind: PodSecurityConfiguration\n    \
                 defaults: {{enforce: strict}}\n"
            ),
            "plugins[0] (PodSecurity): defaults.enforce: Invalid value: \"strict\": must be one of \
             privileged, baseline, restricted",
        ),
    ];
    for (text, expected) in cases {
        let error = AdmissionConfig::parse(text, Path::new(".")).unwrap_err();
        assert!(error.contains(expected), "{error} lacks {expected}");
    }
}

// No CHECKLIST ID: PodSecurity's configuration: defaults and exemptions.
#[test]
fn pod_security_configuration_defaults_and_exemptions() {
    let doc: serde_json::Value = serde_saphyr::from_str(POD_SECURITY).expect("yaml");
    let config = PodSecurityConfig::parse(&doc).expect("valid");
    assert_eq!(config.defaults.enforce.to_string(), "baseline:latest");
    assert_eq!(config.defaults.warn.to_string(), "restricted:v1.30");
    assert_eq!(config.defaults.audit.to_string(), "privileged:latest");
    assert_eq!(config.exempt_users, ["ci"]);
    let bad = json!({
        "apiVersion": "pod-security.admission.config.k8s.io/v1",
        "kind": "PodSecurityConfiguration",
        "defaults": {"audit-version": "1.30"},
    });
    let error = PodSecurityConfig::parse(&bad).unwrap_err();
    assert_eq!(
        error,
        "defaults.audit-version: Invalid value: \"1.30\": must be \"latest\" or \"v1.x\""
    );
}
