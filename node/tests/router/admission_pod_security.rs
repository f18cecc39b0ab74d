//! PodSecurity through the router: a namespace's `pod-security.kubernetes.io/*` labels
//! enforce, warn about and audit the Pod Security Standards on pods; pod controllers'
//! templates are only warned about; labels are validated and tightening them warns about the
//! pods already there; the admission configuration file sets defaults and exemptions.

use std::sync::Arc;

use axum::Router;
use http::StatusCode;
use serde_json::Value;
use serde_json::json;

use super::*;
use apiary_api::admission::AdmissionConfig;
use apiary_api::admission::PluginSelection;

const PREFIX: &str = "pod-security.kubernetes.io/";

/// A router over a fresh store with the default plugins but `disable`, configured by the
/// admission configuration `config` (YAML), if any.
async fn pod_security_app(disable: &[&str], config: Option<&str>) -> Router {
    let (storage, _) = backend_in(Flavor::Kubernetes).await;
    let mut api = ApiConfig::new(Flavor::Kubernetes, Arc::new(AlwaysReady));
    let disable: Vec<String> = disable.iter().map(|s| (*s).to_owned()).collect();
    api.admission = PluginSelection::new(&[], &disable).expect("known plugins");
    if let Some(text) = config {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("admission.yaml");
        std::fs::write(&file, text).expect("write");
        api.admission_config = AdmissionConfig::read(&file).expect("valid configuration");
    }
    apiary_api::router(storage, api)
}

async fn labelled(app: &Router, name: &str, labels: &[(&str, &str)]) {
    let labels: serde_json::Map<String, Value> = labels
        .iter()
        .map(|(k, v)| (format!("{PREFIX}{k}"), json!(v)))
        .collect();
    let body = json!({"metadata": {"name": name, "labels": labels}});
    created(app, "/api/v1/namespaces", &body.to_string()).await;
    // The account the `serviceaccount` controller would create.
    let account = json!({"metadata": {"name": "default"}});
    let accounts = format!("/api/v1/namespaces/{name}/serviceaccounts");
    created(app, &accounts, &account.to_string()).await;
}

fn pod(name: &str, security_context: Value) -> String {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {
        "containers": [{"name": "c", "image": "busybox", "securityContext": security_context}],
    }})
    .to_string()
}

fn privileged(name: &str) -> String {
    pod(name, json!({"privileged": true}))
}

fn pods(namespace: &str) -> String {
    format!("/api/v1/namespaces/{namespace}/pods")
}

/// The `Warning` header a warning text is sent as.
fn header(text: &str) -> String {
    format!("299 - \"{}\"", text.replace('"', "\\\""))
}

const PRIVILEGED: &str =
    "privileged (container \"c\" must not set securityContext.privileged=true)";

const RESTRICTED_BARE: &str = "allowPrivilegeEscalation != false (container \"c\" must set \
    securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container \"c\" \
    must set securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true (pod or \
    container \"c\" must set securityContext.runAsNonRoot=true), seccompProfile (pod or \
    container \"c\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \
    \"Localhost\")";

// No CHECKLIST ID (PodSecurity): `enforce=restricted` refuses a privileged pod with
// Kubernetes' 403 listing every violation, and a pod that meets the standard is created.
#[tokio::test]
async fn enforce_refuses_violating_pods_with_every_reason() {
    let app = pod_security_app(&[], None).await;
    labelled(&app, "locked", &[("enforce", "restricted")]).await;
    let refused = admin_call(&app, "POST", &pods("locked"), Some(&privileged("p"))).await;
    let status = assert_status(&refused, 403, "Forbidden");
    assert_eq!(
        status["message"],
        format!(
            "pods \"p\" is forbidden: violates PodSecurity \"restricted:latest\": {PRIVILEGED}, \
             {RESTRICTED_BARE}"
        )
    );
    let hardened = pod(
        "ok",
        json!({"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]},
               "runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}}),
    );
    let made = admin_call(&app, "POST", &pods("locked"), Some(&hardened)).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());
    assert!(warnings(&made).is_empty());
}

// No CHECKLIST ID: `warn=baseline` lets a privileged pod in with Kubernetes' warning; a pinned
// version names itself; updates that change no image are not judged again.
#[tokio::test]
async fn warn_answers_warnings_and_creates() {
    let app = pod_security_app(&[], None).await;
    labelled(
        &app,
        "open",
        &[("warn", "baseline"), ("warn-version", "v1.30")],
    )
    .await;
    let made = admin_call(&app, "POST", &pods("open"), Some(&privileged("p"))).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());
    assert_eq!(
        warnings(&made),
        [header(&format!(
            "would violate PodSecurity \"baseline:v1.30\": {PRIVILEGED}"
        ))]
    );
    let path = format!("{}/p", pods("open"));
    let merge = "application/merge-patch+json";
    let relabelled = send_as(
        &app,
        "PATCH",
        &path,
        merge,
        r#"{"metadata":{"labels":{"a":"b"}}}"#,
    )
    .await;
    assert_eq!(relabelled.status, StatusCode::OK, "{}", relabelled.text());
    assert!(warnings(&relabelled).is_empty());
}

// No CHECKLIST ID: pod controllers' templates are warned about, never refused.
#[tokio::test]
async fn controller_templates_are_warned_about_not_refused() {
    let app = pod_security_app(&[], None).await;
    labelled(
        &app,
        "locked",
        &[("enforce", "restricted"), ("warn", "restricted")],
    )
    .await;
    let template = json!({"metadata": {"labels": {"app": "x"}}, "spec": {
        "containers": [{"name": "c", "image": "busybox"}]}});
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"app": "x"}},
        "template": template}});
    let path = "/apis/apps/v1/namespaces/locked/deployments";
    let made = admin_call(&app, "POST", path, Some(&deployment.to_string())).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());
    assert_eq!(
        warnings(&made),
        [header(&format!(
            "would violate PodSecurity \"restricted:latest\": {RESTRICTED_BARE}"
        ))]
    );
    let cronjob = json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "j"},
        "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {
            "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "b",
            "securityContext": {"privileged": true}}]}}}}}});
    let path = "/apis/batch/v1/namespaces/locked/cronjobs";
    let made = admin_call(&app, "POST", path, Some(&cronjob.to_string())).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());
    let warned = warnings(&made);
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(warned[0].contains("privileged (container"), "{warned:?}");
}

// No CHECKLIST ID: malformed policy labels are refused as Kubernetes refuses them.
#[tokio::test]
async fn malformed_labels_are_invalid() {
    let app = pod_security_app(&[], None).await;
    let body = json!({"metadata": {"name": "typo", "labels": {
        "pod-security.kubernetes.io/enforce": "strict"}}});
    let refused = admin_call(&app, "POST", "/api/v1/namespaces", Some(&body.to_string())).await;
    let status = assert_status(&refused, 422, "Invalid");
    assert_eq!(
        status["message"],
        "Namespace \"typo\" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: \
         Invalid value: \"strict\": must be one of privileged, baseline, restricted"
    );
    let body = json!({"metadata": {"name": "typo", "labels": {
        "pod-security.kubernetes.io/warn-version": "1.30"}}});
    let refused = admin_call(&app, "POST", "/api/v1/namespaces", Some(&body.to_string())).await;
    let status = assert_status(&refused, 422, "Invalid");
    let message = status["message"].as_str().unwrap_or_default();
    assert!(
        message.ends_with("must be \"latest\" or \"v1.x\""),
        "{message}"
    );
}

// No CHECKLIST ID: tightening a namespace's enforced level warns about the pods that violate
// it, grouped by their reasons, naming the first pod and counting the others.
#[tokio::test]
async fn tightening_enforce_warns_about_existing_pods() {
    let app = pod_security_app(&[], None).await;
    labelled(&app, "busy", &[]).await;
    for name in ["b", "a"] {
        created(&app, &pods("busy"), &privileged(name)).await;
    }
    let merge = "application/merge-patch+json";
    let patch = r#"{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"baseline"}}}"#;
    let labelled = send_as(&app, "PATCH", "/api/v1/namespaces/busy", merge, patch).await;
    assert_eq!(labelled.status, StatusCode::OK, "{}", labelled.text());
    assert_eq!(
        warnings(&labelled),
        [
            header(
                "existing pods in namespace \"busy\" violate the new PodSecurity enforce level \
                 \"baseline:latest\""
            ),
            header("a (and 1 other pod): privileged"),
        ]
    );
    let relaxed = r#"{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"privileged"}}}"#;
    let relaxing = send_as(&app, "PATCH", "/api/v1/namespaces/busy", merge, relaxed).await;
    assert!(warnings(&relaxing).is_empty());
}

const CONFIG: &str = "
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults:
      enforce: baseline
    exemptions:
      namespaces: [free]
";

// No CHECKLIST ID: the configuration's defaults apply to unlabelled namespaces, its exempt
// namespaces are not judged, and labels still override the defaults.
#[tokio::test]
async fn configured_defaults_and_exemptions_apply() {
    let app = pod_security_app(&[], Some(CONFIG)).await;
    labelled(&app, "plain", &[]).await;
    labelled(&app, "free", &[]).await;
    labelled(&app, "loose", &[("enforce", "privileged")]).await;
    let refused = admin_call(&app, "POST", &pods("plain"), Some(&privileged("p"))).await;
    let status = assert_status(&refused, 403, "Forbidden");
    assert_eq!(
        status["message"],
        format!("pods \"p\" is forbidden: violates PodSecurity \"baseline:latest\": {PRIVILEGED}")
    );
    for namespace in ["free", "loose"] {
        let made = admin_call(&app, "POST", &pods(namespace), Some(&privileged("p"))).await;
        assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());
    }
}

// No CHECKLIST ID: with PodSecurity disabled, labels have no effect.
#[tokio::test]
async fn disabled_pod_security_judges_nothing() {
    let app = pod_security_app(&["PodSecurity"], None).await;
    labelled(&app, "locked", &[("enforce", "restricted")]).await;
    let made = admin_call(&app, "POST", &pods("locked"), Some(&privileged("p"))).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text());
}
